! halo: a 1-D halo exchange and a global residual, the way Fortran MPI codes
! are written, traced with no source change. Each rank prints the messages
! it sends as "send <to> <tag> <bytes>" for the test to compare.
program halo
  use mpi
  implicit none
  integer, parameter :: n = 64, iters = 5
  double precision :: u(0:n+1), res, total
  double precision, allocatable :: all(:)
  integer :: rank, size, left, right, ierr, it, idx, reqs(4)
  integer :: st(MPI_STATUS_SIZE)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  left = rank - 1
  right = rank + 1
  if (left < 0) left = MPI_PROC_NULL
  if (right >= size) right = MPI_PROC_NULL
  u = rank
  do it = 1, iters
    ! Non-blocking halo rows, completed together.
    call MPI_Irecv(u(0), 1, MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Irecv(u(n+1), 1, MPI_DOUBLE_PRECISION, right, 2, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_Isend(u(1), 1, MPI_DOUBLE_PRECISION, left, 2, MPI_COMM_WORLD, reqs(3), ierr)
    call MPI_Isend(u(n), 1, MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD, reqs(4), ierr)
    ! The receives one by one (a Fortran index counts from 1), then the sends.
    call MPI_Waitany(2, reqs(1:2), idx, MPI_STATUS_IGNORE, ierr)
    call MPI_Waitany(2, reqs(1:2), idx, st, ierr)
    call MPI_Waitall(2, reqs(3:4), MPI_STATUSES_IGNORE, ierr)
    if (left /= MPI_PROC_NULL) print '(a,i0,a)', 'send ', left, ' 2 8'
    if (right /= MPI_PROC_NULL) print '(a,i0,a)', 'send ', right, ' 1 8'
    u(1:n) = 0.5d0 * (u(0:n-1) + u(2:n+1))
    ! A blocking shift to the right.
    call MPI_Sendrecv(u(n), 1, MPI_DOUBLE_PRECISION, right, 3, u(0), 1, MPI_DOUBLE_PRECISION, left, 3, &
                      MPI_COMM_WORLD, st, ierr)
    if (right /= MPI_PROC_NULL) print '(a,i0,a)', 'send ', right, ' 3 8'
    res = sum(u(1:n))
    call MPI_Allreduce(res, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  ! Every rank's residual gathered in place at the last rank, whose send count
  ! and type MPI then ignores: its contribution is its receive type's.
  allocate(all(size))
  all(rank+1) = total
  if (rank == size - 1) then
    call MPI_Gather(MPI_IN_PLACE, 0, MPI_INTEGER, all, 1, MPI_DOUBLE_PRECISION, size - 1, MPI_COMM_WORLD, ierr)
  else
    call MPI_Gather(all(rank+1), 1, MPI_DOUBLE_PRECISION, all, 1, MPI_DOUBLE_PRECISION, size - 1, MPI_COMM_WORLD, ierr)
  end if
  if (rank == 0) print '(a,i0)', 'ranks ', size
  call MPI_Finalize(ierr)
end program halo
