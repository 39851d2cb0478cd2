! rma: one-sided communication from Fortran (use mpi): a window on
! MPI_COMM_WORLD, a fence epoch with a put to the next rank, a lock epoch
! with an accumulate, the window freed. Traced with no source change.
program rma
  use mpi
  implicit none
  integer :: ierr, rank, nranks, win, next
  integer(kind=MPI_ADDRESS_KIND) :: winsize, disp
  integer :: buf(8), val(4)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  buf = 0
  val = rank
  winsize = 32
  call MPI_Win_create(buf, winsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  next = mod(rank + 1, nranks)
  disp = 0
  call MPI_Win_fence(0, win, ierr)
  call MPI_Put(val, 4, MPI_INTEGER, next, disp, 4, MPI_INTEGER, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, 0, win, ierr)
  call MPI_Accumulate(val, 1, MPI_INTEGER, next, disp, 1, MPI_INTEGER, MPI_SUM, win, ierr)
  call MPI_Win_unlock(next, win, ierr)
  call MPI_Win_free(win, ierr)
  call MPI_Finalize(ierr)
end program rma
