/* Non-blocking collectives on two communicators, started in opposite orders. A is a duplicate of
 * MPI_COMM_WORLD, B a split of it with the ranks in reverse order. Per round, A has MPI_Ibarrier and
 * MPI_Iallreduce, B MPI_Ibcast (its root moving with the round) and MPI_Iallreduce; even ranks start
 * A's two, then B's, odd ranks B's two, then A's (legal: each communicator's members start its
 * collectives in one order), and every rank completes the four with one MPI_Waitall. Between rounds,
 * a ring of MPI_Isend/MPI_Irecv on MPI_COMM_WORLD completed by MPI_Waitall.
 * Exercises: instances that no one order of events holds for all ranks: the merge leaves them in parts,
 * and a lossless replay must issue every part where its ranks did (it skipped them before).
 *
 * Usage: nbc_opposite [ROUNDS]    (default 4) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "logged_start.h"

static int rank, size;
static long long checksum;

/* A's two collectives: a barrier, and the sum of two numbers. */
static void start_on_a(MPI_Comm a, int round, long long *out, long long *in, MPI_Request *requests)
{
    MPI_Ibarrier(a, &requests[0]);
    log_call("MPI_Ibarrier", 0);
    out[0] = rank + round;
    out[1] = (long long)rank * rank;
    MPI_Iallreduce(out, in, 2, MPI_LONG_LONG, MPI_SUM, a, &requests[1]);
    log_call("MPI_Iallreduce", 2 * (long long)sizeof(long long));
}

/* B's two: a broadcast from a root that moves with the round, and a maximum. B's rank j is world rank
 * size - 1 - j. */
static void start_on_b(MPI_Comm b, int round, int *header, long long *out, long long *in, MPI_Request *requests)
{
    const int root = round % size, me = size - 1 - rank;
    if (me == root) {
        header[0] = 100 + round;
        header[1] = rank;
        header[2] = root;
    }
    MPI_Ibcast(header, 3, MPI_INT, root, b, &requests[0]);
    log_call_peer("MPI_Ibcast", 3 * (long long)sizeof(int), size - 1 - root);
    *out = (rank * 7 + round) % 5;
    MPI_Iallreduce(out, in, 1, MPI_LONG_LONG, MPI_MAX, b, &requests[1]);
    log_call("MPI_Iallreduce", (long long)sizeof(long long));
}

int main(int argc, char **argv)
{
    logged_start(&argc, &argv, &rank, &size);
    const int rounds = argc > 1 ? atoi(argv[1]) : 4;
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;

    MPI_Comm a, b;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    log_call("MPI_Comm_dup", 0);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &b);
    log_call("MPI_Comm_split", 0);

    for (int round = 0; round < rounds; ++round) {
        MPI_Request requests[4];
        long long a_out[2], a_in[2] = {0, 0}, b_out = 0, b_in = 0;
        int header[3] = {0, 0, 0};
        if (rank % 2 == 0) {
            start_on_a(a, round, a_out, a_in, &requests[0]);
            start_on_b(b, round, header, &b_out, &b_in, &requests[2]);
        } else {
            start_on_b(b, round, header, &b_out, &b_in, &requests[2]);
            start_on_a(a, round, a_out, a_in, &requests[0]);
        }
        MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
        log_completion("MPI_Waitall", 4);
        checksum += a_in[0] + 3 * a_in[1] + b_in + header[0] + header[1] + header[2];

        /* Point-to-point between rounds: a ring, with a size that moves with the round. */
        int out[8], in[8];
        const int count = 1 + round % 8;
        for (int i = 0; i < count; ++i)
            out[i] = rank * 10 + round + i;
        MPI_Request ring[2];
        MPI_Irecv(in, count, MPI_INT, left, round, MPI_COMM_WORLD, &ring[0]);
        log_recv("MPI_Irecv", count * (long long)sizeof(int), left, round);
        MPI_Isend(out, count, MPI_INT, right, round, MPI_COMM_WORLD, &ring[1]);
        log_send("MPI_Isend", count * (long long)sizeof(int), right, round);
        MPI_Waitall(2, ring, MPI_STATUSES_IGNORE);
        log_completion("MPI_Waitall", 2);
        for (int i = 0; i < count; ++i)
            checksum += in[i] * (i + 1);
    }

    MPI_Comm_free(&a);
    log_call("MPI_Comm_free", 0);
    MPI_Comm_free(&b);
    log_call("MPI_Comm_free", 0);

    long long total = 0;
    MPI_Allreduce(&checksum, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    log_call("MPI_Allreduce", sizeof(long long));
    if (rank == 0)
        printf("nbc_opposite: ranks %d rounds %d checksum %lld\n", size, rounds, total);
    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    call_log_close();
    return 0;
}
