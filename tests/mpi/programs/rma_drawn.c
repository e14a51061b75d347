/* Windows whose sizes differ per rank and per iteration, and accesses whose sizes and targets vary. At
 * iteration k (1 .. ITERATIONS) rank r makes a window of W(r) = (r+1)*k*64 bytes with MPI_Win_create
 * and frees it at the end of the iteration. In a fence epoch it MPI_Puts half its right neighbour's
 * window, W(right)/2 bytes at displacement 0, and MPI_Gets W(left)/4 + 8 bytes from displacement
 * W(left)/2 of its left neighbour's: so the larger ranks' accesses are larger than the smaller ranks'
 * windows. Then, for each target t (r, r+1 ... around the ranks), a passive-target epoch:
 * MPI_Win_lock of t (exclusive where k + t is even, shared where it is odd), MPI_Put of W(t)/16 or
 * W(t)/8 bytes (even or odd r) into the origin's own eighth of t's window, at r*W(t)/8, MPI_Get of
 * W(t)/16 + 4*((r + t)%2) bytes from the last eighth (which no one writes), MPI_Win_unlock(t). Every
 * access fits its target's window, and no two accesses of an epoch touch the same bytes.
 * Exercises, at p = 0: window sizes and the accesses into them drawn apart (replay wrote past its
 * windows: heap corruption), and lock, access and unlock targets drawn apart (MPI_ERR_RMA_SYNC).
 *
 * Usage: rma_drawn [ITERATIONS]    (default 4; at most 7 ranks) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "logged_start.h"

/* A one-sided call on `target` (a world rank) moving `bytes` at origin and target together, as
 * one_sided.c logs them. */
static void log_rma(const char *function, long long bytes, int target)
{
    log_call_peer(function, bytes, target);
}

int main(int argc, char **argv)
{
    int rank, size;
    logged_start(&argc, &argv, &rank, &size);
    const int iterations = argc > 1 ? atoi(argv[1]) : 4;
    if (size > 7) {
        /* The passive epochs' origins each write an eighth of the target's window, and the last eighth
         * is read. */
        fprintf(stderr, "rma_drawn: at most 7 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;

    long long checksum = 0;
    /* As large as the largest window: no access is larger. */
    const size_t largest = (size_t)size * 64 * (iterations > 0 ? iterations : 1);
    unsigned char *out = malloc(largest), *in = malloc(largest);
    for (int k = 1; k <= iterations; ++k) {
        const int window_bytes = (rank + 1) * k * 64;
#define W(r) (((r) + 1) * k * 64)
        unsigned char *memory = malloc((size_t)window_bytes);
        for (int j = 0; j < window_bytes; ++j)
            memory[j] = (unsigned char)(rank * 31 + k * 7 + j);
        for (size_t j = 0; j < largest; ++j)
            out[j] = (unsigned char)(rank * 13 + k + j * 3);
        MPI_Win win;
        MPI_Win_create(memory, window_bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        log_call("MPI_Win_create", window_bytes);

        MPI_Win_fence(0, win);
        log_call("MPI_Win_fence", 0);
        const int put_bytes = W(right) / 2, get_bytes = W(left) / 4 + 8;
        MPI_Put(out, put_bytes, MPI_BYTE, right, 0, put_bytes, MPI_BYTE, win);
        log_rma("MPI_Put", 2 * (long long)put_bytes, right);
        MPI_Get(in, get_bytes, MPI_BYTE, left, W(left) / 2, get_bytes, MPI_BYTE, win);
        log_rma("MPI_Get", 2 * (long long)get_bytes, left);
        MPI_Win_fence(0, win);
        log_call("MPI_Win_fence", 0);
        for (int j = 0; j < get_bytes; ++j)
            checksum += in[j] * (j % 5 + 1);

        for (int i = 0; i < size; ++i) {
            const int target = (rank + i) % size;
            const int lock = (k + target) % 2 == 0 ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED;
            const int eighth = W(target) / 8;
            const int slot_bytes = eighth / (rank % 2 ? 1 : 2), read_bytes = eighth / 2 + 4 * ((rank + target) % 2);
            MPI_Win_lock(lock, target, 0, win);
            log_rma("MPI_Win_lock", 0, target);
            MPI_Put(out, slot_bytes, MPI_BYTE, target, rank * eighth, slot_bytes, MPI_BYTE, win);
            log_rma("MPI_Put", 2 * (long long)slot_bytes, target);
            MPI_Get(in, read_bytes, MPI_BYTE, target, 7 * eighth, read_bytes, MPI_BYTE, win);
            log_rma("MPI_Get", 2 * (long long)read_bytes, target);
            MPI_Win_unlock(target, win);
            log_rma("MPI_Win_unlock", 0, target);
            for (int j = 0; j < read_bytes; ++j)
                checksum += in[j] * (target + 1);
        }
#undef W

        /* MPI_Win_free completes every access to this rank's window: its memory is final here. */
        MPI_Win_free(&win);
        log_call("MPI_Win_free", 0);
        for (int j = 0; j < window_bytes; ++j)
            checksum += memory[j] * (j % 7 + 1);
        free(memory);
    }
    free(out);
    free(in);

    long long total = 0;
    MPI_Reduce(&checksum, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    log_call_peer("MPI_Reduce", sizeof(long long), 0);
    if (rank == 0)
        printf("rma_drawn: ranks %d iterations %d checksum %lld\n", size, iterations, total);
    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    call_log_close();
    return 0;
}
