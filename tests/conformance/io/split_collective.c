/* Split collective I/O: with a view that starts at the rank's block, MPI_File_write_all_begin /
 * MPI_File_write_all_end, then (after a seek back) MPI_File_read_all_begin / MPI_File_read_all_end,
 * and MPI_File_read_at_all_begin / MPI_File_read_at_all_end of half the block, with computation
 * between begin and end. */
#include "../conformance.h"

enum { N = 128 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);

    MPI_File fh;
    CALL(MPI_File_open, MPI_COMM_WORLD, "conformance_io_split_collective.dat",
         MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh);
    CALL(MPI_File_set_view, fh, (MPI_Offset)rank * N * sizeof(int), MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    int out[N], in[N];
    for (int i = 0; i < N; ++i)
        out[i] = rank * 100000 + i;
    MPI_Status status;
    CALL(MPI_File_write_all_begin, fh, out, N, MPI_INT);
    long sum = 0;
    for (int i = 0; i < N; ++i)
        sum += i;
    CALL(MPI_File_write_all_end, fh, out, &status);
    int count;
    CALL(MPI_Get_count, &status, MPI_INT, &count);
    if (count != N)
        conformance_error("write_all_end: %d ints", count);

    CALL(MPI_File_seek, fh, 0, MPI_SEEK_SET);
    for (int i = 0; i < N; ++i)
        in[i] = -1;
    CALL(MPI_File_read_all_begin, fh, in, N, MPI_INT);
    CALL(MPI_File_read_all_end, fh, in, &status);
    CALL(MPI_Get_count, &status, MPI_INT, &count);
    if (count != N)
        conformance_error("read_all_end: %d ints", count);
    for (int i = 0; i < N; ++i)
        if (in[i] != out[i]) {
            conformance_error("read_all [%d] = %d", i, in[i]);
            break;
        }

    CALL(MPI_File_read_at_all_begin, fh, N / 2, in, N / 2, MPI_INT);
    CALL(MPI_File_read_at_all_end, fh, in, &status);
    for (int i = 0; i < N / 2; ++i)
        if (in[i] != out[N / 2 + i]) {
            conformance_error("read_at_all [%d] = %d", i, in[i]);
            break;
        }
    if (sum != (long)N * (N - 1) / 2)
        conformance_error("sum %ld", sum);

    CALL(MPI_File_close, &fh);
    return conformance_finish();
}
