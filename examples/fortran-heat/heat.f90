! fortran-heat: explicit finite differences for the 2-D heat equation on a
! square plate, annotated with hmbtrace regions through the Fortran module.
!
!   make                                   (PKG_CONFIG_PATH=<hmbtrace>/lib/pkgconfig)
!   ./fortran-heat [n [steps]]             defaults: 128 500
!   hmbtrace summary hmb-out/fortran-heat.0.hmb
!
! The plate starts cold with a hot square in the middle; its edges are held
! cold. Every step updates the interior from the old field (step), resets
! the edges (boundary), and every 50 steps and at the end the total heat is
! measured (energy).
program fortran_heat
  use hmbtrace
  implicit none
  integer :: n = 128, steps = 500, k, ierr
  real(8), allocatable :: u(:, :), v(:, :)
  real(8), parameter :: alpha = 0.2d0
  integer(c_int32_t) :: r_main, r_init, r_step, r_boundary, r_energy
  character(len=32) :: arg
  real(8) :: e

  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) steps
  end if
  if (n < 3 .or. steps < 1) then
    print '(a)', 'usage: fortran-heat [n>=3 [steps>=1]]'
    stop 2
  end if

  call hmb_init(ierr)
  if (ierr /= 0) then
    print '(a)', 'fortran-heat: hmb_init failed'
    stop 1
  end if
  r_main = hmb_region("main")
  r_init = hmb_region("init")
  r_step = hmb_region("step")
  r_boundary = hmb_region("boundary")
  r_energy = hmb_region("energy")

  call hmb_enter(r_main)
  call init(n)
  do k = 1, steps
    call step(n)
    call boundary(n)
    if (mod(k, 50) == 0) then
      e = energy(n)
    end if
  end do
  e = energy(n)
  call hmb_leave(r_main)
  print '(a,i0,a,i0,a,es13.6)', 'fortran-heat: n=', n, ' steps=', steps, ' energy=', e

  call hmb_finalize(ierr)
  if (ierr /= 0) then
    print '(a)', 'fortran-heat: hmb_finalize failed'
    stop 1
  end if

contains

  subroutine init(n)
    integer, intent(in) :: n
    call hmb_enter(r_init)
    allocate (u(n, n), v(n, n))
    u = 0
    u(n/4:3*n/4, n/4:3*n/4) = 1
    v = u
    call hmb_leave(r_init)
  end subroutine init

  subroutine step(n)
    integer, intent(in) :: n
    integer :: i, j
    call hmb_enter(r_step)
    do j = 2, n - 1
      do i = 2, n - 1
        v(i, j) = u(i, j) + alpha*(u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1) - 4*u(i, j))
      end do
    end do
    u = v
    call hmb_leave(r_step)
  end subroutine step

  subroutine boundary(n)
    integer, intent(in) :: n
    call hmb_enter(r_boundary)
    u(1, :) = 0
    u(n, :) = 0
    u(:, 1) = 0
    u(:, n) = 0
    call hmb_leave(r_boundary)
  end subroutine boundary

  real(8) function energy(n)
    integer, intent(in) :: n
    call hmb_enter(r_energy)
    energy = sum(u(2:n - 1, 2:n - 1))
    call hmb_leave(r_energy)
  end function energy

end program fortran_heat
