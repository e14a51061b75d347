/* MPI_Bcast from rank 0 and from the last rank (non-zero) on MPI_COMM_WORLD, on each half of a split
 * and on a duplicate: ints, then doubles. */
#include "coll.h"

enum { N = 10 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    MPI_Comm comms[COLL_COMMS];
    coll_make_comms(comms);
    for (int c = 0; c < COLL_COMMS; ++c) {
        int rank, size;
        CALL(MPI_Comm_rank, comms[c], &rank);
        CALL(MPI_Comm_size, comms[c], &size);
        const int roots[2] = {0, size - 1};
        for (int k = 0; k < 2; ++k) {
            const int root = roots[k];
            int ints[N];
            double doubles[N];
            for (int i = 0; i < N; ++i) {
                ints[i] = rank == root ? 1000 * c + 100 * k + i : -1;
                doubles[i] = rank == root ? 0.5 * i + c : -1.0;
            }
            CALL(MPI_Bcast, ints, N, MPI_INT, root, comms[c]);
            CALL(MPI_Bcast, doubles, N, MPI_DOUBLE, root, comms[c]);
            for (int i = 0; i < N; ++i) {
                if (ints[i] != 1000 * c + 100 * k + i)
                    conformance_error("%s root %d: ints[%d] = %d", coll_comm_names[c], root, i, ints[i]);
                if (doubles[i] != 0.5 * i + c)
                    conformance_error("%s root %d: doubles[%d] = %g", coll_comm_names[c], root, i, doubles[i]);
            }
        }
    }
    coll_free_comms(comms);
    return conformance_finish();
}
