/* MPI_Ireduce_scatter (rank j gets j + 1 elements of the result) with SUM, MAX and BXOR, all three
 * outstanding at once and completed by MPI_Waitall, and MPI_Ireduce_scatter_block (2 elements each)
 * with MIN completed by MPI_Wait, on MPI_COMM_WORLD, on each half of a split and on a duplicate. */
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
        const int varying[3] = {0, 2, 8};
        int in[3][TOTAL], out[3][MAX_RANKS];
        MPI_Request requests[3];
        for (int k = 0; k < 3; ++k) {
            for (int i = 0; i < total; ++i)
                in[k][i] = coll_input(varying[k], rank, i);
            for (int i = 0; i < MAX_RANKS; ++i)
                out[k][i] = -1;
            CALL(MPI_Ireduce_scatter, in[k], out[k], counts, MPI_INT, ops[varying[k]], comms[c], &requests[k]);
        }
        CALL(MPI_Waitall, 3, requests, MPI_STATUSES_IGNORE);
        for (int k = 0; k < 3; ++k) {
            const int op = varying[k];
            for (int i = 0; i < counts[rank]; ++i)
                if (out[k][i] != coll_fold(op, 0, size - 1, first + i))
                    conformance_error("%s Ireduce_scatter %s: out[%d] = %d, expected %d", name, coll_op_names[op], i,
                                      out[k][i], coll_fold(op, 0, size - 1, first + i));
            if (out[k][counts[rank]] != -1)
                conformance_error("%s Ireduce_scatter %s: written past the count", name, coll_op_names[op]);
        }

        int bin[MAX_RANKS * BLOCK], bout[BLOCK + 1] = {-1, -1, -1};
        for (int i = 0; i < size * BLOCK; ++i)
            bin[i] = coll_input(3, rank, i);
        MPI_Request request;
        CALL(MPI_Ireduce_scatter_block, bin, bout, BLOCK, MPI_INT, MPI_MIN, comms[c], &request);
        CALL(MPI_Wait, &request, MPI_STATUS_IGNORE);
        for (int i = 0; i < BLOCK; ++i)
            if (bout[i] != coll_fold(3, 0, size - 1, rank * BLOCK + i))
                conformance_error("%s Ireduce_scatter_block MIN: out[%d] = %d, expected %d", name, i, bout[i],
                                  coll_fold(3, 0, size - 1, rank * BLOCK + i));
        if (bout[BLOCK] != -1)
            conformance_error("%s Ireduce_scatter_block MIN: written past the count", name);
    }
    coll_free_comms(comms);
    return conformance_finish();
}
