! Each rank passes a token to the next one, 10 times, after a broadcast
! (use mpi: Open MPI's libmpi_mpifh bindings).
program ring_f
  use mpi
  implicit none
  integer :: ierr, rank, np, token, i
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  token = rank
  call MPI_Bcast(token, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  do i = 1, 10
    call pass()
  end do
  print '(a,i0,a,i0,a,i0)', 'ring: rank ', rank, ' of ', np, ' token ', token
  call MPI_Finalize(ierr)
contains
  subroutine pass()
    call MPI_Sendrecv_replace(token, 1, MPI_INTEGER, mod(rank + 1, np), 7, mod(rank + np - 1, np), 7, &
                              MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  end subroutine
end program
