! names: the kinds of procedure gfortran names in its own way, for the
! symbolizer's tests: module procedures (one a separate module procedure
! of a submodule), a contained procedure, an external procedure, the main
! program and a procedure contained in it; with -fopenmp, the bodies of
! parallel loops the compiler outlines from an external procedure and from
! the main program.
module advec_mom_kernel_mod
  implicit none
  interface
    module subroutine sub_impl(x)
      real, intent(inout) :: x
    end subroutine
  end interface
contains
  subroutine advec_mom_kernel(x)
    real, intent(inout) :: x
    x = x + 1
    call inner(x)
  contains
    subroutine inner(y)
      real, intent(inout) :: y
      y = y * 2
    end subroutine
  end subroutine
  function Mixed_Case(a) result(b)
    integer :: a, b
    b = a + 1
  end function
end module

submodule (advec_mom_kernel_mod) impl_sm
contains
  module subroutine sub_impl(x)
    real, intent(inout) :: x
    x = x - 1
  end subroutine
end submodule

subroutine external_sub(x)
  real :: x
  real :: a(64)
  integer :: i
  a = x
  !$omp parallel do
  do i = 1, 64
    a(i) = a(i) * 3
  end do
  x = sum(a)
end subroutine

program heat_main
  use advec_mom_kernel_mod
  real :: x = 1
  real :: b(64)
  integer :: i
  b = 2
  !$omp parallel do
  do i = 1, 64
    b(i) = b(i) + i
  end do
  x = x + b(1)
  call advec_mom_kernel(x)
  call sub_impl(x)
  call external_sub(x)
  call internal_of_main()
  print *, x, mixed_case(3)
contains
  subroutine internal_of_main()
    print *, 'internal'
  end subroutine
end program
