/* File sizes: MPI_File_preallocate grows the file, MPI_File_get_size sees it; MPI_File_set_size
 * truncates it; writes at rank offsets followed by MPI_File_sync, a barrier and MPI_File_sync extend it; a final
 * MPI_File_set_size shrinks it to half, and MPI_File_get_size agrees on every rank. Collective calls
 * need not synchronize: a barrier after each size check keeps the next change from overtaking it. */
#include "../conformance.h"

enum { N = 1000 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);

    MPI_File fh;
    CALL(MPI_File_open, MPI_COMM_WORLD, "conformance_io_size_sync.dat",
         MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh);
    MPI_Offset file_size = -1;
    CALL(MPI_File_preallocate, fh, 4096);
    CALL(MPI_File_get_size, fh, &file_size);
    if (file_size < 4096)
        conformance_error("after preallocate: size %lld", (long long)file_size);
    CALL(MPI_Barrier, MPI_COMM_WORLD); /* every rank asked before any changes it */

    CALL(MPI_File_set_size, fh, 100);
    CALL(MPI_File_get_size, fh, &file_size);
    if (file_size != 100)
        conformance_error("after set_size(100): size %lld", (long long)file_size);
    CALL(MPI_Barrier, MPI_COMM_WORLD);

    char block[N];
    memset(block, 'a' + rank % 26, sizeof block);
    MPI_Status status;
    CALL(MPI_File_write_at, fh, (MPI_Offset)rank * N, block, N, MPI_CHAR, &status);
    CALL(MPI_File_sync, fh);
    CALL(MPI_Barrier, MPI_COMM_WORLD);
    CALL(MPI_File_sync, fh);
    CALL(MPI_File_get_size, fh, &file_size);
    if (file_size != (MPI_Offset)size * N)
        conformance_error("after the writes: size %lld, expected %d", (long long)file_size, size * N);
    CALL(MPI_Barrier, MPI_COMM_WORLD);

    CALL(MPI_File_set_size, fh, (MPI_Offset)size * N / 2);
    CALL(MPI_File_get_size, fh, &file_size);
    if (file_size != (MPI_Offset)size * N / 2)
        conformance_error("after set_size(half): size %lld", (long long)file_size);
    char last = 0;
    CALL(MPI_File_read_at, fh, (MPI_Offset)size * N / 2 - 1, &last, 1, MPI_CHAR, &status);
    int count;
    CALL(MPI_Get_count, &status, MPI_CHAR, &count);
    const int owner = (size * N / 2 - 1) / N;
    if (count != 1 || last != 'a' + owner % 26)
        conformance_error("last byte '%c' (count %d), expected '%c'", last, count, 'a' + owner % 26);

    CALL(MPI_File_close, &fh);
    return conformance_finish();
}
