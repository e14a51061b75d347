/* MPI_IN_PLACE where a root keeps its own part: MPI_Scatter, MPI_Scatterv, MPI_Iscatter and
 * MPI_Iscatterv whose root passes MPI_IN_PLACE as its receive buffer with receive count 0 and
 * MPI_DATATYPE_NULL (MPI ignores them there); MPI_Igather and MPI_Igatherv whose root passes MPI_IN_PLACE
 * as its send buffer; MPI_Alltoallv and MPI_Ialltoallv with MPI_IN_PLACE (symmetric counts: rank i and
 * rank j exchange 1 + (i + j) % 3 ints). The root moves with the iteration; non-blocking calls are
 * completed by MPI_Wait.
 * Bytes as the tracer counts them (src/capture/mpi_functions.py): an in-place side carries none, so a
 * scatter's root logs its send side (sendcount x type, or its sendcounts summed), a gather's root its
 * receive side, and an in-place Alltoallv member what it receives; every in-place call is logged with
 * in_place=1 (log_in_place).
 * Exercises: a replay must make the in-place calls in place (a root that received 0 bytes truncated
 * its part; an in-place Alltoallv replayed 0 bytes).
 *
 * Usage: in_place_root [ITERATIONS]    (default 3) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "logged_start.h"

static int rank, size;
static long long checksum;
static const long long INT_BYTES = sizeof(int);

static void add(const int *values, int count, int weight)
{
    for (int i = 0; i < count; ++i)
        checksum += (long long)values[i] * weight;
}

static void wait_for(MPI_Request *request)
{
    MPI_Wait(request, MPI_STATUS_IGNORE);
    log_completion("MPI_Wait", 1);
}

/* Scatter and Scatterv, blocking or not, with the root's receive buffer MPI_IN_PLACE. */
static void scatters(int root, int nonblocking, int iteration)
{
    const int at_root = rank == root;
    int *counts = malloc((size_t)size * sizeof(int)), *displs = malloc((size_t)size * sizeof(int));
    int total = 0;
    for (int i = 0; i < size; ++i) {
        counts[i] = i + 1;
        displs[i] = total;
        total += counts[i];
    }
    int *all = malloc((size_t)(2 * size + total) * sizeof(int)), mine[64];
    for (int i = 0; i < 2 * size + total; ++i)
        all[i] = at_root ? 1000 * iteration + i : -1;

    MPI_Request request;
    const char *function = nonblocking ? "MPI_Iscatter" : "MPI_Scatter";
    if (nonblocking)
        MPI_Iscatter(at_root ? all : NULL, 2, MPI_INT, at_root ? MPI_IN_PLACE : mine, at_root ? 0 : 2,
                     at_root ? MPI_DATATYPE_NULL : MPI_INT, root, MPI_COMM_WORLD, &request);
    else
        MPI_Scatter(at_root ? all : NULL, 2, MPI_INT, at_root ? MPI_IN_PLACE : mine, at_root ? 0 : 2,
                    at_root ? MPI_DATATYPE_NULL : MPI_INT, root, MPI_COMM_WORLD);
    if (at_root)
        log_in_place(function, 2 * INT_BYTES, 1, root);
    else
        log_call_peer(function, 2 * INT_BYTES, root);
    if (nonblocking)
        wait_for(&request);
    add(at_root ? &all[2 * root] : mine, 2, 1);

    int *parts = all + 2 * size;
    function = nonblocking ? "MPI_Iscatterv" : "MPI_Scatterv";
    if (nonblocking)
        MPI_Iscatterv(at_root ? parts : NULL, at_root ? counts : NULL, at_root ? displs : NULL,
                      at_root ? MPI_INT : MPI_DATATYPE_NULL, at_root ? MPI_IN_PLACE : mine, at_root ? 0 : counts[rank],
                      at_root ? MPI_DATATYPE_NULL : MPI_INT, root, MPI_COMM_WORLD, &request);
    else
        MPI_Scatterv(at_root ? parts : NULL, at_root ? counts : NULL, at_root ? displs : NULL,
                     at_root ? MPI_INT : MPI_DATATYPE_NULL, at_root ? MPI_IN_PLACE : mine, at_root ? 0 : counts[rank],
                     at_root ? MPI_DATATYPE_NULL : MPI_INT, root, MPI_COMM_WORLD);
    if (at_root)
        log_in_place(function, total * INT_BYTES, 1, root);
    else
        log_call_peer(function, counts[rank] * INT_BYTES, root);
    if (nonblocking)
        wait_for(&request);
    add(at_root ? &parts[displs[root]] : mine, counts[rank], 2);
    free(all);
    free(counts);
    free(displs);
}

/* Igather and Igatherv with the root's send buffer MPI_IN_PLACE (its part already in place). */
static void gathers(int root, int iteration)
{
    const int at_root = rank == root;
    int *counts = malloc((size_t)size * sizeof(int)), *displs = malloc((size_t)size * sizeof(int));
    int total = 0;
    for (int i = 0; i < size; ++i) {
        counts[i] = size - i;
        displs[i] = total;
        total += counts[i];
    }
    int *all = calloc((size_t)(2 * size + total), sizeof(int)), mine[64];
    for (int i = 0; i < 64; ++i)
        mine[i] = rank * 100 + iteration + i;
    if (at_root) {
        all[2 * root] = mine[0];
        all[2 * root + 1] = mine[1];
    }

    MPI_Request request;
    MPI_Igather(at_root ? MPI_IN_PLACE : mine, at_root ? 0 : 2, at_root ? MPI_DATATYPE_NULL : MPI_INT,
                at_root ? all : NULL, 2, MPI_INT, root, MPI_COMM_WORLD, &request);
    if (at_root)
        log_in_place("MPI_Igather", 2 * INT_BYTES, 1, root);
    else
        log_call_peer("MPI_Igather", 2 * INT_BYTES, root);
    wait_for(&request);
    if (at_root)
        add(all, 2 * size, 1);

    int *parts = all + 2 * size;
    if (at_root)
        for (int i = 0; i < counts[root]; ++i)
            parts[displs[root] + i] = mine[i];
    MPI_Igatherv(at_root ? MPI_IN_PLACE : mine, at_root ? 0 : counts[rank], at_root ? MPI_DATATYPE_NULL : MPI_INT,
                 at_root ? parts : NULL, at_root ? counts : NULL, at_root ? displs : NULL,
                 at_root ? MPI_INT : MPI_DATATYPE_NULL, root, MPI_COMM_WORLD, &request);
    if (at_root)
        log_in_place("MPI_Igatherv", total * INT_BYTES, 1, root);
    else
        log_call_peer("MPI_Igatherv", counts[rank] * INT_BYTES, root);
    wait_for(&request);
    if (at_root)
        add(parts, total, 2);
    free(all);
    free(counts);
    free(displs);
}

/* Alltoallv in place, blocking or not: the send arguments are ignored. */
static void alltoallv(int nonblocking, int iteration)
{
    int *counts = malloc((size_t)size * sizeof(int)), *displs = malloc((size_t)size * sizeof(int));
    int total = 0;
    for (int j = 0; j < size; ++j) {
        counts[j] = 1 + (rank + j) % 3;
        displs[j] = total;
        total += counts[j];
    }
    int *buffer = malloc((size_t)total * sizeof(int));
    for (int j = 0; j < size; ++j)
        for (int k = 0; k < counts[j]; ++k)
            buffer[displs[j] + k] = rank * 1000 + j * 10 + k + iteration;
    MPI_Request request;
    if (nonblocking) {
        MPI_Ialltoallv(MPI_IN_PLACE, counts, displs, MPI_DATATYPE_NULL, buffer, counts, displs, MPI_INT,
                       MPI_COMM_WORLD, &request);
        log_in_place("MPI_Ialltoallv", total * INT_BYTES, 0, 0);
        wait_for(&request);
    } else {
        MPI_Alltoallv(MPI_IN_PLACE, counts, displs, MPI_DATATYPE_NULL, buffer, counts, displs, MPI_INT,
                      MPI_COMM_WORLD);
        log_in_place("MPI_Alltoallv", total * INT_BYTES, 0, 0);
    }
    add(buffer, total, 3);
    free(buffer);
    free(counts);
    free(displs);
}

int main(int argc, char **argv)
{
    logged_start(&argc, &argv, &rank, &size);
    const int iterations = argc > 1 ? atoi(argv[1]) : 3;
    if (size > 60) {
        fprintf(stderr, "in_place_root: at most 60 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int iteration = 0; iteration < iterations; ++iteration) {
        const int root = (size - 1 + iteration) % size;
        scatters(root, 0, iteration);
        scatters(root, 1, iteration);
        alltoallv(0, iteration);
        alltoallv(1, iteration);
        gathers(root, iteration);
    }
    long long total = 0;
    MPI_Allreduce(&checksum, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    log_call("MPI_Allreduce", sizeof(long long));
    if (rank == 0)
        printf("in_place_root: ranks %d iterations %d checksum %lld\n", size, iterations, total);
    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    call_log_close();
    return 0;
}
