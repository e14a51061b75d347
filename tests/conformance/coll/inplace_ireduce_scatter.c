/* MPI_Ireduce_scatter (rank j gets j + 1 elements) with SUM and MAX, and MPI_Ireduce_scatter_block (2
 * elements each) with SUM, with MPI_IN_PLACE (each rank's whole input in its receive buffer, its part
 * of the result left at the start of it), the three outstanding at once and completed by MPI_Waitall,
 * on MPI_COMM_WORLD, on each half of a split and on a duplicate. */
#include "coll.h"

enum { MAX_RANKS = 16, TOTAL = MAX_RANKS * (MAX_RANKS + 1) / 2, BLOCK = 2 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    MPI_Comm comms[COLL_COMMS];
    coll_make_comms(comms);
    MPI_Op ops[COLL_OPS];
    coll_int_ops(ops);
    for (int c = 0; c < COLL_COMMS; ++c) {
        const char *name = coll_comm_names[c];
        int rank, size;
        CALL(MPI_Comm_rank, comms[c], &rank);
        CALL(MPI_Comm_size, comms[c], &size);
        int counts[MAX_RANKS], first = 0, total = 0;
        for (int j = 0; j < size; ++j) {
            counts[j] = j + 1;
            if (j == rank)
                first = total;
            total += counts[j];
        }
        const int used[2] = {0, 2};
        int buf[2][TOTAL], block[MAX_RANKS * BLOCK];
        MPI_Request requests[3];
        for (int k = 0; k < 2; ++k) {
            for (int i = 0; i < total; ++i)
                buf[k][i] = coll_input(used[k], rank, i);
            CALL(MPI_Ireduce_scatter, MPI_IN_PLACE, buf[k], counts, MPI_INT, ops[used[k]], comms[c], &requests[k]);
        }
        for (int i = 0; i < size * BLOCK; ++i)
            block[i] = coll_input(0, rank, i);
        CALL(MPI_Ireduce_scatter_block, MPI_IN_PLACE, block, BLOCK, MPI_INT, MPI_SUM, comms[c], &requests[2]);
        CALL(MPI_Waitall, 3, requests, MPI_STATUSES_IGNORE);
        for (int k = 0; k < 2; ++k)
            for (int i = 0; i < counts[rank]; ++i)
                if (buf[k][i] != coll_fold(used[k], 0, size - 1, first + i))
                    conformance_error("%s Ireduce_scatter %s: buf[%d] = %d, expected %d", name, coll_op_names[used[k]],
                                      i, buf[k][i], coll_fold(used[k], 0, size - 1, first + i));
        for (int i = 0; i < BLOCK; ++i)
            if (block[i] != coll_fold(0, 0, size - 1, rank * BLOCK + i))
                conformance_error("%s Ireduce_scatter_block SUM: buf[%d] = %d, expected %d", name, i, block[i],
                                  coll_fold(0, 0, size - 1, rank * BLOCK + i));
    }
    coll_free_comms(comms);
    return conformance_finish();
}
