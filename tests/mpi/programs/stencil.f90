! The 2-D Jacobi 5-point stencil of stencil.c, in Fortran with `use mpi`: an MPI_Dims_create grid of
! ranks, not periodic (MPI_PROC_NULL on the edges), per iteration 4 MPI_Irecv + 4 MPI_Isend of packed
! halo buffers, MPI_Waitall with MPI_STATUSES_IGNORE, the update, and an MPI_Allreduce of the residual.
! Exercises the tracer's Fortran wrappers (Open MPI's Fortran bindings call PMPI_ directly, so the C
! wrappers never see these calls) and the translation of Fortran's MPI_STATUSES_IGNORE.
! Same numbers as stencil.c for the same arguments (same initial values and summation order).
!
! Usage: stencil_fortran [ITERATIONS [LOCAL_SIZE]]    (defaults 20, 16)
program stencil_fortran
  use mpi
  use call_log
  implicit none

  integer, parameter :: NORTH = 1, SOUTH = 2, WEST = 3, EAST = 4
  integer :: ierr, rank, nranks, dims(2), row, col, neighbor(4), requests(8)
  integer :: iterations, n, iteration, direction, i, j, halo_bytes
  double precision, allocatable :: u(:, :), next(:, :), outgoing(:, :), incoming(:, :)
  double precision :: change, local_residual, residual, local_sum, total_sum

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call call_log_open(rank)
  call log_call('MPI_Init', 0)
  call log_call('MPI_Comm_rank', 0)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call log_call('MPI_Comm_size', 0)

  iterations = integer_argument(1, 20)
  n = integer_argument(2, 16)
  halo_bytes = n * 8 ! n double precision values

  dims = 0
  call MPI_Dims_create(nranks, 2, dims, ierr)
  call log_call('MPI_Dims_create', 0)
  row = rank / dims(2) ! row-major, as in stencil.c
  col = mod(rank, dims(2))
  neighbor = MPI_PROC_NULL
  if (row > 0) neighbor(NORTH) = rank - dims(2)
  if (row < dims(1) - 1) neighbor(SOUTH) = rank + dims(2)
  if (col > 0) neighbor(WEST) = rank - 1
  if (col < dims(2) - 1) neighbor(EAST) = rank + 1

  ! u(i, j): row i, column j, with ghost cells 0 and n+1. The global north edge is fixed in both
  ! arrays' ghost row; halos from MPI_PROC_NULL are never unpacked, so it stays.
  allocate (u(0:n + 1, 0:n + 1), next(0:n + 1, 0:n + 1), outgoing(n, 4), incoming(n, 4))
  u = 0
  if (row == 0) then
    do j = 0, n + 1
      u(0, j) = 1.0d0 + 0.01d0 * (col * n + j)
    end do
  end if
  next = u

  do iteration = 1, iterations
    outgoing(:, NORTH) = u(1, 1:n)
    outgoing(:, SOUTH) = u(n, 1:n)
    outgoing(:, WEST) = u(1:n, 1)
    outgoing(:, EAST) = u(1:n, n)
    ! Tags name the direction a message travels, so each receive pairs with the opposite send.
    do direction = 1, 4
      call MPI_Irecv(incoming(1, direction), n, MPI_DOUBLE_PRECISION, neighbor(direction), &
                     opposite(direction), MPI_COMM_WORLD, requests(direction), ierr)
      call log_call('MPI_Irecv', halo_bytes, [log_peer(neighbor(direction))], tag=opposite(direction))
    end do
    do direction = 1, 4
      call MPI_Isend(outgoing(1, direction), n, MPI_DOUBLE_PRECISION, neighbor(direction), direction, &
                     MPI_COMM_WORLD, requests(4 + direction), ierr)
      call log_call('MPI_Isend', halo_bytes, [log_peer(neighbor(direction))], tag=direction)
    end do
    call MPI_Waitall(8, requests, MPI_STATUSES_IGNORE, ierr)
    call log_call('MPI_Waitall', 0, completed=8) ! requests on MPI_PROC_NULL count too
    if (neighbor(NORTH) /= MPI_PROC_NULL) u(0, 1:n) = incoming(:, NORTH)
    if (neighbor(SOUTH) /= MPI_PROC_NULL) u(n + 1, 1:n) = incoming(:, SOUTH)
    if (neighbor(WEST) /= MPI_PROC_NULL) u(1:n, 0) = incoming(:, WEST)
    if (neighbor(EAST) /= MPI_PROC_NULL) u(1:n, n + 1) = incoming(:, EAST)

    local_residual = 0
    do i = 1, n ! row by row, as stencil.c sums
      do j = 1, n
        next(i, j) = 0.25d0 * (u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1))
        change = next(i, j) - u(i, j)
        local_residual = local_residual + change * change
      end do
    end do
    u(1:n, 1:n) = next(1:n, 1:n)

    call MPI_Allreduce(local_residual, residual, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    call log_call('MPI_Allreduce', 8)
  end do

  local_sum = 0
  do i = 1, n
    do j = 1, n
      local_sum = local_sum + u(i, j)
    end do
  end do
  call MPI_Allreduce(local_sum, total_sum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call log_call('MPI_Allreduce', 8)

  if (rank == 0) write (*, '(a, i0, a, i0, a, i0, a, i0, a, i0, a, i0, a, es17.10, a, es17.10)') &
    'stencil_fortran: ranks ', nranks, ' as ', dims(1), 'x', dims(2), ', local ', n, 'x', n, &
    ', iterations ', iterations, ', residual ', residual, ', sum ', total_sum

  call MPI_Finalize(ierr)
  call log_call('MPI_Finalize', 0)
  call call_log_close()

contains

  integer function opposite(direction)
    integer, intent(in) :: direction
    integer, parameter :: opposites(4) = [SOUTH, NORTH, EAST, WEST]
    opposite = opposites(direction)
  end function opposite

  integer function log_peer(peer)
    integer, intent(in) :: peer
    log_peer = peer
    if (peer == MPI_PROC_NULL) log_peer = LOG_PROC_NULL
  end function log_peer

  integer function integer_argument(position, default)
    integer, intent(in) :: position, default
    character(len=32) :: text
    integer :: length
    integer_argument = default
    call get_command_argument(position, text, length)
    if (length > 0) read (text, *) integer_argument
  end function integer_argument

end program stencil_fortran
