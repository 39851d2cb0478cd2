! onename: the kinds of Fortran procedure whose region names DWARF alone
! told before hmbtrace's GCC plugin wrote them into the object: a module
! procedure, a procedure contained in it with an OpenMP loop, an external
! procedure, one contained in the main program, and the main program. A
! second unit (onename_other.f90) contains a procedure named inner too:
! both are inner.0, local symbols of their objects.
module demo
  implicit none
contains
  subroutine mod_proc(x)
    real, intent(inout) :: x
    x = x + 1
    call inner(x)
  contains
    subroutine inner(y)
      real, intent(inout) :: y
      real :: a(64)
      integer :: i
      a = y
      !$omp parallel do
      do i = 1, 64
        a(i) = a(i) * 2 + i
      end do
      y = sum(a) / 64
    end subroutine
  end subroutine
end module

subroutine ext_proc(x)
  real :: x
  x = x * 0.5
end subroutine

program prog
  use demo
  real :: x = 1
  call mod_proc(x)
  call ext_proc(x)
  call inner(x)
  call other(x)
  print '(f12.4)', x
contains
  subroutine inner(y)
    real, intent(inout) :: y
    y = y - 1
  end subroutine
end program
