/* Two ranks each MPI_Send a small message to the other, then MPI_Recv the other's: a program that is
 * only correct because MPI buffers small messages (eagerly). check_errors.py traces it, then replays
 * it with a library told not to buffer, where it can only hang: replay must stop the job with one
 * line naming the call instead. No call log: it is not a program whose trace is compared.
 *
 * Usage: head_to_head [BYTES]    (default 2000; two ranks) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int bytes = argc > 1 ? atoi(argv[1]) : 2000;
    if (size != 2 || bytes <= 0) {
        if (rank == 0)
            fprintf(stderr, "head_to_head: two ranks and a positive size, please\n");
        MPI_Finalize();
        return 2;
    }
    char *out = calloc((size_t)bytes, 1);
    char *in = malloc((size_t)bytes);
    const int other = 1 - rank;
    MPI_Send(out, bytes, MPI_CHAR, other, 0, MPI_COMM_WORLD);
    MPI_Recv(in, bytes, MPI_CHAR, other, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rank == 0)
        printf("head_to_head: %d bytes each way\n", bytes);
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
