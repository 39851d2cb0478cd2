! omp.f90 - the Fortran counterpart of omp.c for the adapter's tests: an
! imbalanced static loop, a critical section, a lock, a reduction, tasks
! with dependencies and a nested parallel region.
program ompf
  use omp_lib
  implicit none
  integer :: r, i, me, n, counted, tasks, a, b
  integer(omp_lock_kind) :: lck
  double precision :: s
  counted = 0
  tasks = 0
  s = 0
  call omp_init_lock(lck)
  do r = 1, 3
    !$omp parallel private(me, n, a, b)
    me = omp_get_thread_num()
    n = omp_get_num_threads()
    !$omp do schedule(static)
    do i = 1, 4 * n
      call spin(1000000 * (me + 1))
      ! and sleep me ms: a loaded machine cannot shorten a sleep (omp.c)
      call sleep_us(1000 * me)
    end do
    !$omp end do
    !$omp critical
    counted = counted + 1
    !$omp end critical
    !$omp do schedule(dynamic, 1) reduction(+:s)
    do i = 1, 100
      s = s + i
    end do
    !$omp end do
    call omp_set_lock(lck)
    counted = counted + 1
    call omp_unset_lock(lck)
    !$omp single
    !$omp task depend(out:a) shared(a)
    a = 1
    !$omp end task
    !$omp task depend(in:a) depend(out:b) shared(a, b)
    b = a + 1
    !$omp end task
    !$omp task depend(in:b) shared(b)
    !$omp atomic
    tasks = tasks + b
    !$omp end task
    !$omp taskwait
    !$omp end single
    !$omp parallel num_threads(2)
    call spin(50000)
    !$omp end parallel
    !$omp end parallel
  end do
  call omp_destroy_lock(lck)
  print '(a,i0,a,f0.0,a,i0)', 'counted ', counted, ' sum ', s, ' tasks ', tasks
contains
  subroutine sleep_us(us)
    use iso_c_binding, only: c_int
    integer, intent(in) :: us
    interface
      integer(c_int) function usleep(u) bind(c, name='usleep')
        import :: c_int
        integer(c_int), value :: u
      end function usleep
    end interface
    integer(c_int) :: rc
    rc = usleep(int(us, c_int))
  end subroutine sleep_us

  subroutine spin(k)
    integer, intent(in) :: k
    integer :: j
    double precision, volatile :: x
    x = 0
    do j = 1, k
      x = x + j * 1d-9
    end do
  end subroutine spin
end program ompf
