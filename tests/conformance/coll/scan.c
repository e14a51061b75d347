/* MPI_Scan with SUM, PROD and MAX and MPI_Exscan with SUM and MIN (rank 0's result is undefined and
 * not checked), on MPI_COMM_WORLD, on each half of a split and on a duplicate. */
#include "coll.h"

enum { N = 5 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    MPI_Comm comms[COLL_COMMS];
    coll_make_comms(comms);
    MPI_Op ops[COLL_OPS];
    coll_int_ops(ops);
    for (int c = 0; c < COLL_COMMS; ++c) {
        const char *name = coll_comm_names[c];
        int rank;
        CALL(MPI_Comm_rank, comms[c], &rank);
        const int scanned[3] = {0, 1, 2};
        for (int k = 0; k < 3; ++k) {
            const int op = scanned[k];
            int in[N], out[N];
            for (int i = 0; i < N; ++i) {
                in[i] = coll_input(op, rank, i);
                out[i] = -1;
            }
            CALL(MPI_Scan, in, out, N, MPI_INT, ops[op], comms[c]);
            for (int i = 0; i < N; ++i)
                if (out[i] != coll_fold(op, 0, rank, i))
                    conformance_error("%s Scan %s: out[%d] = %d, expected %d", name, coll_op_names[op], i, out[i],
                                      coll_fold(op, 0, rank, i));
        }
        const int exscanned[2] = {0, 3};
        for (int k = 0; k < 2; ++k) {
            const int op = exscanned[k];
            int in[N], out[N];
            for (int i = 0; i < N; ++i) {
                in[i] = coll_input(op, rank, i);
                out[i] = -1;
            }
            CALL(MPI_Exscan, in, out, N, MPI_INT, ops[op], comms[c]);
            for (int i = 0; rank > 0 && i < N; ++i)
                if (out[i] != coll_fold(op, 0, rank - 1, i))
                    conformance_error("%s Exscan %s: out[%d] = %d, expected %d", name, coll_op_names[op], i, out[i],
                                      coll_fold(op, 0, rank - 1, i));
        }
    }
    coll_free_comms(comms);
    return conformance_finish();
}
