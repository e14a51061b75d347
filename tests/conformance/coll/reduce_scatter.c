/* MPI_Reduce_scatter (rank j gets j + 1 elements of the result) with SUM, MAX and BXOR, and
 * MPI_Reduce_scatter_block (2 elements each) with SUM and MIN, on MPI_COMM_WORLD, on each half of a
 * split and on a duplicate. */
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
        for (int k = 0; k < 3; ++k) {
            const int op = varying[k];
            int in[TOTAL], out[MAX_RANKS];
            for (int i = 0; i < total; ++i)
                in[i] = coll_input(op, rank, i);
            for (int i = 0; i < MAX_RANKS; ++i)
                out[i] = -1;
            CALL(MPI_Reduce_scatter, in, out, counts, MPI_INT, ops[op], comms[c]);
            for (int i = 0; i < counts[rank]; ++i)
                if (out[i] != coll_fold(op, 0, size - 1, first + i))
                    conformance_error("%s Reduce_scatter %s: out[%d] = %d, expected %d", name, coll_op_names[op], i,
                                      out[i], coll_fold(op, 0, size - 1, first + i));
            if (out[counts[rank]] != -1)
                conformance_error("%s Reduce_scatter %s: written past the count", name, coll_op_names[op]);
        }
        const int blocked[2] = {0, 3};
        for (int k = 0; k < 2; ++k) {
            const int op = blocked[k];
            int in[MAX_RANKS * BLOCK], out[BLOCK + 1] = {-1, -1, -1};
            for (int i = 0; i < size * BLOCK; ++i)
                in[i] = coll_input(op, rank, i);
            CALL(MPI_Reduce_scatter_block, in, out, BLOCK, MPI_INT, ops[op], comms[c]);
            for (int i = 0; i < BLOCK; ++i)
                if (out[i] != coll_fold(op, 0, size - 1, rank * BLOCK + i))
                    conformance_error("%s Reduce_scatter_block %s: out[%d] = %d, expected %d", name,
                                      coll_op_names[op], i, out[i], coll_fold(op, 0, size - 1, rank * BLOCK + i));
            if (out[BLOCK] != -1)
                conformance_error("%s Reduce_scatter_block %s: written past the count", name, coll_op_names[op]);
        }
    }
    coll_free_comms(comms);
    return conformance_finish();
}
