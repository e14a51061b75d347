/* Collective explicit-offset I/O: MPI_File_write_at_all of rank-offset blocks, the file closed and
 * opened again read-only (which makes the writes visible to all), MPI_File_read_at_all of the block of
 * the rank two to the right. */
#include "../conformance.h"

enum { N = 300 };

static const char *name = "conformance_io_collective_at_all.dat";

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int other = (rank + 2) % size;

    MPI_File fh;
    CALL(MPI_File_open, MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    double out[N], in[N];
    for (int i = 0; i < N; ++i)
        out[i] = rank + i / 1000.0;
    MPI_Status status;
    int count;
    CALL(MPI_File_write_at_all, fh, (MPI_Offset)rank * N * sizeof(double), out, N, MPI_DOUBLE, &status);
    CALL(MPI_Get_count, &status, MPI_DOUBLE, &count);
    if (count != N)
        conformance_error("wrote %d doubles", count);
    CALL(MPI_File_close, &fh);

    CALL(MPI_File_open, MPI_COMM_WORLD, name, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh);
    CALL(MPI_File_read_at_all, fh, (MPI_Offset)other * N * sizeof(double), in, N, MPI_DOUBLE, &status);
    CALL(MPI_Get_count, &status, MPI_DOUBLE, &count);
    if (count != N)
        conformance_error("read %d doubles", count);
    for (int i = 0; i < N; ++i)
        if (in[i] != other + i / 1000.0) {
            conformance_error("block of rank %d [%d] = %g", other, i, in[i]);
            break;
        }
    CALL(MPI_File_close, &fh);
    return conformance_finish();
}
