! randmain calls randlc, in another file, ten times.
program randmain
  implicit none
  double precision :: x, s
  double precision, external :: randlc
  integer :: i
  x = 3.0d0
  s = 0
  do i = 1, 10
    s = s + randlc(x, 5.0d0)
  end do
  print '(f12.6)', s
end program randmain
