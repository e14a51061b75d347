/* Non-blocking collective I/O (MPI-3.1): MPI_File_iwrite_at_all of rank-offset blocks and, after a
 * sync-barrier-sync, MPI_File_iread_at_all of the left neighbour's block, both completed by MPI_Waitall
 * together with a non-blocking MPI_Ibarrier. */
#include "../conformance.h"

enum { N = 200 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int left = (rank + size - 1) % size;

    MPI_File fh;
    CALL(MPI_File_open, MPI_COMM_WORLD, "conformance_io_icollective.dat",
         MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh);
    long out[N], in[N];
    for (int i = 0; i < N; ++i) {
        out[i] = rank * 1000L + i;
        in[i] = -1;
    }
    MPI_Request requests[2];
    MPI_Status statuses[2];
    CALL(MPI_File_iwrite_at_all, fh, (MPI_Offset)rank * N * sizeof(long), out, N, MPI_LONG, &requests[0]);
    CALL(MPI_Ibarrier, MPI_COMM_WORLD, &requests[1]);
    CALL(MPI_Waitall, 2, requests, statuses);
    int count;
    CALL(MPI_Get_count, &statuses[0], MPI_LONG, &count);
    if (count != N)
        conformance_error("iwrite_at_all wrote %d longs", count);

    CALL(MPI_File_sync, fh);
    CALL(MPI_Barrier, MPI_COMM_WORLD);
    CALL(MPI_File_sync, fh);
    CALL(MPI_File_iread_at_all, fh, (MPI_Offset)left * N * sizeof(long), in, N, MPI_LONG, &requests[0]);
    CALL(MPI_Ibarrier, MPI_COMM_WORLD, &requests[1]);
    CALL(MPI_Waitall, 2, requests, statuses);
    CALL(MPI_Get_count, &statuses[0], MPI_LONG, &count);
    if (count != N)
        conformance_error("iread_at_all read %d longs", count);
    for (int i = 0; i < N; ++i)
        if (in[i] != left * 1000L + i) {
            conformance_error("left neighbour's block [%d] = %ld", i, in[i]);
            break;
        }

    CALL(MPI_File_close, &fh);
    return conformance_finish();
}
