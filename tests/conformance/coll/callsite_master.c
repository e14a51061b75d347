/* A master/worker step around collectives called from different call sites: the master (rank 1,
 * non-zero) receives one result from each worker with MPI_Recv from MPI_ANY_SOURCE while the workers
 * send theirs, then the master calls MPI_Reduce and MPI_Bcast from its own call statements and the
 * workers from theirs; five steps, on MPI_COMM_WORLD. Each rank's calls around the collectives differ. */
#include "coll.h"

enum { STEPS = 5, MASTER = 1 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int master = size > MASTER ? MASTER : 0;
    for (int step = 0; step < STEPS; ++step) {
        int mine = 100 * step + rank, total = -1, verdict = -1;
        if (rank == master) {
            int sum = mine, seen = 0;
            for (int k = 0; k < size - 1; ++k) {
                int result;
                MPI_Status status;
                CALL(MPI_Recv, &result, 1, MPI_INT, MPI_ANY_SOURCE, step, MPI_COMM_WORLD, &status);
                if (result != 100 * step + status.MPI_SOURCE || status.MPI_SOURCE == master)
                    conformance_error("step %d: %d from %d", step, result, status.MPI_SOURCE);
                seen |= 1 << status.MPI_SOURCE;
                sum += result;
            }
            if (seen != ((1 << size) - 1) - (1 << master))
                conformance_error("step %d: workers seen %#x", step, seen);
            CALL(MPI_Reduce, &mine, &total, 1, MPI_INT, MPI_SUM, master, MPI_COMM_WORLD);
            if (total != sum)
                conformance_error("step %d: reduced %d, received %d", step, total, sum);
            verdict = total % 7;
            CALL(MPI_Bcast, &verdict, 1, MPI_INT, master, MPI_COMM_WORLD);
        } else {
            CALL(MPI_Send, &mine, 1, MPI_INT, master, step, MPI_COMM_WORLD);
            CALL(MPI_Reduce, &mine, NULL, 1, MPI_INT, MPI_SUM, master, MPI_COMM_WORLD);
            CALL(MPI_Bcast, &verdict, 1, MPI_INT, master, MPI_COMM_WORLD);
        }
        if (verdict != (100 * step * size + size * (size - 1) / 2) % 7)
            conformance_error("step %d: verdict %d", step, verdict);
    }
    return conformance_finish();
}
