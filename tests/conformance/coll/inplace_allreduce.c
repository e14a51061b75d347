/* MPI_Allreduce with MPI_IN_PLACE (each rank's input in the receive buffer, overwritten by the result)
 * with SUM, MAX and BXOR on int and SUM on double, on MPI_COMM_WORLD, on each half of a split and on a
 * duplicate. */
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
        for (int k = 0; k < 3; ++k) {
            const int op = used[k];
            int buf[N];
            for (int i = 0; i < N; ++i)
                buf[i] = coll_input(op, rank, i);
            CALL(MPI_Allreduce, MPI_IN_PLACE, buf, N, MPI_INT, ops[op], comms[c]);
            for (int i = 0; i < N; ++i)
                if (buf[i] != coll_fold(op, 0, size - 1, i))
                    conformance_error("%s %s: buf[%d] = %d, expected %d", name, coll_op_names[op], i, buf[i],
                                      coll_fold(op, 0, size - 1, i));
        }
        double dbuf[N];
        for (int i = 0; i < N; ++i)
            dbuf[i] = rank + 0.5 * i;
        CALL(MPI_Allreduce, MPI_IN_PLACE, dbuf, N, MPI_DOUBLE, MPI_SUM, comms[c]);
        for (int i = 0; i < N; ++i)
            if (dbuf[i] != size * (size - 1) / 2.0 + size * 0.5 * i)
                conformance_error("%s double SUM[%d] = %g", name, i, dbuf[i]);
    }
    coll_free_comms(comms);
    return conformance_finish();
}
