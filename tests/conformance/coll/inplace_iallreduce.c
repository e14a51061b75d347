/* MPI_Iallreduce with MPI_IN_PLACE (each rank's input in the receive buffer, overwritten by the
 * result) with SUM, MAX and BXOR on int, all outstanding at once and completed by MPI_Waitall, and SUM
 * on double completed by MPI_Wait, on MPI_COMM_WORLD, on each half of a split and on a duplicate. */
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
        const int used[3] = {0, 2, 8};
        int buf[3][N];
        MPI_Request requests[3];
        for (int k = 0; k < 3; ++k) {
            for (int i = 0; i < N; ++i)
                buf[k][i] = coll_input(used[k], rank, i);
            CALL(MPI_Iallreduce, MPI_IN_PLACE, buf[k], N, MPI_INT, ops[used[k]], comms[c], &requests[k]);
        }
        CALL(MPI_Waitall, 3, requests, MPI_STATUSES_IGNORE);
        for (int k = 0; k < 3; ++k)
            for (int i = 0; i < N; ++i)
                if (buf[k][i] != coll_fold(used[k], 0, size - 1, i))
                    conformance_error("%s %s: buf[%d] = %d, expected %d", name, coll_op_names[used[k]], i, buf[k][i],
                                      coll_fold(used[k], 0, size - 1, i));
        double dbuf[N];
        for (int i = 0; i < N; ++i)
            dbuf[i] = rank + 0.5 * i;
        MPI_Request request;
        CALL(MPI_Iallreduce, MPI_IN_PLACE, dbuf, N, MPI_DOUBLE, MPI_SUM, comms[c], &request);
        CALL(MPI_Wait, &request, MPI_STATUS_IGNORE);
        for (int i = 0; i < N; ++i)
            if (dbuf[i] != size * (size - 1) / 2.0 + size * 0.5 * i)
                conformance_error("%s double SUM[%d] = %g", name, i, dbuf[i]);
    }
    coll_free_comms(comms);
    return conformance_finish();
}
