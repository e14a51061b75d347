! The Fortran test programs' own record of every MPI call they make: the same format as call_log.h.
!
! If the environment variable CALL_LOG_DIR is set, each rank appends one line per MPI call, in the
! order it made them, to $CALL_LOG_DIR/rank.<world rank>:
!
!     <MPI function name> <bytes> <peers comma-separated, or -> <matched sources comma-separated, or -> [key=value ...]
!
! The optional key=value fields are those of call_log.h, given to log_call as optional arguments of
! the same names: tag, recv_tag, matched_tag (point-to-point calls) and completed, positions
! (Wait/Test calls).
! No MPI inside, so the module serves `use mpi` and `use mpi_f08` programs alike and cannot change
! what the tracer sees. Callers translate MPI_ANY_SOURCE / MPI_PROC_NULL / MPI_ANY_TAG to the LOG_
! values below.
module call_log
  implicit none
  private
  public :: call_log_open, log_call, call_log_close, LOG_ANY_SOURCE, LOG_PROC_NULL, LOG_ANY_TAG

  ! Peer values that are not world ranks, and the wildcard tag (negative, so no rank or tag can
  ! collide with them).
  integer, parameter :: LOG_ANY_SOURCE = -1000001, LOG_PROC_NULL = -1000002, LOG_ANY_TAG = -1000003

  ! newunit= hands out negative unit numbers, so whether the log is open is kept apart.
  integer :: log_unit = 0
  logical :: log_open = .false.

contains

  ! Opens the log of this world rank. Called right after the first MPI_Comm_rank, since the file name
  ! needs the rank; MPI_Init and that MPI_Comm_rank are logged just after (the checker compares per
  ! function, not in order).
  subroutine call_log_open(world_rank)
    integer, intent(in) :: world_rank
    character(len=4096) :: directory
    character(len=16) :: rank_text
    integer :: length, status

    call get_environment_variable('CALL_LOG_DIR', directory, length, status)
    if (status /= 0 .or. length == 0) return
    write (rank_text, '(i0)') world_rank
    open (newunit=log_unit, file=directory(1:length)//'/rank.'//trim(rank_text), &
          position='append', action='write', status='unknown')
    log_open = .true.
  end subroutine call_log_open

  ! One call. `bytes` is a default integer: the test programs move far less than 2 GiB per call.
  ! Point-to-point calls give `tag` (and `recv_tag`, `matched_tag` where call_log.h says), Wait/Test
  ! calls `completed`: pass them by keyword.
  subroutine log_call(function_name, bytes, peers, matched, tag, recv_tag, matched_tag, completed, positions)
    character(len=*), intent(in) :: function_name
    integer, intent(in) :: bytes
    integer, intent(in), optional :: peers(:), matched(:)
    integer, intent(in), optional :: tag, recv_tag, matched_tag, completed
    integer, intent(in), optional :: positions(:)
    integer :: i

    if (.not. log_open) return
    write (log_unit, '(a, 1x, i0)', advance='no') function_name, bytes
    call write_ranks(peers)
    call write_ranks(matched)
    call write_field('tag', tag)
    call write_field('recv_tag', recv_tag)
    call write_field('matched_tag', matched_tag)
    call write_field('completed', completed)
    if (present(positions)) then
      if (size(positions) > 0) then
        write (log_unit, '(a, i0)', advance='no') ' positions=', positions(1)
        do i = 2, size(positions)
          write (log_unit, '(a, i0)', advance='no') ',', positions(i)
        end do
      end if
    end if
    write (log_unit, '()')
  end subroutine log_call

  ! ` key=value`, when the value was given; LOG_ANY_TAG is written as ANY_TAG.
  subroutine write_field(key, value)
    character(len=*), intent(in) :: key
    integer, intent(in), optional :: value

    if (.not. present(value)) return
    if (value == LOG_ANY_TAG) then
      write (log_unit, '(3a)', advance='no') ' ', key, '=ANY_TAG'
    else
      write (log_unit, '(3a, i0)', advance='no') ' ', key, '=', value
    end if
  end subroutine write_field

  subroutine write_ranks(ranks)
    integer, intent(in), optional :: ranks(:)
    integer :: i
    character :: separator

    if (.not. present(ranks)) then
      write (log_unit, '(a)', advance='no') ' -'
      return
    end if
    if (size(ranks) == 0) then
      write (log_unit, '(a)', advance='no') ' -'
      return
    end if
    separator = ' '
    do i = 1, size(ranks)
      if (ranks(i) == LOG_ANY_SOURCE) then
        write (log_unit, '(2a)', advance='no') separator, 'ANY_SOURCE'
      else if (ranks(i) == LOG_PROC_NULL) then
        write (log_unit, '(2a)', advance='no') separator, 'PROC_NULL'
      else
        write (log_unit, '(a, i0)', advance='no') separator, ranks(i)
      end if
      separator = ','
    end do
  end subroutine write_ranks

  subroutine call_log_close()
    if (log_open) close (log_unit)
    log_open = .false.
  end subroutine call_log_close

end module call_log
