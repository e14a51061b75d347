/* Persistent requests: a halo exchange with both neighbours set up once (MPI_Send_init,
 * MPI_Ssend_init, MPI_Bsend_init, MPI_Recv_init, one of them from MPI_ANY_SOURCE) and started
 * STEPS times (MPI_Startall for the receives, MPI_Start for each send), completed by MPI_Waitall;
 * then every persistent request freed (MPI_Request_free) and, to make the library hand out freed
 * handles again, a second round of fresh non-blocking sends: one freed while still active (its
 * message still arrives), and requests created after it that must not be taken for it.
 *
 * Usage: persistent [STEPS]    (default 6) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "logged_start.h"

enum { HALO = 8, TAG_RIGHT = 1, TAG_LEFT = 2, TAG_BUFFERED = 3, TAG_FREED = 4, TAG_AFTER = 5 };
enum { RECV_RIGHTWARD, RECV_LEFTWARD, RECV_BUFFERED, SEND_RIGHT, SEND_LEFT, SEND_BUFFERED, REQUESTS };

int main(int argc, char **argv)
{
    int rank, size;
    logged_start(&argc, &argv, &rank, &size);
    const int steps = argc > 1 ? atoi(argv[1]) : 6;
    const int right = (rank + 1) % size;
    const int left = (rank - 1 + size) % size;
    const long long bytes = HALO * (long long)sizeof(double);

    static char attached[1 << 16];
    MPI_Buffer_attach(attached, sizeof attached);
    log_call("MPI_Buffer_attach", sizeof attached); /* the buffer's size, which replay attaches again */

    double out_right[HALO], out_left[HALO], out_buffered[HALO], in[3][HALO];
    MPI_Request requests[REQUESTS];
    /* Messages travelling right come from the left, and the other way round (from whoever it is). */
    MPI_Recv_init(in[0], HALO, MPI_DOUBLE, left, TAG_RIGHT, MPI_COMM_WORLD, &requests[RECV_RIGHTWARD]);
    log_recv("MPI_Recv_init", bytes, left, TAG_RIGHT);
    MPI_Recv_init(in[1], HALO, MPI_DOUBLE, MPI_ANY_SOURCE, TAG_LEFT, MPI_COMM_WORLD, &requests[RECV_LEFTWARD]);
    log_recv("MPI_Recv_init", bytes, LOG_ANY_SOURCE, TAG_LEFT);
    MPI_Recv_init(in[2], HALO, MPI_DOUBLE, left, TAG_BUFFERED, MPI_COMM_WORLD, &requests[RECV_BUFFERED]);
    log_recv("MPI_Recv_init", bytes, left, TAG_BUFFERED);
    MPI_Send_init(out_right, HALO, MPI_DOUBLE, right, TAG_RIGHT, MPI_COMM_WORLD, &requests[SEND_RIGHT]);
    log_send("MPI_Send_init", bytes, right, TAG_RIGHT);
    MPI_Ssend_init(out_left, HALO, MPI_DOUBLE, left, TAG_LEFT, MPI_COMM_WORLD, &requests[SEND_LEFT]);
    log_send("MPI_Ssend_init", bytes, left, TAG_LEFT);
    MPI_Bsend_init(out_buffered, HALO, MPI_DOUBLE, right, TAG_BUFFERED, MPI_COMM_WORLD, &requests[SEND_BUFFERED]);
    log_send("MPI_Bsend_init", bytes, right, TAG_BUFFERED);

    double sum = 0;
    for (int step = 0; step < steps; ++step) {
        for (int i = 0; i < HALO; ++i) {
            out_right[i] = rank + step + i;
            out_left[i] = -rank - step - i;
            out_buffered[i] = 0.5 * (rank + step);
        }
        MPI_Startall(3, &requests[RECV_RIGHTWARD]);
        log_start("MPI_Recv_init", bytes, left, TAG_RIGHT);
        log_start("MPI_Recv_init", bytes, LOG_ANY_SOURCE, TAG_LEFT);
        log_start("MPI_Recv_init", bytes, left, TAG_BUFFERED);
        MPI_Start(&requests[SEND_RIGHT]);
        log_start("MPI_Send_init", bytes, right, TAG_RIGHT);
        MPI_Start(&requests[SEND_LEFT]);
        log_start("MPI_Ssend_init", bytes, left, TAG_LEFT);
        MPI_Start(&requests[SEND_BUFFERED]);
        log_start("MPI_Bsend_init", bytes, right, TAG_BUFFERED);
        MPI_Status statuses[REQUESTS];
        MPI_Waitall(REQUESTS, requests, statuses);
        log_completion_matched("MPI_Waitall", REQUESTS, 1, &statuses[RECV_LEFTWARD].MPI_SOURCE);
        for (int k = 0; k < 3; ++k)
            for (int i = 0; i < HALO; ++i)
                sum += in[k][i];
    }
    for (int k = 0; k < REQUESTS; ++k) {
        MPI_Request_free(&requests[k]);
        log_call("MPI_Request_free", 0);
    }
    int detached_size;
    void *detached;
    MPI_Buffer_detach(&detached, &detached_size);
    log_call("MPI_Buffer_detach", 0);

    /* A send freed while active still delivers its message; the requests made after it may get its
     * handle, and their completions are theirs. */
    double freed_value = rank, after_value[2] = {rank, rank}, received[3];
    MPI_Request freed, after[4];
    MPI_Isend(&freed_value, 1, MPI_DOUBLE, right, TAG_FREED, MPI_COMM_WORLD, &freed);
    log_send("MPI_Isend", sizeof(double), right, TAG_FREED);
    MPI_Request_free(&freed);
    log_call("MPI_Request_free", 0);
    MPI_Irecv(&received[0], 1, MPI_DOUBLE, right, TAG_AFTER, MPI_COMM_WORLD, &after[0]);
    log_recv("MPI_Irecv", sizeof(double), right, TAG_AFTER);
    MPI_Irecv(&received[1], 1, MPI_DOUBLE, left, TAG_AFTER, MPI_COMM_WORLD, &after[1]);
    log_recv("MPI_Irecv", sizeof(double), left, TAG_AFTER);
    MPI_Isend(&after_value[0], 1, MPI_DOUBLE, left, TAG_AFTER, MPI_COMM_WORLD, &after[2]);
    log_send("MPI_Isend", sizeof(double), left, TAG_AFTER);
    MPI_Isend(&after_value[1], 1, MPI_DOUBLE, right, TAG_AFTER, MPI_COMM_WORLD, &after[3]);
    log_send("MPI_Isend", sizeof(double), right, TAG_AFTER);
    MPI_Recv(&received[2], 1, MPI_DOUBLE, left, TAG_FREED, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    log_recv("MPI_Recv", sizeof(double), left, TAG_FREED);
    MPI_Waitall(4, after, MPI_STATUSES_IGNORE);
    log_completion("MPI_Waitall", 4);
    sum += received[0] + received[1] + received[2];

    double total = 0;
    MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    log_call("MPI_Allreduce", sizeof(double));
    if (rank == 0)
        printf("persistent: ranks %d steps %d checksum %.1f\n", size, steps, total);

    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    call_log_close();
    return 0;
}
