/* MPI_Iallreduce with every predefined operation on int (SUM, PROD, MAX, MIN, LAND, LOR, BAND, BOR,
 * BXOR), all outstanding at once on one communicator and completed by MPI_Waitall, on MPI_COMM_WORLD,
 * on each half of a split and on a duplicate; then one of doubles completed by MPI_Wait. (Polling with
 * MPI_Test: nbc_test_poll.) */
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
        int in[COLL_OPS][N], out[COLL_OPS][N];
        MPI_Request requests[COLL_OPS];
        for (int op = 0; op < COLL_OPS; ++op) {
            for (int i = 0; i < N; ++i) {
                in[op][i] = coll_input(op, rank, i);
                out[op][i] = -1;
            }
            CALL(MPI_Iallreduce, in[op], out[op], N, MPI_INT, ops[op], comms[c], &requests[op]);
        }
        CALL(MPI_Waitall, COLL_OPS, requests, MPI_STATUSES_IGNORE);
        for (int op = 0; op < COLL_OPS; ++op)
            for (int i = 0; i < N; ++i)
                if (out[op][i] != coll_fold(op, 0, size - 1, i))
                    conformance_error("%s %s: out[%d] = %d, expected %d", name, coll_op_names[op], i, out[op][i],
                                      coll_fold(op, 0, size - 1, i));

        double din[N], dout[N];
        for (int i = 0; i < N; ++i)
            din[i] = rank + 0.5 * i;
        MPI_Request request;
        CALL(MPI_Iallreduce, din, dout, N, MPI_DOUBLE, MPI_SUM, comms[c], &request);
        CALL(MPI_Wait, &request, MPI_STATUS_IGNORE);
        for (int i = 0; i < N; ++i)
            if (dout[i] != size * (size - 1) / 2.0 + size * 0.5 * i)
                conformance_error("%s double SUM[%d] = %g", name, i, dout[i]);
    }
    coll_free_comms(comms);
    return conformance_finish();
}
