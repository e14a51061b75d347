/* MPI_Reduce with every predefined operation on int (SUM, PROD, MAX, MIN, LAND, LOR, BAND, BOR, BXOR),
 * MAXLOC and MINLOC on MPI_2INT and SUM on double, on MPI_COMM_WORLD, on each half of a split and on a
 * duplicate; the root is the last rank (non-zero) except for PROD and BOR, reduced to rank 0. */
#include "coll.h"

enum { N = 6 };

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
        for (int op = 0; op < COLL_OPS; ++op) {
            const int root = op == 1 || op == 7 ? 0 : size - 1;
            int in[N], out[N];
            for (int i = 0; i < N; ++i) {
                in[i] = coll_input(op, rank, i);
                out[i] = -1;
            }
            CALL(MPI_Reduce, in, out, N, MPI_INT, ops[op], root, comms[c]);
            for (int i = 0; rank == root && i < N; ++i)
                if (out[i] != coll_fold(op, 0, size - 1, i))
                    conformance_error("%s %s root %d: out[%d] = %d, expected %d", name, coll_op_names[op], root, i,
                                      out[i], coll_fold(op, 0, size - 1, i));
        }

        struct { int value, rank; } pairs[N], maxloc[N], minloc[N];
        for (int i = 0; i < N; ++i) {
            pairs[i].value = (rank * 5 + i) % 3;
            pairs[i].rank = rank;
        }
        CALL(MPI_Reduce, pairs, maxloc, N, MPI_2INT, MPI_MAXLOC, size - 1, comms[c]);
        CALL(MPI_Reduce, pairs, minloc, N, MPI_2INT, MPI_MINLOC, size - 1, comms[c]);
        for (int i = 0; rank == size - 1 && i < N; ++i) {
            int max = -1, max_at = -1, min = 99, min_at = -1;
            for (int r = 0; r < size; ++r) {
                const int v = (r * 5 + i) % 3;
                if (v > max) max = v, max_at = r;
                if (v < min) min = v, min_at = r;
            }
            if (maxloc[i].value != max || maxloc[i].rank != max_at)
                conformance_error("%s MAXLOC[%d] = (%d, %d), expected (%d, %d)", name, i, maxloc[i].value,
                                  maxloc[i].rank, max, max_at);
            if (minloc[i].value != min || minloc[i].rank != min_at)
                conformance_error("%s MINLOC[%d] = (%d, %d), expected (%d, %d)", name, i, minloc[i].value,
                                  minloc[i].rank, min, min_at);
        }

        double din[N], dout[N];
        for (int i = 0; i < N; ++i)
            din[i] = rank + 0.5 * i;
        CALL(MPI_Reduce, din, dout, N, MPI_DOUBLE, MPI_SUM, size - 1, comms[c]);
        for (int i = 0; rank == size - 1 && i < N; ++i)
            if (dout[i] != size * (size - 1) / 2.0 + size * 0.5 * i)
                conformance_error("%s double SUM[%d] = %g", name, i, dout[i]);
    }
    coll_free_comms(comms);
    return conformance_finish();
}
