/* Non-blocking explicit-offset I/O: MPI_File_iwrite_at of two halves of the rank's block completed
 * by MPI_Wait each, MPI_File_iread_at of the block completed by MPI_Wait (count from its status),
 * and an MPI_File_iread_at polled with MPI_Test until done. */
#include "../conformance.h"

enum { N = 512 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);

    MPI_File fh;
    CALL(MPI_File_open, MPI_COMM_WORLD, "conformance_io_nonblocking.dat",
         MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh);
    const MPI_Offset base = (MPI_Offset)rank * N * sizeof(short);
    short out[N], in[N];
    for (int i = 0; i < N; ++i)
        out[i] = (short)(rank * 1000 + i);
    MPI_Request first, second;
    MPI_Status status;
    CALL(MPI_File_iwrite_at, fh, base, out, N / 2, MPI_SHORT, &first);
    CALL(MPI_File_iwrite_at, fh, base + N / 2 * sizeof(short), out + N / 2, N - N / 2, MPI_SHORT, &second);
    CALL(MPI_Wait, &first, &status);
    CALL(MPI_Wait, &second, &status);

    for (int i = 0; i < N; ++i)
        in[i] = -1;
    MPI_Request request;
    CALL(MPI_File_iread_at, fh, base, in, N, MPI_SHORT, &request);
    CALL(MPI_Wait, &request, &status);
    int count;
    CALL(MPI_Get_count, &status, MPI_SHORT, &count);
    if (count != N)
        conformance_error("iread_at read %d shorts", count);
    for (int i = 0; i < N; ++i)
        if (in[i] != out[i]) {
            conformance_error("block [%d] = %d", i, in[i]);
            break;
        }

    short tail[8];
    CALL(MPI_File_iread_at, fh, base + (N - 8) * sizeof(short), tail, 8, MPI_SHORT, &request);
    int done = 0;
    while (!done)
        CALL(MPI_Test, &request, &done, &status);
    for (int i = 0; i < 8; ++i)
        if (tail[i] != out[N - 8 + i])
            conformance_error("tail [%d] = %d", i, tail[i]);

    CALL(MPI_File_close, &fh);
    return conformance_finish();
}
