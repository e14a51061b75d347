/* A token passed around the ring hop by hop, the lap as its tag: rank 0 starts each lap, every rank
 * adds its rank to the token and passes it on. The tag and the token's value are checked at every hop. */
#include "conformance.h"

enum { LAPS = 12 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    const long long per_lap = (long long)size * (size - 1) / 2;
    long long token = 0;
    for (int lap = 0; lap < LAPS; ++lap) {
        MPI_Status status;
        if (rank == 0) {
            CALL(MPI_Send, &token, 1, MPI_LONG_LONG, right, lap, MPI_COMM_WORLD);
            CALL(MPI_Recv, &token, 1, MPI_LONG_LONG, left, lap, MPI_COMM_WORLD, &status);
            if (token != (lap + 1) * per_lap)
                conformance_error("lap %d: the token came back as %lld, expected %lld", lap, token, (lap + 1) * per_lap);
        } else {
            CALL(MPI_Recv, &token, 1, MPI_LONG_LONG, left, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
            const long long expected = lap * per_lap + (long long)rank * (rank - 1) / 2;
            if (token != expected)
                conformance_error("lap %d: token %lld, expected %lld", lap, token, expected);
            token += rank;
            CALL(MPI_Send, &token, 1, MPI_LONG_LONG, right, lap, MPI_COMM_WORLD);
        }
        if (status.MPI_TAG != lap || status.MPI_SOURCE != left)
            conformance_error("lap %d: received tag %d from %d", lap, status.MPI_TAG, status.MPI_SOURCE);
    }
    return conformance_finish();
}
