! The Fortran traps of docs/design.md, each where a tracer can fall into it: the 1-based index that
! MPI_Waitany and MPI_Testany return and the indices of MPI_Waitsome (MPI_UNDEFINED where no request
! was active), MPI_IN_PLACE, and MPI_STATUS_IGNORE / MPI_STATUSES_IGNORE on receives from
! MPI_ANY_SOURCE. Built twice: with `use mpi`, and with -DMPI_F08 for `use mpi_f08` (typed handles).
! Per round, on a ring: receives from both neighbours completed by Waitany (the one whose message
! came first, then the other), an MPI_ANY_SOURCE receive polled by Testany and the rest by Waitsome,
! a blocking MPI_ANY_SOURCE receive with MPI_STATUS_IGNORE, and in-place collectives.
! Every completion call logs which of the rank's pending requests it completed (positions=, newest
! first, from the indices MPI returned); wildcard receives whose status is ignored log the source the
! message names (its payload is the sender's rank). A wrong index or MPI_UNDEFINED stops the program.
!
! Usage: traps [ROUNDS]    (default 3)
program traps
#ifdef MPI_F08
  use mpi_f08
#else
  use mpi
#endif
  use call_log
  implicit none

#ifdef MPI_F08
  type(MPI_Request) :: requests(3)
#else
  integer :: requests(3)
#endif
  ! The order in which the rank made each slot's pending request (0: none pending).
  integer :: made(3), made_count
  integer :: rank, nranks, left, right, ierr, round, rounds, index, outcount, indices(3)
  integer :: inbox(3), outgoing, sums(4), gathered(64), checksum
  logical :: flag, wildcard_pending
  character(len=32) :: argument

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call call_log_open(rank)
  call log_call('MPI_Init', 0)
  call log_call('MPI_Comm_rank', 0)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call log_call('MPI_Comm_size', 0)
  rounds = 3
  if (command_argument_count() >= 1) then
    call get_command_argument(1, argument)
    read (argument, *) rounds
  end if
  if (nranks > size(gathered)) error stop 'traps: at most 64 ranks'
  left = mod(rank - 1 + nranks, nranks)
  right = mod(rank + 1, nranks)
  made = 0
  made_count = 0
  wildcard_pending = .false.
  checksum = 0

  do round = 1, rounds
    ! Waitany: either neighbour's message may come first; the log says which request completed.
    call receive(1, left, 1)
    call receive(2, right, 2)
    call send(rank, right, 1)
    call MPI_Waitany(2, requests, index, MPI_STATUS_IGNORE, ierr)
    call completed_some('MPI_Waitany', [index])
    call send(rank, left, 2)
    call MPI_Waitany(2, requests, index, MPI_STATUS_IGNORE, ierr)
    call completed_some('MPI_Waitany', [index])
    if (inbox(1) /= left .or. inbox(2) /= right) error stop 'traps: a message from the wrong rank'
    ! Nothing active: MPI_UNDEFINED, never an index.
    call MPI_Waitany(2, requests, index, MPI_STATUS_IGNORE, ierr)
    if (index /= MPI_UNDEFINED) error stop 'traps: Waitany on no active request gave an index'
    call log_call('MPI_Waitany', 0, completed=0)

    ! Testany polls a receive from any source (its status ignored); Waitsome completes the rest.
    call receive(1, MPI_ANY_SOURCE, 3)
    wildcard_pending = .true.
    call receive(2, right, 4)
    call send(rank, right, 3)
    flag = .false.
    do while (.not. flag)
      call MPI_Testany(2, requests, index, flag, MPI_STATUS_IGNORE, ierr)
      if (flag) then
        call completed_some('MPI_Testany', [index])
      else
        call log_call('MPI_Testany', 0, completed=0)
      end if
    end do
    call send(rank, left, 4)
    call MPI_Waitsome(2, requests, outcount, indices, MPI_STATUSES_IGNORE, ierr)
    if (outcount /= 1) error stop 'traps: Waitsome did not complete the one active request'
    call completed_some('MPI_Waitsome', indices(1:1))
    if (inbox(1) /= left .or. inbox(2) /= right) error stop 'traps: a message from the wrong rank'
    call MPI_Waitsome(2, requests, outcount, indices, MPI_STATUSES_IGNORE, ierr)
    if (outcount /= MPI_UNDEFINED) error stop 'traps: Waitsome on no active request gave a count'
    call log_call('MPI_Waitsome', 0, completed=0)
    call MPI_Testany(2, requests, index, flag, MPI_STATUS_IGNORE, ierr)
    if (.not. flag .or. index /= MPI_UNDEFINED) error stop 'traps: Testany on no active request gave an index'
    call log_call('MPI_Testany', 0, completed=0)

    ! Waitsome over three requests, two of them from the same neighbour in order.
    call receive(1, left, 5)
    call receive(2, right, 6)
    call receive(3, left, 7)
    call send(rank, left, 6)
    call send(rank, right, 5)
    call send(rank, right, 7)
    do while (any(made /= 0))
      call MPI_Waitsome(3, requests, outcount, indices, MPI_STATUSES_IGNORE, ierr)
      if (outcount < 1 .or. outcount == MPI_UNDEFINED) error stop 'traps: Waitsome completed nothing'
      call completed_some('MPI_Waitsome', indices(1:outcount))
    end do
    if (inbox(1) /= left .or. inbox(2) /= right .or. inbox(3) /= left) &
      error stop 'traps: a message from the wrong rank'

    ! A blocking receive from any source, its status ignored: the payload says who sent it.
    outgoing = rank
    call MPI_Isend(outgoing, 1, MPI_INTEGER, right, 8, MPI_COMM_WORLD, requests(3), ierr)
    call posted(3)
    call log_call('MPI_Isend', 4, [right], tag=8)
    call MPI_Recv(inbox(3), 1, MPI_INTEGER, MPI_ANY_SOURCE, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call log_call('MPI_Recv', 4, [LOG_ANY_SOURCE], matched=[inbox(3)], tag=8)
    call MPI_Wait(requests(3), MPI_STATUS_IGNORE, ierr)
    call completed_some('MPI_Wait', [3])

    ! In place: reductions keep their one buffer's bytes, Allgather has no send side.
    sums = [rank, round, 1, rank * round]
    call MPI_Allreduce(MPI_IN_PLACE, sums, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call log_call('MPI_Allreduce', 16)
    if (rank == 0) then
      call MPI_Reduce(MPI_IN_PLACE, sums, 4, MPI_INTEGER, MPI_MAX, 0, MPI_COMM_WORLD, ierr)
    else
      call MPI_Reduce(sums, sums, 4, MPI_INTEGER, MPI_MAX, 0, MPI_COMM_WORLD, ierr)
    end if
    call log_call('MPI_Reduce', 16, [0])
    gathered(rank + 1) = rank * round
    call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, gathered, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call log_call('MPI_Allgather', 4)
    checksum = checksum + sum(sums) + sum(gathered(1:nranks)) + inbox(3)
  end do

  call MPI_Allreduce(MPI_IN_PLACE, checksum, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call log_call('MPI_Allreduce', 4)
  if (rank == 0) write (*, '(a, i0, a, i0, a, i0)') 'traps: ranks ', nranks, ', rounds ', rounds, ', checksum ', checksum
  call MPI_Finalize(ierr)
  call log_call('MPI_Finalize', 0)
  call call_log_close()

contains

  ! MPI_Irecv of one integer into inbox(slot), its request in requests(slot).
  subroutine receive(slot, source, tag)
    integer, intent(in) :: slot, source, tag
    call MPI_Irecv(inbox(slot), 1, MPI_INTEGER, source, tag, MPI_COMM_WORLD, requests(slot), ierr)
    call posted(slot)
    if (source == MPI_ANY_SOURCE) then
      call log_call('MPI_Irecv', 4, [LOG_ANY_SOURCE], tag=tag)
    else
      call log_call('MPI_Irecv', 4, [source], tag=tag)
    end if
  end subroutine receive

  subroutine send(value, dest, tag)
    integer, intent(in) :: value, dest, tag
    call MPI_Send(value, 1, MPI_INTEGER, dest, tag, MPI_COMM_WORLD, ierr)
    call log_call('MPI_Send', 4, [dest], tag=tag)
  end subroutine send

  subroutine posted(slot)
    integer, intent(in) :: slot
    made_count = made_count + 1
    made(slot) = made_count
  end subroutine posted

  ! Among the rank's pending requests, newest first (src/trace/completion_set.hpp); `slot` is the
  ! 1-based index MPI returned.
  integer function position(slot)
    integer, intent(in) :: slot
    if (slot < 1 .or. slot > size(made)) error stop 'traps: an index out of range'
    if (made(slot) == 0) error stop 'traps: an index of a request that was not pending'
    position = count(made > made(slot))
  end function position

  function sorted_positions(slots) result(positions)
    integer, intent(in) :: slots(:)
    integer :: positions(size(slots)), i, j, swap
    positions = [(position(slots(i)), i = 1, size(slots))]
    do i = 2, size(positions)
      do j = i, 2, -1
        if (positions(j - 1) <= positions(j)) exit
        swap = positions(j)
        positions(j) = positions(j - 1)
        positions(j - 1) = swap
      end do
    end do
  end function sorted_positions

  ! A completion call that completed the requests of `slots` (the indices MPI returned). Slot 1 of
  ! the Testany round is the receive from any source: its sender is in the message.
  subroutine completed_some(function_name, slots)
    character(len=*), intent(in) :: function_name
    integer, intent(in) :: slots(:)
    integer :: i
    if (wildcard_pending .and. any(slots == 1)) then
      call log_call(function_name, 0, matched=[inbox(1)], completed=size(slots), positions=sorted_positions(slots))
      wildcard_pending = .false.
    else
      call log_call(function_name, 0, completed=size(slots), positions=sorted_positions(slots))
    end if
    do i = 1, size(slots)
      made(slots(i)) = 0
    end do
  end subroutine completed_some

end program traps
