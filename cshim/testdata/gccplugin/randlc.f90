! randlc: an external procedure, as NPB's random number generator is:
! gfortran's symbol is randlc_, its name in the source randlc.
double precision function randlc(x, a)
  implicit none
  double precision, intent(inout) :: x
  double precision, intent(in) :: a
  x = mod(x * a, 46.0d0) + 1.0d0
  randlc = x / 47.0d0
end function randlc
