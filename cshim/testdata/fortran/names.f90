! names: the kinds of procedure gfortran names in its own way, for the
! symbolizer's tests: module procedures (one a separate module procedure
! of a submodule), a contained procedure, an external procedure, the main
! program and a procedure contained in it.
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
  x = x * 3
end subroutine

program heat_main
  use advec_mom_kernel_mod
  real :: x = 1
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
