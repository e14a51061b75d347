/* Cost per intercepted POSIX I/O call: a tight loop of small pwrite calls (8 bytes, each rank to a
   file of its own), timed inside the program so start-up, MPI_Init and MPI_Finalize do not count.
   Prints, from rank 0: calls per rank and the median time per call over the repetitions. Files go
   to the current directory and are removed at the end. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int compare(const void* a, const void* b)
{
    const double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    const int iterations = argc > 1 ? atoi(argv[1]) : 20000;
    const int repetitions = argc > 2 ? atoi(argv[2]) : 5;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char name[64];
    snprintf(name, sizeof name, "posix_io_cost.%d", rank);
    const int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(name);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const double value = 1.0;
    double per_call[64];
    for (int r = 0; r < repetitions && r < 64; ++r) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double start = MPI_Wtime();
        for (int i = 0; i < iterations; ++i) {
            if (pwrite(fd, &value, sizeof value, (off_t)(i % 1024) * 8) != sizeof value) MPI_Abort(MPI_COMM_WORLD, 1);
        }
        per_call[r] = (MPI_Wtime() - start) / iterations;
    }
    close(fd);
    unlink(name);
    qsort(per_call, (size_t)repetitions, sizeof(double), compare);
    if (rank == 0) printf("calls_per_rank %d median_ns_per_call %.1f\n", iterations * repetitions, per_call[repetitions / 2] * 1e9);
    MPI_Finalize();
    return 0;
}
