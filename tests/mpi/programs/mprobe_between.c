/* A receive between a matched probe and its MPI_Mrecv. Ranks pair up (0 with 1, 2 with 3 ...; an odd
 * rank count leaves the last rank out of the pairs); per step the odd rank of a pair sends the even one
 * two messages of different sizes with the same tag. The even rank MPI_Mprobe's the first (from its
 * partner), then receives the second with MPI_Recv from MPI_ANY_SOURCE into a buffer exactly its size,
 * then MPI_Mrecv's the probed first one. Then two more messages the same way, the first found by
 * MPI_Improbe polling (MPI_ANY_TAG), the second received between by MPI_Recv from MPI_ANY_SOURCE, the
 * first by MPI_Imrecv completed by MPI_Wait.
 * Exercises: a replay must receive the probed message with the MPI_Mrecv and leave the second to the
 * receive between (receiving the first at the MPI_Mrecv's place made that receive take the larger
 * probed message: MPI_ERR_TRUNCATE).
 *
 * Usage: mprobe_between [STEPS]    (default 3) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "logged_start.h"

enum { TAG = 21, MOST = 256 };

static long long checksum;

static void add(const int *values, int count, int weight)
{
    for (int i = 0; i < count; ++i)
        checksum += (long long)values[i] * weight;
}

/* The sizes (ints) of the first and second message of a step's round (0: Mprobe, 1: Improbe). */
static int first_count(int step, int round) { return 100 + 20 * step + 7 * round; }
static int second_count(int step, int round) { return 10 + 3 * step + round; }

int main(int argc, char **argv)
{
    int rank, size;
    logged_start(&argc, &argv, &rank, &size);
    const int steps = argc > 1 ? atoi(argv[1]) : 3;
    const long long INT_BYTES = sizeof(int);
    const int paired = rank < size - size % 2;
    const int partner = rank ^ 1;
    if (steps > 0 && first_count(steps - 1, 1) > MOST) {
        fprintf(stderr, "mprobe_between: at most 7 steps\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    int first[MOST], second[MOST];
    for (int step = 0; step < steps && paired; ++step) {
        for (int round = 0; round < 2; ++round) {
            const int n1 = first_count(step, round), n2 = second_count(step, round);
            if (rank % 2) {
                for (int i = 0; i < MOST; ++i) {
                    first[i] = rank + step + i;
                    second[i] = -rank - round - i;
                }
                MPI_Request sends[2];
                MPI_Isend(first, n1, MPI_INT, partner, TAG, MPI_COMM_WORLD, &sends[0]);
                log_send("MPI_Isend", n1 * INT_BYTES, partner, TAG);
                MPI_Isend(second, n2, MPI_INT, partner, TAG, MPI_COMM_WORLD, &sends[1]);
                log_send("MPI_Isend", n2 * INT_BYTES, partner, TAG);
                MPI_Waitall(2, sends, MPI_STATUSES_IGNORE);
                log_completion("MPI_Waitall", 2);
                continue;
            }
            MPI_Message message;
            MPI_Status status;
            if (round == 0) {
                MPI_Mprobe(partner, TAG, MPI_COMM_WORLD, &message, &status);
                log_recv_status("MPI_Mprobe", 0, partner, TAG, &status);
            } else {
                int found = 0;
                while (!found) {
                    MPI_Improbe(partner, MPI_ANY_TAG, MPI_COMM_WORLD, &found, &message, &status);
                    if (found)
                        log_recv_status("MPI_Improbe", 0, partner, MPI_ANY_TAG, &status);
                    else
                        log_recv("MPI_Improbe", 0, partner, LOG_ANY_TAG);
                }
            }
            int count;
            MPI_Get_count(&status, MPI_INT, &count);
            log_call("MPI_Get_count", 0);

            /* The second message, into a buffer of exactly its size: the probed one would not fit. */
            int *exact = malloc((size_t)n2 * sizeof(int));
            MPI_Recv(exact, n2, MPI_INT, MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &status);
            log_recv_status("MPI_Recv", n2 * INT_BYTES, MPI_ANY_SOURCE, TAG, &status);
            add(exact, n2, 3);
            free(exact);

            if (round == 0) {
                MPI_Mrecv(first, count, MPI_INT, &message, MPI_STATUS_IGNORE);
                log_recv("MPI_Mrecv", count * INT_BYTES, partner, TAG);
            } else {
                MPI_Request request;
                MPI_Imrecv(first, count, MPI_INT, &message, &request);
                log_recv("MPI_Imrecv", count * INT_BYTES, partner, TAG);
                MPI_Wait(&request, MPI_STATUS_IGNORE);
                log_completion("MPI_Wait", 1);
            }
            add(first, count, 1);
        }
    }

    long long total = 0;
    MPI_Reduce(&checksum, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    log_call_peer("MPI_Reduce", sizeof(long long), 0);
    if (rank == 0)
        printf("mprobe_between: ranks %d steps %d checksum %lld\n", size, steps, total);
    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    call_log_close();
    return 0;
}
