! Each rank passes a token to the next one, 10 times, after a broadcast
! (use mpi_f08: Open MPI's libmpi_usempif08 bindings).
program ring_f08
  use mpi_f08
  implicit none
  integer :: rank, np, token, i
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  token = rank
  call MPI_Bcast(token, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
  do i = 1, 10
    call pass()
  end do
  print '(a,i0,a,i0,a,i0)', 'ring: rank ', rank, ' of ', np, ' token ', token
  call MPI_Finalize()
contains
  subroutine pass()
    call MPI_Sendrecv_replace(token, 1, MPI_INTEGER, mod(rank + 1, np), 7, mod(rank + np - 1, np), 7, &
                              MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  end subroutine
end program
