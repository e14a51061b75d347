! The Fortran part of the deep-stacks benchmark (deep_stacks.c): the call paths go through a
! module's recursive procedure and two fans of call statements, and the MPI calls are Fortran's.
! main -> deep_stacks_fortran -> climb x (depth - 4) -> fan_outer -> fan_inner -> leaf -> MPI
! (fan_inner and leaf may be inlined: the call statements stay apart).
module deep_stacks_module
  use mpi
  implicit none
  integer :: left, right, rank, file
  integer(kind=8) :: calls = 0
  double precision :: send(4) = 1, receive(4)
  integer, volatile :: seen
contains
  recursive subroutine climb(frames, p)
    integer, intent(in) :: frames, p
    if (frames <= 0) then
      call fan_outer(p)
    else
      call climb(frames - 1, p)
      seen = frames
    end if
  end subroutine climb

  subroutine fan_outer(p)
    integer, intent(in) :: p
    select case (mod(p / 16, 16))
    case (0)
      call fan_inner(p)
      seen = 100
    case (1)
      call fan_inner(p)
      seen = 101
    case (2)
      call fan_inner(p)
      seen = 102
    case (3)
      call fan_inner(p)
      seen = 103
    case (4)
      call fan_inner(p)
      seen = 104
    case (5)
      call fan_inner(p)
      seen = 105
    case (6)
      call fan_inner(p)
      seen = 106
    case (7)
      call fan_inner(p)
      seen = 107
    case (8)
      call fan_inner(p)
      seen = 108
    case (9)
      call fan_inner(p)
      seen = 109
    case (10)
      call fan_inner(p)
      seen = 110
    case (11)
      call fan_inner(p)
      seen = 111
    case (12)
      call fan_inner(p)
      seen = 112
    case (13)
      call fan_inner(p)
      seen = 113
    case (14)
      call fan_inner(p)
      seen = 114
    case (15)
      call fan_inner(p)
      seen = 115
    end select
  end subroutine fan_outer

  subroutine fan_inner(p)
    integer, intent(in) :: p
    select case (mod(p, 16))
    case (0)
      call leaf(mod(p, 16))
      seen = 200
    case (1)
      call leaf(mod(p, 16))
      seen = 201
    case (2)
      call leaf(mod(p, 16))
      seen = 202
    case (3)
      call leaf(mod(p, 16))
      seen = 203
    case (4)
      call leaf(mod(p, 16))
      seen = 204
    case (5)
      call leaf(mod(p, 16))
      seen = 205
    case (6)
      call leaf(mod(p, 16))
      seen = 206
    case (7)
      call leaf(mod(p, 16))
      seen = 207
    case (8)
      call leaf(mod(p, 16))
      seen = 208
    case (9)
      call leaf(mod(p, 16))
      seen = 209
    case (10)
      call leaf(mod(p, 16))
      seen = 210
    case (11)
      call leaf(mod(p, 16))
      seen = 211
    case (12)
      call leaf(mod(p, 16))
      seen = 212
    case (13)
      call leaf(mod(p, 16))
      seen = 213
    case (14)
      call leaf(mod(p, 16))
      seen = 214
    case (15)
      call leaf(mod(p, 16))
      seen = 215
    end select
  end subroutine fan_inner

  subroutine leaf(kind)
    integer, intent(in) :: kind
    integer :: ierr, requests(2)
    integer(kind=MPI_OFFSET_KIND) :: offset
    if (kind < 5) then
      call mpi_sendrecv(send, 1, MPI_DOUBLE_PRECISION, right, 0, receive, 1, MPI_DOUBLE_PRECISION, left, 0, &
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      calls = calls + 1
    else if (kind < 10) then
      call mpi_allreduce(send, receive, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
      calls = calls + 1
    else if (kind < 15) then
      call mpi_irecv(receive, 1, MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, requests(1), ierr)
      call mpi_isend(send, 1, MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD, requests(2), ierr)
      call mpi_waitall(2, requests, MPI_STATUSES_IGNORE, ierr)
      calls = calls + 3
    else
      offset = rank * 8
      call mpi_file_write_at(file, offset, send, 1, MPI_DOUBLE_PRECISION, MPI_STATUS_IGNORE, ierr)
      calls = calls + 1
    end if
    seen = kind
  end subroutine leaf
end module deep_stacks_module

subroutine deep_stacks_fortran(depth, first, paths, iterations, file_handle) bind(c, name="deep_stacks_fortran")
  use, intrinsic :: iso_c_binding
  use deep_stacks_module
  implicit none
  integer(c_int), value :: depth, first, paths, iterations, file_handle
  integer :: i, p, size, ierr
  file = file_handle
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, size, ierr)
  left = mod(rank + size - 1, size)
  right = mod(rank + 1, size)
  do i = 1, iterations
    do p = first, first + paths - 1
      call climb(depth - 4, p)
    end do
  end do
end subroutine deep_stacks_fortran

function deep_stacks_fortran_calls() bind(c, name="deep_stacks_fortran_calls")
  use, intrinsic :: iso_c_binding
  use deep_stacks_module
  implicit none
  integer(c_long) :: deep_stacks_fortran_calls
  deep_stacks_fortran_calls = calls
end function deep_stacks_fortran_calls
