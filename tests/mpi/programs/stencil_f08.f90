! stencil.f90 again with `use mpi_f08`: typed handles (type(MPI_Comm), type(MPI_Request)), no ierror
! arguments. Open MPI's mpi_f08 bindings have symbols of their own (mpi_isend_f08 ...), which the
! tracer must wrap separately. Same numbers as stencil.c and stencil.f90 for the same arguments.
!
! Usage: stencil_f08 [ITERATIONS [LOCAL_SIZE]]    (defaults 20, 16)
program stencil_f08
  use mpi_f08
  use call_log
  implicit none

  integer, parameter :: NORTH = 1, SOUTH = 2, WEST = 3, EAST = 4
  integer, parameter :: opposite(4) = [SOUTH, NORTH, EAST, WEST]
  integer :: rank, nranks, dims(2), row, col, neighbor(4), iterations, n, iteration, direction, i, j
  type(MPI_Request) :: requests(8)
  double precision, allocatable :: u(:, :), next(:, :), outgoing(:, :), incoming(:, :)
  double precision :: local_residual, residual, local_sum, total_sum
  character(len=32) :: argument

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call call_log_open(rank)
  call log_call('MPI_Init', 0)
  call log_call('MPI_Comm_rank', 0)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  call log_call('MPI_Comm_size', 0)
  iterations = 20
  n = 16
  if (command_argument_count() >= 1) then
    call get_command_argument(1, argument)
    read (argument, *) iterations
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, argument)
    read (argument, *) n
  end if

  dims = 0
  call MPI_Dims_create(nranks, 2, dims)
  call log_call('MPI_Dims_create', 0)
  row = rank / dims(2)
  col = mod(rank, dims(2))
  neighbor = MPI_PROC_NULL
  if (row > 0) neighbor(NORTH) = rank - dims(2)
  if (row < dims(1) - 1) neighbor(SOUTH) = rank + dims(2)
  if (col > 0) neighbor(WEST) = rank - 1
  if (col < dims(2) - 1) neighbor(EAST) = rank + 1

  allocate (u(0:n + 1, 0:n + 1), next(0:n + 1, 0:n + 1), outgoing(n, 4), incoming(n, 4))
  u = 0
  if (row == 0) u(0, :) = [(1.0d0 + 0.01d0 * (col * n + j), j = 0, n + 1)]
  next = u

  do iteration = 1, iterations
    outgoing(:, NORTH) = u(1, 1:n)
    outgoing(:, SOUTH) = u(n, 1:n)
    outgoing(:, WEST) = u(1:n, 1)
    outgoing(:, EAST) = u(1:n, n)
    do direction = 1, 4
      call MPI_Irecv(incoming(1, direction), n, MPI_DOUBLE_PRECISION, neighbor(direction), opposite(direction), &
                     MPI_COMM_WORLD, requests(direction))
      call log_call('MPI_Irecv', 8 * n, [log_peer(neighbor(direction))], tag=opposite(direction))
    end do
    do direction = 1, 4
      call MPI_Isend(outgoing(1, direction), n, MPI_DOUBLE_PRECISION, neighbor(direction), direction, &
                     MPI_COMM_WORLD, requests(4 + direction))
      call log_call('MPI_Isend', 8 * n, [log_peer(neighbor(direction))], tag=direction)
    end do
    call MPI_Waitall(8, requests, MPI_STATUSES_IGNORE)
    call log_call('MPI_Waitall', 0, completed=8) ! requests on MPI_PROC_NULL count too
    if (neighbor(NORTH) /= MPI_PROC_NULL) u(0, 1:n) = incoming(:, NORTH)
    if (neighbor(SOUTH) /= MPI_PROC_NULL) u(n + 1, 1:n) = incoming(:, SOUTH)
    if (neighbor(WEST) /= MPI_PROC_NULL) u(1:n, 0) = incoming(:, WEST)
    if (neighbor(EAST) /= MPI_PROC_NULL) u(1:n, n + 1) = incoming(:, EAST)

    local_residual = 0
    do i = 1, n
      do j = 1, n
        next(i, j) = 0.25d0 * (u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1))
        local_residual = local_residual + (next(i, j) - u(i, j))**2
      end do
    end do
    u(1:n, 1:n) = next(1:n, 1:n)
    call MPI_Allreduce(local_residual, residual, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
    call log_call('MPI_Allreduce', 8)
  end do

  local_sum = 0
  do i = 1, n
    do j = 1, n
      local_sum = local_sum + u(i, j)
    end do
  end do
  call MPI_Allreduce(local_sum, total_sum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  call log_call('MPI_Allreduce', 8)
  if (rank == 0) write (*, '(a, i0, a, i0, a, i0, a, i0, a, i0, a, i0, a, es17.10, a, es17.10)') &
    'stencil_f08: ranks ', nranks, ' as ', dims(1), 'x', dims(2), ', local ', n, 'x', n, &
    ', iterations ', iterations, ', residual ', residual, ', sum ', total_sum

  call MPI_Finalize()
  call log_call('MPI_Finalize', 0)
  call call_log_close()

contains

  integer function log_peer(peer)
    integer, intent(in) :: peer
    log_peer = peer
    if (peer == MPI_PROC_NULL) log_peer = LOG_PROC_NULL
  end function log_peer

end program stencil_f08
