/* MPI_Allreduce with every predefined operation on int (SUM, PROD, MAX, MIN, LAND, LOR, BAND, BOR,
 * BXOR), MINLOC on MPI_DOUBLE_INT and SUM on double, on MPI_COMM_WORLD, on each half of a split and on
 * a duplicate. */
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
            int in[N], out[N];
            for (int i = 0; i < N; ++i) {
                in[i] = coll_input(op, rank, i);
                out[i] = -1;
            }
            CALL(MPI_Allreduce, in, out, N, MPI_INT, ops[op], comms[c]);
            for (int i = 0; i < N; ++i)
                if (out[i] != coll_fold(op, 0, size - 1, i))
                    conformance_error("%s %s: out[%d] = %d, expected %d", name, coll_op_names[op], i, out[i],
                                      coll_fold(op, 0, size - 1, i));
        }

        struct { double value; int rank; } pairs[N], minloc[N];
        for (int i = 0; i < N; ++i) {
            pairs[i].value = 0.5 * ((rank * 5 + i) % 3);
            pairs[i].rank = rank;
        }
        CALL(MPI_Allreduce, pairs, minloc, N, MPI_DOUBLE_INT, MPI_MINLOC, comms[c]);
        for (int i = 0; i < N; ++i) {
            double min = 99;
            int min_at = -1;
            for (int r = 0; r < size; ++r)
                if (0.5 * ((r * 5 + i) % 3) < min)
                    min = 0.5 * ((r * 5 + i) % 3), min_at = r;
            if (minloc[i].value != min || minloc[i].rank != min_at)
                conformance_error("%s MINLOC[%d] = (%g, %d), expected (%g, %d)", name, i, minloc[i].value,
                                  minloc[i].rank, min, min_at);
        }

        double din[N], dout[N];
        for (int i = 0; i < N; ++i)
            din[i] = rank + 0.5 * i;
        CALL(MPI_Allreduce, din, dout, N, MPI_DOUBLE, MPI_SUM, comms[c]);
        for (int i = 0; i < N; ++i)
            if (dout[i] != size * (size - 1) / 2.0 + size * 0.5 * i)
                conformance_error("%s double SUM[%d] = %g", name, i, dout[i]);
    }
    coll_free_comms(comms);
    return conformance_finish();
}
