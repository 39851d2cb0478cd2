! hmbtrace.f90 - the Fortran interface of hmbtrace, an in-memory event tracer.
!
!   use hmbtrace
!   integer(c_int32_t) :: solve
!   solve = hmb_region("solve")        ! once; idempotent by name
!   call hmb_enter(solve)
!   ...
!   call hmb_leave(solve)
!
! Build:  gfortran prog.f90 $(pkg-config --cflags --libs hmbtrace)
!
! The module holds interfaces only (ISO_C_BINDING, and Fortran 2018 C
! descriptors for strings): it needs no object file of its own, only
! libhmbtrace. hmbtrace.mod depends on the compiler version; with another
! compiler than the one the library was built with, compile this file
! (gfortran -c hmbtrace.f90) and use the .mod it writes. The C header
! hmbtrace.h documents every function.
module hmbtrace
  use, intrinsic :: iso_c_binding, only: c_int, c_int32_t, c_int64_t
  implicit none
  private
  public :: c_int32_t
  public :: hmb_init, hmb_finalize, hmb_region, hmb_enter, hmb_leave
  public :: hmb_send, hmb_recv, hmb_thread_name, hmb_phase

  interface
    ! Starts the measurement (the first probe does it otherwise).
    ! ierr: 0 on success, -1 on failure (the reason is printed by the library
    ! when a probe started it, else returned by the C hmb_last_error).
    subroutine hmb_init(ierr) bind(C, name="hmb_init_f")
      import :: c_int
      integer(c_int), intent(out), optional :: ierr
    end subroutine hmb_init

    ! Writes the trace; also done at program exit.
    subroutine hmb_finalize(ierr) bind(C, name="hmb_finalize_f")
      import :: c_int
      integer(c_int), intent(out), optional :: ierr
    end subroutine hmb_finalize

    ! The region named name (trailing blanks ignored): call it once per
    ! region and keep the id. 0 when measurement is off.
    function hmb_region(name) bind(C, name="hmb_region_f") result(region)
      import :: c_int32_t
      character(len=*), intent(in) :: name
      integer(c_int32_t) :: region
    end function hmb_region

    subroutine hmb_enter(region) bind(C, name="hmb_enter")
      import :: c_int32_t
      integer(c_int32_t), value, intent(in) :: region
    end subroutine hmb_enter

    subroutine hmb_leave(region) bind(C, name="hmb_leave")
      import :: c_int32_t
      integer(c_int32_t), value, intent(in) :: region
    end subroutine hmb_leave

    ! Declares region as the progress loop: each leave of it ends one
    ! iteration of the dynamic phase profile.
    subroutine hmb_phase(region) bind(C, name="hmb_phase")
      import :: c_int32_t
      integer(c_int32_t), value, intent(in) :: region
    end subroutine hmb_phase

    ! A message to or from MPI world rank peer.
    subroutine hmb_send(peer, tag, bytes) bind(C, name="hmb_send")
      import :: c_int, c_int32_t, c_int64_t
      integer(c_int), value, intent(in) :: peer
      integer(c_int32_t), value, intent(in) :: tag
      integer(c_int64_t), value, intent(in) :: bytes
    end subroutine hmb_send

    subroutine hmb_recv(peer, tag, bytes) bind(C, name="hmb_recv")
      import :: c_int, c_int32_t, c_int64_t
      integer(c_int), value, intent(in) :: peer
      integer(c_int32_t), value, intent(in) :: tag
      integer(c_int64_t), value, intent(in) :: bytes
    end subroutine hmb_recv

    ! Names the calling thread's location (an OpenMP thread, say).
    subroutine hmb_thread_name(name) bind(C, name="hmb_thread_name_f")
      character(len=*), intent(in) :: name
    end subroutine hmb_thread_name
  end interface
end module hmbtrace
