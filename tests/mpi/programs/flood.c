/* A flood of small messages into one rank. Every rank but 0 sends rank 0 MESSAGES messages of 8, 12 or
 * 16 bytes with MPI_Send, tagged 0..4 by turns; every ASK_EVERY-th asks for an answer (its own tag),
 * and its sender then waits with MPI_Recv for rank 0's reply before it goes on. Rank 0 receives every
 * message with MPI_Recv from MPI_ANY_SOURCE and MPI_ANY_TAG, into a buffer of 16 bytes, in whatever
 * order they come, and answers each question at once with an MPI_Send to its source. One
 * MPI_Barrier at the end; no other collective (the senders check their replies themselves).
 * Exercises: at p = 0, paired replay of many messages no drawn receive takes (it posted a receive for
 * each at its send and kept them all until the next collective: hundreds of thousands of posted
 * receives, and 20 times the traced time).
 *
 * Usage: flood [MESSAGES] [ASK_EVERY]    (defaults 20000 and 1000) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "logged_start.h"

enum { TAG_ASK = 9, TAG_REPLY = 10, TAGS = 5 };

int main(int argc, char **argv)
{
    int rank, size;
    logged_start(&argc, &argv, &rank, &size);
    const int messages = argc > 1 ? atoi(argv[1]) : 20000;
    const int ask_every = argc > 2 ? atoi(argv[2]) : 1000;
    const long long INT_BYTES = sizeof(int);
    if (size < 2 || ask_every < 1) {
        fprintf(stderr, "flood: at least 2 ranks, and ASK_EVERY at least 1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    long long checksum = 0, questions = 0;
    if (rank == 0) {
        const long long expected = (long long)(size - 1) * messages;
        for (long long m = 0; m < expected; ++m) {
            int in[4];
            MPI_Status status;
            MPI_Recv(in, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
            log_recv_status("MPI_Recv", 4 * INT_BYTES, MPI_ANY_SOURCE, MPI_ANY_TAG, &status);
            checksum += in[0] + status.MPI_TAG;
            if (status.MPI_TAG == TAG_ASK) {
                const int reply[2] = {in[0], status.MPI_SOURCE};
                MPI_Send(reply, 2, MPI_INT, status.MPI_SOURCE, TAG_REPLY, MPI_COMM_WORLD);
                log_send("MPI_Send", 2 * INT_BYTES, status.MPI_SOURCE, TAG_REPLY);
                ++questions;
            }
        }
    } else {
        for (int i = 0; i < messages; ++i) {
            const int count = 2 + (i + rank) % 3;
            const int asks = i % ask_every == ask_every - 1;
            const int tag = asks ? TAG_ASK : i % TAGS;
            int out[4] = {rank * 100000 + i % 100000, i, rank, i % 7};
            MPI_Send(out, count, MPI_INT, 0, tag, MPI_COMM_WORLD);
            log_send("MPI_Send", count * INT_BYTES, 0, tag);
            if (asks) {
                int reply[2];
                MPI_Recv(reply, 2, MPI_INT, 0, TAG_REPLY, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                log_recv("MPI_Recv", 2 * INT_BYTES, 0, TAG_REPLY);
                if (reply[0] != out[0] || reply[1] != rank) {
                    fprintf(stderr, "flood: rank %d, message %d: reply %d %d\n", rank, i, reply[0], reply[1]);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
            }
        }
    }

    MPI_Barrier(MPI_COMM_WORLD);
    log_call("MPI_Barrier", 0);
    if (rank == 0)
        printf("flood: ranks %d messages %d questions %lld checksum %lld\n", size, messages, questions, checksum);
    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    call_log_close();
    return 0;
}
