! nulname: Fortran names that hold a NUL. A trailing c_null_char (a C
! habit) ends the name; one inside cuts the name there and is an error
! the library reports (printed by the C helper nulname_err.c).
program nulname
  use hmbtrace
  use iso_c_binding, only: c_null_char
  implicit none
  interface
    subroutine print_last_error() bind(C, name="print_last_error")
    end subroutine
  end interface
  integer :: trail, inside
  trail = hmb_region("trail" // c_null_char)
  call print_last_error()
  inside = hmb_region("in" // c_null_char // "side")
  call print_last_error()
  call hmb_enter(trail)
  call hmb_leave(trail)
  call hmb_enter(inside)
  call hmb_leave(inside)
end program
