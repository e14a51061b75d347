/* Cost per intercepted I/O call: a tight loop of small writes (8 bytes, each rank to a file of its
   own, at offsets cycling over 1,024 positions), timed inside the program so start-up, MPI_Init and
   MPI_Finalize do not count. MPI-IO's MPI_File_write_at on MPI_COMM_SELF, or with `posix` POSIX's
   pwrite. Prints, from rank 0: calls per rank and the median time per call over the repetitions.
   Files go to the current directory and are deleted at the end.

   Usage: io_cost [ITERATIONS [REPETITIONS [posix]]]    (defaults 20000 and 5) */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    const int posix = argc > 3 && strcmp(argv[3], "posix") == 0;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char name[64];
    snprintf(name, sizeof name, "io_cost.%d", rank);
    MPI_File file = MPI_FILE_NULL;
    int fd = -1;
    if (posix) {
        fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    } else {
        MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &file);
    }
    const double value = 1.0;
    double per_call[64];
    for (int r = 0; r < repetitions && r < 64; ++r) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double start = MPI_Wtime();
        if (posix) {
            for (int i = 0; i < iterations; ++i) {
                if (pwrite(fd, &value, sizeof value, (off_t)(i % 1024) * 8) != sizeof value) MPI_Abort(MPI_COMM_WORLD, 1);
            }
        } else {
            for (int i = 0; i < iterations; ++i) {
                MPI_File_write_at(file, (MPI_Offset)(i % 1024) * 8, &value, 1, MPI_DOUBLE, MPI_STATUS_IGNORE);
            }
        }
        per_call[r] = (MPI_Wtime() - start) / iterations;
    }
    if (posix) {
        close(fd);
        unlink(name);
    } else {
        MPI_File_close(&file);
        MPI_File_delete(name, MPI_INFO_NULL);
    }
    qsort(per_call, (size_t)repetitions, sizeof(double), compare);
    if (rank == 0) printf("calls_per_rank %d median_ns_per_call %.1f\n", iterations * repetitions, per_call[repetitions / 2] * 1e9);
    MPI_Finalize();
    return 0;
}
