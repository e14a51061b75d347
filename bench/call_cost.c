/* Cost per intercepted call: a tight loop of Irecv/Isend/Waitall between ring neighbours,
   timed inside the program so process start-up and MPI_Init/Finalize do not count.
   Prints, from rank 0: calls per rank and the median seconds per call over the repetitions. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int compare(const void* a, const void* b)
{
    const double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    const int iterations = argc > 1 ? atoi(argv[1]) : 100000;
    const int repetitions = argc > 2 ? atoi(argv[2]) : 5;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int left = (rank + size - 1) % size, right = (rank + 1) % size;
    double send[2] = {1, 2}, recv[2];
    double per_call[64];
    for (int r = 0; r < repetitions && r < 64; ++r) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double start = MPI_Wtime();
        for (int i = 0; i < iterations; ++i) {
            MPI_Request requests[4];
            MPI_Irecv(&recv[0], 1, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &requests[0]);
            MPI_Irecv(&recv[1], 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &requests[1]);
            MPI_Isend(&send[0], 1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &requests[2]);
            MPI_Isend(&send[1], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &requests[3]);
            MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
        }
        per_call[r] = (MPI_Wtime() - start) / (5.0 * iterations);
    }
    qsort(per_call, (size_t)repetitions, sizeof(double), compare);
    if (rank == 0) printf("calls_per_rank %d median_ns_per_call %.1f\n", 5 * iterations * repetitions, per_call[repetitions / 2] * 1e9);
    MPI_Finalize();
    return 0;
}
