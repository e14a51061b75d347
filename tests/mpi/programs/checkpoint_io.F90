! checkpoint.c's MPI-IO from Fortran: the traps of its bindings are a file name passed as a Fortran
! string (its length a hidden argument, with trailing blanks), offsets of INTEGER(KIND=MPI_OFFSET_KIND)
! and file handles as integers (`use mpi`) or type(MPI_File) (`use mpi_f08`, -DMPI_F08). Every
! timestep each rank writes its block of a shared file at an offset that follows its rank
! (MPI_File_write_at_all), reads its last block back, seeks and writes a trailer, syncs and checks
! the size;
! then writes a file of its own (ckpt_<rank, 4 digits>.dat) and deletes it.
!
! Usage: checkpoint_io [STEPS [BLOCK_INTS]]    (defaults 3, 64)
program checkpoint_io
#ifdef MPI_F08
  use mpi_f08
#else
  use mpi
#endif
  use call_log
  implicit none

#ifdef MPI_F08
  type(MPI_File) :: shared, own
#else
  integer :: shared, own
#endif
  integer :: rank, nranks, ierr, steps, block, step, i, failures, all_failures
  integer(kind=MPI_OFFSET_KIND) :: offset, file_size
  integer, allocatable :: data(:)
  character(len=32) :: argument
  ! A name with trailing blanks: the library takes the string up to its last non-blank.
  character(len=40) :: own_name

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call call_log_open(rank)
  call log_call('MPI_Init', 0)
  call log_call('MPI_Comm_rank', 0)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call log_call('MPI_Comm_size', 0)
  steps = 3
  block = 64
  if (command_argument_count() >= 1) then
    call get_command_argument(1, argument)
    read (argument, *) steps
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, argument)
    read (argument, *) block
  end if
  allocate (data(block))
  failures = 0

  call MPI_File_open(MPI_COMM_WORLD, 'shared_f.dat', MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, shared, ierr)
  call log_call('MPI_File_open', 0)
  call MPI_File_set_view(shared, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL, ierr)
  call log_call('MPI_File_set_view', 0)
  do step = 0, steps - 1
    do i = 1, block
      data(i) = step * 1000000 + rank * 1000 + i
    end do
    offset = (int(step, MPI_OFFSET_KIND) * nranks + rank) * block
    call MPI_File_write_at_all(shared, offset, data, block, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
    call log_call('MPI_File_write_at_all', 4 * block)
  end do
  call MPI_File_read_at(shared, offset, data, block, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call log_call('MPI_File_read_at', 4 * block)
  if (data(block) /= (steps - 1) * 1000000 + rank * 1000 + block) failures = failures + 1
  offset = int(steps, MPI_OFFSET_KIND) * nranks * block + rank
  call MPI_File_seek(shared, offset, MPI_SEEK_SET, ierr)
  call log_call('MPI_File_seek', 0)
  call MPI_File_write_all(shared, rank, 1, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call log_call('MPI_File_write_all', 4)
  ! Every rank's trailer in the file before any rank asks for its size: MPI's sync-barrier-sync.
  call MPI_File_sync(shared, ierr)
  call log_call('MPI_File_sync', 0)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call log_call('MPI_Barrier', 0)
  call MPI_File_sync(shared, ierr)
  call log_call('MPI_File_sync', 0)
  call MPI_File_get_size(shared, file_size, ierr)
  call log_call('MPI_File_get_size', 0)
  if (file_size /= (int(steps, MPI_OFFSET_KIND) * nranks * block + nranks) * 4) failures = failures + 1
  call MPI_File_close(shared, ierr)
  call log_call('MPI_File_close', 0)

  write (own_name, '(a, i4.4, a)') 'ckpt_', rank, '.dat'
  call MPI_File_open(MPI_COMM_SELF, own_name, MPI_MODE_CREATE + MPI_MODE_WRONLY, MPI_INFO_NULL, own, ierr)
  call log_call('MPI_File_open', 0)
  call MPI_File_write(own, data, block, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call log_call('MPI_File_write', 4 * block)
  call MPI_File_close(own, ierr)
  call log_call('MPI_File_close', 0)
  call MPI_File_delete(own_name, MPI_INFO_NULL, ierr)
  call log_call('MPI_File_delete', 0)

  call MPI_Allreduce(failures, all_failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call log_call('MPI_Allreduce', 4)
  if (rank == 0) print '(a, i0, a, i0, a, i0, a)', 'checkpoint_io: ', steps, ' steps on ', nranks, ' ranks, ', &
    all_failures, ' failures'
  call MPI_Finalize(ierr)
  call log_call('MPI_Finalize', 0)
  if (all_failures /= 0) error stop 1
end program checkpoint_io
