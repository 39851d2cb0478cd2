! afterinline: the Fortran program of hmbtrace's GCC plugin test; see kern.f90.
program afterinline
  use kern
  implicit none
  integer, parameter :: n = 1000, steps = 20
  real(8) :: a(n), s, total
  integer :: i, k
  do i = 1, n
    a(i) = mod(i, 7)
  end do
  total = 0
  do k = 1, steps
    call work(a, s)
    total = total + s
  end do
  print '(a, i0, a, f0.1)', 'afterinline: steps=', steps, ' total=', total
end program afterinline
