! taskfib.f90 - the Fortran counterpart of taskfib.c for the adapter's
! tests: a recursive Fibonacci of tasks with taskwait, many tasks created
! in a single construct and run by the team, tasks in a taskgroup. It
! prints what it computed and how many tasks it created.
module fibmod
  implicit none
  integer :: created = 0
contains
  recursive function fib(n) result(f)
    integer, intent(in) :: n
    integer :: f, a, b
    if (n < 2) then
      f = n
      return
    end if
    !$omp atomic
    created = created + 2
    !$omp task shared(a)
    a = fib(n - 1)
    !$omp end task
    !$omp task shared(b)
    b = fib(n - 2)
    !$omp end task
    !$omp taskwait
    f = a + b
  end function fib

  subroutine spin(n)
    integer, intent(in) :: n
    integer :: i
    double precision, volatile :: x
    x = 0
    do i = 1, n
      x = x + dble(i) * 1d-9
    end do
  end subroutine spin
end module fibmod

program taskfibf
  use fibmod
  implicit none
  integer :: f, ran, grouped, i
  f = 0
  ran = 0
  grouped = 0
  !$omp parallel private(i)
  !$omp single
  f = fib(12)
  !$omp end single
  !$omp single
  do i = 1, 200
    !$omp atomic
    created = created + 1
    !$omp task shared(ran)
    call spin(20000)
    !$omp atomic
    ran = ran + 1
    !$omp end task
  end do
  !$omp end single
  !$omp master
  !$omp taskgroup
  do i = 1, 20
    !$omp atomic
    created = created + 1
    !$omp task shared(grouped)
    call spin(20000)
    !$omp atomic
    grouped = grouped + 1
    !$omp end task
  end do
  !$omp end taskgroup
  !$omp end master
  !$omp end parallel
  print '(a,i0,a,i0,a,i0,a,i0)', 'fib ', f, ' many ', ran, ' group ', grouped, ' tasks ', created
end program taskfibf
