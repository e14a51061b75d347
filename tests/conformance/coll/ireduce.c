/* MPI_Ireduce with every predefined operation on int (SUM, PROD, MAX, MIN, LAND, LOR, BAND, BOR, BXOR)
 * and MAXLOC on MPI_2INT, all outstanding at once on one communicator and completed by MPI_Waitall, on
 * MPI_COMM_WORLD, on each half of a split and on a duplicate; the root is the last rank (non-zero)
 * except for PROD and BOR, reduced to rank 0. Then one MPI_Ireduce of doubles completed by MPI_Wait. */
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
        int in[COLL_OPS][N], out[COLL_OPS][N], roots[COLL_OPS];
        MPI_Request requests[COLL_OPS + 1];
        for (int op = 0; op < COLL_OPS; ++op) {
            roots[op] = op == 1 || op == 7 ? 0 : size - 1;
            for (int i = 0; i < N; ++i) {
                in[op][i] = coll_input(op, rank, i);
                out[op][i] = -1;
            }
            CALL(MPI_Ireduce, in[op], out[op], N, MPI_INT, ops[op], roots[op], comms[c], &requests[op]);
        }
        struct { int value, rank; } pairs[N], maxloc[N];
        for (int i = 0; i < N; ++i) {
            pairs[i].value = (rank * 5 + i) % 3;
            pairs[i].rank = rank;
        }
        CALL(MPI_Ireduce, pairs, maxloc, N, MPI_2INT, MPI_MAXLOC, size - 1, comms[c], &requests[COLL_OPS]);
        CALL(MPI_Waitall, COLL_OPS + 1, requests, MPI_STATUSES_IGNORE);
        for (int op = 0; op < COLL_OPS; ++op)
            for (int i = 0; rank == roots[op] && i < N; ++i)
                if (out[op][i] != coll_fold(op, 0, size - 1, i))
                    conformance_error("%s %s root %d: out[%d] = %d, expected %d", name, coll_op_names[op], roots[op],
                                      i, out[op][i], coll_fold(op, 0, size - 1, i));
        for (int i = 0; rank == size - 1 && i < N; ++i) {
            int max = -1, max_at = -1;
            for (int r = 0; r < size; ++r)
                if ((r * 5 + i) % 3 > max)
                    max = (r * 5 + i) % 3, max_at = r;
            if (maxloc[i].value != max || maxloc[i].rank != max_at)
                conformance_error("%s MAXLOC[%d] = (%d, %d), expected (%d, %d)", name, i, maxloc[i].value,
                                  maxloc[i].rank, max, max_at);
        }

        double din[N], dout[N];
        for (int i = 0; i < N; ++i)
            din[i] = rank + 0.5 * i;
        MPI_Request request;
        CALL(MPI_Ireduce, din, dout, N, MPI_DOUBLE, MPI_MAX, size - 1, comms[c], &request);
        CALL(MPI_Wait, &request, MPI_STATUS_IGNORE);
        for (int i = 0; rank == size - 1 && i < N; ++i)
            if (dout[i] != size - 1 + 0.5 * i)
                conformance_error("%s double MAX[%d] = %g", name, i, dout[i]);
    }
    coll_free_comms(comms);
    return conformance_finish();
}
