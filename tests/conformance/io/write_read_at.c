/* Explicit offsets: every rank writes its block at an offset that follows its rank (MPI_File_write_at),
 * reads it back (MPI_File_read_at, count from MPI_Get_count), and after MPI_File_sync, a barrier and
 * MPI_File_sync reads the right neighbour's block. The file is deleted on close. */
#include "../conformance.h"

enum { N = 256 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size;

    MPI_File fh;
    int err = CALL(MPI_File_open, MPI_COMM_WORLD, "conformance_io_write_read_at.dat",
                   MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh);
    if (err != MPI_SUCCESS) {
        conformance_error("MPI_File_open failed");
        return conformance_finish();
    }
    int out[N], in[N];
    for (int i = 0; i < N; ++i)
        out[i] = rank * 10000 + i;
    MPI_Status status;
    int count;
    CALL(MPI_File_write_at, fh, (MPI_Offset)rank * N * sizeof(int), out, N, MPI_INT, &status);
    CALL(MPI_Get_count, &status, MPI_INT, &count);
    if (count != N)
        conformance_error("wrote %d ints", count);

    for (int i = 0; i < N; ++i)
        in[i] = -1;
    CALL(MPI_File_read_at, fh, (MPI_Offset)rank * N * sizeof(int), in, N, MPI_INT, &status);
    CALL(MPI_Get_count, &status, MPI_INT, &count);
    if (count != N)
        conformance_error("read %d ints of my block", count);
    for (int i = 0; i < N; ++i)
        if (in[i] != out[i])
            conformance_error("my block [%d] = %d", i, in[i]);

    CALL(MPI_File_sync, fh);
    CALL(MPI_Barrier, MPI_COMM_WORLD);
    CALL(MPI_File_sync, fh);
    CALL(MPI_File_read_at, fh, (MPI_Offset)right * N * sizeof(int), in, N, MPI_INT, &status);
    CALL(MPI_Get_count, &status, MPI_INT, &count);
    if (count != N)
        conformance_error("read %d ints of the right neighbour's block", count);
    for (int i = 0; i < N; ++i)
        if (in[i] != right * 10000 + i) {
            conformance_error("right neighbour's block [%d] = %d", i, in[i]);
            break;
        }

    CALL(MPI_File_close, &fh);
    return conformance_finish();
}
