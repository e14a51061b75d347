/* MPI_Win_allocate_shared on the node's communicator (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED):
 * MPI_Win_shared_query gives the address of the right neighbour's segment (and, with MPI_PROC_NULL, of
 * the first non-empty one); stores and loads through those addresses in a lock_all epoch synchronized by
 * MPI_Win_sync and MPI_Barrier; then an MPI_Put into the neighbour's segment in a fence epoch. */
#include "../conformance.h"

enum { N = 8 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int world_rank;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &world_rank);
    MPI_Comm node;
    CALL(MPI_Comm_split_type, MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int rank, size;
    CALL(MPI_Comm_rank, node, &rank);
    CALL(MPI_Comm_size, node, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;

    int *mine = NULL;
    MPI_Win win;
    CALL(MPI_Win_allocate_shared, (MPI_Aint)(N * sizeof(int)), sizeof(int), MPI_INFO_NULL, node, &mine, &win);

    MPI_Aint segment_size;
    int unit;
    int *theirs = NULL, *first = NULL;
    CALL(MPI_Win_shared_query, win, right, &segment_size, &unit, &theirs);
    if (segment_size != (MPI_Aint)(N * sizeof(int)) || unit != (int)sizeof(int) || theirs == NULL)
        conformance_error("shared_query(right): size %ld unit %d", (long)segment_size, unit);
    CALL(MPI_Win_shared_query, win, MPI_PROC_NULL, &segment_size, &unit, &first);
    if (segment_size != (MPI_Aint)(N * sizeof(int)) || first == NULL)
        conformance_error("shared_query(MPI_PROC_NULL): size %ld", (long)segment_size);

    CALL(MPI_Win_lock_all, 0, win);
    for (int i = 0; i < N; ++i)
        mine[i] = rank * 10 + i;
    CALL(MPI_Win_sync, win);
    CALL(MPI_Barrier, node);
    CALL(MPI_Win_sync, win);
    for (int i = 0; i < N; ++i)
        if (theirs[i] != right * 10 + i)
            conformance_error("load from right's segment [%d] = %d", i, theirs[i]);
    if (first[0] != 0 || first[1] != 1)
        conformance_error("first segment starts %d %d", first[0], first[1]);
    CALL(MPI_Win_unlock_all, win);

    int out[N];
    for (int i = 0; i < N; ++i)
        out[i] = 1000 + rank * 10 + i;
    CALL(MPI_Win_fence, 0, win);
    CALL(MPI_Put, out, N, MPI_INT, right, 0, N, MPI_INT, win);
    CALL(MPI_Win_fence, 0, win);
    for (int i = 0; i < N; ++i)
        if (mine[i] != 1000 + left * 10 + i)
            conformance_error("after put [%d] = %d", i, mine[i]);

    CALL(MPI_Win_free, &win);
    CALL(MPI_Comm_free, &node);
    (void)world_rank;
    return conformance_finish();
}
