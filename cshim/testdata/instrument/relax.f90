! relax: a Fortran code with a module of procedures, no hmbtrace call in
! it: hmbtrace-instrument gfortran instruments it.
module relax_mod
  implicit none
contains
  subroutine sweep(u, n)
    integer, intent(in) :: n
    real(8), intent(inout) :: u(n)
    integer :: i
    do i = 2, n - 1
      u(i) = 0.5d0 * (u(i - 1) + u(i + 1))
    end do
  end subroutine sweep

  real(8) function norm(u, n)
    integer, intent(in) :: n
    real(8), intent(in) :: u(n)
    norm = sqrt(sum(u * u))
  end function norm
end module relax_mod

program relax
  use relax_mod
  implicit none
  integer, parameter :: n = 1000, steps = 50
  real(8) :: u(n)
  integer :: s
  u = 0d0
  u(n) = 1d0
  do s = 1, steps
    call sweep(u, n)
  end do
  print '(a, i0, a, es12.5)', 'relax: steps=', steps, ' norm=', norm(u, n)
end program relax
