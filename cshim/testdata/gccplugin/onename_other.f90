! onename_other: an external procedure that contains a procedure named
! inner, as the main program of onename.f90 does.
subroutine other(x)
  real :: x
  call inner(x)
contains
  subroutine inner(y)
    real :: y
    y = y + 3
  end subroutine
end subroutine
