/* A ring of LAPS laps and an MPI_Allreduce, then an end of the kind MODE names, for
 * tests/mpi/check_early_end.py:
 *
 *   finish  MPI_Finalize. With LIMIT > 0, rank 0 first limits the size of the files it writes to
 *           LIMIT bytes (RLIMIT_FSIZE, SIGXFSZ ignored), after MPI_Init made MPI's own: the trace's
 *           write then fails as on a full disk.
 *   abort   the last rank calls MPI_Abort(MPI_COMM_WORLD, 3); the others wait, outside MPI.
 *   crash   the last rank writes through a null pointer (SIGSEGV); the others wait, outside MPI.
 *   exit    every rank calls exit(0) without MPI_Finalize.
 *   wait    every rank writes $CALL_LOG_DIR/ready.<rank> holding its process id, then waits outside
 *           MPI until it is killed. With LIMIT 1 the program has its own SIGTERM handler, installed
 *           before MPI_Init, which writes $CALL_LOG_DIR/terminated.<rank> and lets the program wait on.
 *
 * Every call is logged (call_log.h) and the log flushed before the program waits or aborts, so the
 * log holds exactly the calls made before the end.
 *
 * Usage: early_end MODE LAPS [LIMIT] */
#include <mpi.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "logged_start.h"

static char terminated_path[4096];

/* Async-signal-safe: open, write and close. */
static void on_sigterm(int signal)
{
    (void)signal;
    if (terminated_path[0] == '\0')
        return;
    const int fd = open(terminated_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        if (write(fd, "SIGTERM\n", 8) != 8) {
        }
        close(fd);
    }
}

static void wait_outside_mpi(void)
{
    for (;;)
        pause();
}

static void say_ready(int rank)
{
    const char *dir = getenv("CALL_LOG_DIR");
    if (dir == NULL)
        return;
    char path[4096];
    char temporary[4200];
    snprintf(path, sizeof path, "%s/ready.%d", dir, rank);
    snprintf(temporary, sizeof temporary, "%s.tmp", path);
    FILE *f = fopen(temporary, "w");
    if (f == NULL) {
        perror(temporary);
        exit(2);
    }
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
    rename(temporary, path); /* whole, or not there */
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "finish";
    const int laps = argc > 2 ? atoi(argv[2]) : 5;
    const long long limit = argc > 3 ? atoll(argv[3]) : 0;
    if (strcmp(mode, "wait") == 0 && limit == 1) {
        struct sigaction own;
        memset(&own, 0, sizeof own);
        own.sa_handler = on_sigterm;
        sigemptyset(&own.sa_mask);
        sigaction(SIGTERM, &own, NULL);
    }
    int rank, size;
    logged_start(&argc, &argv, &rank, &size);
    if (getenv("CALL_LOG_DIR") != NULL)
        snprintf(terminated_path, sizeof terminated_path, "%s/terminated.%d", getenv("CALL_LOG_DIR"), rank);

    if (strcmp(mode, "finish") == 0 && limit > 0 && rank == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit files = {(rlim_t)limit, (rlim_t)limit};
        setrlimit(RLIMIT_FSIZE, &files);
    }

    const int right = (rank + 1) % size;
    const int left = (rank - 1 + size) % size;
    int token = 0;
    for (int lap = 0; lap < laps; ++lap) {
        if (rank == 0) {
            MPI_Send(&token, 1, MPI_INT, right, lap, MPI_COMM_WORLD);
            log_send("MPI_Send", sizeof token, right, lap);
            MPI_Recv(&token, 1, MPI_INT, left, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            log_recv("MPI_Recv", sizeof token, left, lap);
        } else {
            MPI_Recv(&token, 1, MPI_INT, left, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            log_recv("MPI_Recv", sizeof token, left, lap);
            ++token;
            MPI_Send(&token, 1, MPI_INT, right, lap, MPI_COMM_WORLD);
            log_send("MPI_Send", sizeof token, right, lap);
        }
    }
    int total = 0;
    MPI_Allreduce(&token, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    log_call("MPI_Allreduce", sizeof token);
    if (call_log_file != NULL)
        fflush(call_log_file);

    if (strcmp(mode, "abort") == 0) {
        if (rank == size - 1)
            MPI_Abort(MPI_COMM_WORLD, 3);
        wait_outside_mpi();
    }
    if (strcmp(mode, "crash") == 0) {
        if (rank == size - 1) {
            volatile int *volatile nowhere = NULL; /* volatile: the store stays, to an unknown address */
            *nowhere = 1;
        }
        wait_outside_mpi();
    }
    if (strcmp(mode, "exit") == 0)
        exit(0);
    if (strcmp(mode, "wait") == 0) {
        say_ready(rank);
        wait_outside_mpi();
    }
    if (rank == 0)
        printf("early_end: ranks %d laps %d total %d\n", size, laps, total);
    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    call_log_close();
    return 0;
}
