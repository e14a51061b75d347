/* MPI_Ireduce with MPI_IN_PLACE at the root (its input in its receive buffer; the other ranks pass a
 * send buffer and no receive buffer) with SUM, PROD, MAX and BOR, all outstanding at once and completed
 * by MPI_Waitall, to the last rank (non-zero) and, for PROD, to rank 0, on MPI_COMM_WORLD, on each half
 * of a split and on a duplicate. */
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
        const int used[4] = {0, 1, 2, 7};
        int buf[4][N], roots[4];
        MPI_Request requests[4];
        for (int k = 0; k < 4; ++k) {
            const int op = used[k];
            roots[k] = op == 1 ? 0 : size - 1;
            for (int i = 0; i < N; ++i)
                buf[k][i] = coll_input(op, rank, i);
            if (rank == roots[k])
                CALL(MPI_Ireduce, MPI_IN_PLACE, buf[k], N, MPI_INT, ops[op], roots[k], comms[c], &requests[k]);
            else
                CALL(MPI_Ireduce, buf[k], NULL, N, MPI_INT, ops[op], roots[k], comms[c], &requests[k]);
        }
        CALL(MPI_Waitall, 4, requests, MPI_STATUSES_IGNORE);
        for (int k = 0; k < 4; ++k)
            for (int i = 0; i < N; ++i) {
                const int op = used[k];
                const int expected = rank == roots[k] ? coll_fold(op, 0, size - 1, i) : coll_input(op, rank, i);
                if (buf[k][i] != expected)
                    conformance_error("%s %s root %d: buf[%d] = %d, expected %d", name, coll_op_names[op], roots[k], i,
                                      buf[k][i], expected);
            }
    }
    coll_free_comms(comms);
    return conformance_finish();
}
