/* Buffered sends that the program relies on. Ranks pair up (0 with 1, 2 with 3 ...; an odd rank count
 * leaves the last rank out of the pairs). Each rank attaches a buffer with room for all its buffered
 * sends; per step both ranks of a pair MPI_Bsend a large message (above any eager limit) to each other
 * before either receives -- as standard sends these would deadlock --, then MPI_Ibsend a smaller one
 * completed by MPI_Wait after the receive, then start a persistent MPI_Bsend_init request twice, each
 * start completed by MPI_Wait, before receiving the partner's two. Last, MPI_Request_free and
 * MPI_Buffer_detach.
 * Logged bytes: MPI_Buffer_attach's size (the tracer records it), MPI_Buffer_detach 0.
 * Exercises: a replay must send buffered sends through a buffer as large as the program's (standard
 * sends deadlocked at the stall limit).
 *
 * Usage: buffered [STEPS] [LARGE_BYTES]    (default 2 and 200000) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "logged_start.h"

enum { TAG_LARGE = 1, TAG_IBSEND = 2, TAG_PERSISTENT = 3, SMALL = 40000, PERSISTENT = 100000 };

static long long checksum;

static void add(const unsigned char *bytes, int count)
{
    for (int i = 0; i < count; i += 97)
        checksum += bytes[i];
}

int main(int argc, char **argv)
{
    int rank, size;
    logged_start(&argc, &argv, &rank, &size);
    const int steps = argc > 1 ? atoi(argv[1]) : 2;
    const int large = argc > 2 ? atoi(argv[2]) : 200000;
    const int paired = rank < size - size % 2;
    const int partner = rank ^ 1;
    if (large < PERSISTENT) {
        fprintf(stderr, "buffered: LARGE_BYTES must be at least %d\n", PERSISTENT);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    /* Room for every buffered send of the run: a message leaves the buffer only once the sender's MPI
     * saw it delivered, which may be late. */
    const int attached_size = steps * (large + SMALL + 2 * PERSISTENT + 4 * MPI_BSEND_OVERHEAD);
    void *attached = malloc((size_t)attached_size);
    MPI_Buffer_attach(attached, attached_size);
    log_call("MPI_Buffer_attach", attached_size);

    unsigned char *out = malloc((size_t)large), *in = malloc((size_t)large);
    MPI_Request persistent = MPI_REQUEST_NULL;
    if (paired) {
        MPI_Bsend_init(out, PERSISTENT, MPI_BYTE, partner, TAG_PERSISTENT, MPI_COMM_WORLD, &persistent);
        log_send("MPI_Bsend_init", PERSISTENT, partner, TAG_PERSISTENT);
    }
    for (int step = 0; step < steps && paired; ++step) {
        for (int i = 0; i < large; ++i)
            out[i] = (unsigned char)(rank + step + i);

        MPI_Bsend(out, large, MPI_BYTE, partner, TAG_LARGE, MPI_COMM_WORLD);
        log_send("MPI_Bsend", large, partner, TAG_LARGE);
        MPI_Recv(in, large, MPI_BYTE, partner, TAG_LARGE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        log_recv("MPI_Recv", large, partner, TAG_LARGE);
        add(in, large);

        MPI_Request request;
        MPI_Ibsend(out, SMALL, MPI_BYTE, partner, TAG_IBSEND, MPI_COMM_WORLD, &request);
        log_send("MPI_Ibsend", SMALL, partner, TAG_IBSEND);
        MPI_Recv(in, SMALL, MPI_BYTE, partner, TAG_IBSEND, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        log_recv("MPI_Recv", SMALL, partner, TAG_IBSEND);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        log_completion("MPI_Wait", 1);
        add(in, SMALL);

        /* Both starts complete (copied into the buffer) before either rank receives: as standard
         * sends the first MPI_Wait would wait for a receive the partner has not posted yet. */
        for (int start = 0; start < 2; ++start) {
            MPI_Start(&persistent);
            log_start("MPI_Bsend_init", PERSISTENT, partner, TAG_PERSISTENT);
            MPI_Wait(&persistent, MPI_STATUS_IGNORE);
            log_completion("MPI_Wait", 1);
        }
        for (int start = 0; start < 2; ++start) {
            MPI_Recv(in, PERSISTENT, MPI_BYTE, partner, TAG_PERSISTENT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            log_recv("MPI_Recv", PERSISTENT, partner, TAG_PERSISTENT);
            /* Not added to the checksum: Open MPI 4.1's ob1 does not pack a restarted persistent
             * buffered send again (open-mpi/ompi#14366), and what it sends varies from run to run. */
        }
    }
    if (paired) {
        MPI_Request_free(&persistent);
        log_call("MPI_Request_free", 0);
    }

    void *detached;
    int detached_size;
    MPI_Buffer_detach(&detached, &detached_size);
    log_call("MPI_Buffer_detach", 0);
    free(detached);
    free(out);
    free(in);

    long long total = 0;
    MPI_Reduce(&checksum, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    log_call_peer("MPI_Reduce", sizeof(long long), 0);
    if (rank == 0)
        printf("buffered: ranks %d steps %d large %d checksum %lld\n", size, steps, large, total);
    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    call_log_close();
    return 0;
}
