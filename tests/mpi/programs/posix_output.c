/* A code that writes its output with plain POSIX and stdio calls, one set of files per rank, for the
 * capture of POSIX I/O (open, write, fwrite ... wrapped by the preloaded tracer). Every timestep each
 * rank write()s a block to out.<rank> and fwrite()s one to a stdio checkpoint (ckpt_<rank>.dat,
 * zero-padded to 4 digits) and fflush()es it, then all meet in an MPI_Barrier. At the end each rank
 * pwrite()s a trailer after its last block, lseek()s to the end (and checks the offset), fsync()s,
 * fdatasync()s and ftruncate()s the file to its size plus its rank (rank 0 leaves it as it is, the
 * others extend it), closes it; fseek()s the checkpoint back to its start and overwrites it with a
 * 16-byte header (one item of 16 bytes), fclose()s it; creat()s scratch.<rank>, writes 10 bytes to it,
 * closes it, openat()s it again and reads it back (asking for more than it holds: 10 bytes move) and
 * checks it. The scratch files stay, so every file the program leaves, and its size, is known:
 *
 *     out.<rank>           STEPS*BYTES + 64 + rank
 *     ckpt_<rank>.dat      STEPS*BYTES (16 if that is less)
 *     scratch.<rank>       10
 *
 * An MPI_Allreduce of a checksum of all bytes written and of the failed checks ends the job. Every call
 * of the list above is logged right after it under its plain libc name with the bytes it moved (what
 * read/write/pwrite returned, items returned times the item size for fwrite, 0 for the others). Files
 * go to the current directory; with `escape`, out.<rank> goes to its parent instead ("../<this
 * directory's name>.out.<rank>"), as a name that replay must keep inside its sandbox.
 *
 * Usage: posix_output [STEPS] [BYTES] [escape]    (defaults 4 and 1000) */
#include <mpi.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "logged_start.h"

enum { TRAILER_BYTES = 64, HEADER_BYTES = 16, SCRATCH_BYTES = 10 };
/* What a block is filled for, besides the timesteps (0 .. STEPS-1). */
enum { TRAILER = 1000001, HEADER = 1000002, SCRATCH = 1000003 };

/* A call that failed (already logged): the job cannot go on. */
static void fail(const char *function, const char *name)
{
    fprintf(stderr, "posix_output: %s ", function);
    perror(name);
    exit(1);
}

/* The bytes of block `what` of `rank`: they follow the rank, the block and the position in it. */
static void fill(unsigned char *data, long long bytes, int rank, int what)
{
    for (long long i = 0; i < bytes; ++i)
        data[i] = (unsigned char)(rank * 131 + what * 17 + i * 7 + (i >> 8));
}

static long long sum(const unsigned char *data, long long bytes)
{
    long long total = 0;
    for (long long i = 0; i < bytes; ++i)
        total += data[i];
    return total;
}

int main(int argc, char **argv)
{
    int rank, size;
    logged_start(&argc, &argv, &rank, &size);
    const int steps = argc > 1 ? atoi(argv[1]) : 4;
    const int bytes = argc > 2 ? atoi(argv[2]) : 1000;
    const int escape = argc > 3 && strcmp(argv[3], "escape") == 0;
    if (steps < 1 || bytes < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: posix_output [STEPS] [BYTES] [escape]    (STEPS, BYTES >= 1)\n");
        return 2;
    }
    const off_t data_bytes = (off_t)steps * bytes;
    unsigned char *data = malloc((size_t)bytes);
    if (data == NULL)
        return 2;
    unsigned char small[TRAILER_BYTES];
    long long checksum = 0;
    long long failures = 0;

    char out_name[4200];
    char here[4096] = ".";
    if (escape && getcwd(here, sizeof here) == NULL)
        return 2;
    const char *base = strrchr(here, '/');
    if (escape)
        snprintf(out_name, sizeof out_name, "../%s.out.%d", base ? base + 1 : here, rank);
    else
        snprintf(out_name, sizeof out_name, "out.%d", rank);
    char ckpt_name[64];
    snprintf(ckpt_name, sizeof ckpt_name, "ckpt_%04d.dat", rank);

    const int out = open(out_name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    log_io("open", 0);
    if (out < 0)
        fail("open", out_name);
    FILE *ckpt = fopen(ckpt_name, "w");
    log_io("fopen", 0);
    if (ckpt == NULL)
        fail("fopen", ckpt_name);

    for (int step = 0; step < steps; ++step) {
        fill(data, bytes, rank, step);
        const ssize_t written = write(out, data, (size_t)bytes);
        log_io("write", written < 0 ? 0 : written);
        if (written != bytes)
            fail("write", out_name);
        const size_t items = fwrite(data, 1, (size_t)bytes, ckpt);
        log_io("fwrite", (long long)items);
        if (items != (size_t)bytes)
            fail("fwrite", ckpt_name);
        const int flushed = fflush(ckpt);
        log_io("fflush", 0);
        if (flushed != 0)
            fail("fflush", ckpt_name);
        checksum += 2 * sum(data, bytes);
        MPI_Barrier(MPI_COMM_WORLD);
        log_call("MPI_Barrier", 0);
    }

    /* The trailer after the last block, without moving the file offset; then the end of the file. */
    fill(small, TRAILER_BYTES, rank, TRAILER);
    const ssize_t trailer = pwrite(out, small, TRAILER_BYTES, data_bytes);
    log_io("pwrite", trailer < 0 ? 0 : trailer);
    if (trailer != TRAILER_BYTES)
        fail("pwrite", out_name);
    checksum += sum(small, TRAILER_BYTES);
    const off_t end = lseek(out, 0, SEEK_END);
    log_io("lseek", 0);
    if (end < 0)
        fail("lseek", out_name);
    failures += end != data_bytes + TRAILER_BYTES;
    const int synced = fsync(out);
    log_io("fsync", 0);
    if (synced != 0)
        fail("fsync", out_name);
    const int data_synced = fdatasync(out);
    log_io("fdatasync", 0);
    if (data_synced != 0)
        fail("fdatasync", out_name);
    const int truncated = ftruncate(out, data_bytes + TRAILER_BYTES + rank);
    log_io("ftruncate", 0);
    if (truncated != 0)
        fail("ftruncate", out_name);
    const int out_closed = close(out);
    log_io("close", 0);
    if (out_closed != 0)
        fail("close", out_name);

    /* The checkpoint's header, over the start of its first block. */
    const int sought = fseek(ckpt, 0, SEEK_SET);
    log_io("fseek", 0);
    if (sought != 0)
        fail("fseek", ckpt_name);
    fill(small, HEADER_BYTES, rank, HEADER);
    const size_t headers = fwrite(small, HEADER_BYTES, 1, ckpt);
    log_io("fwrite", (long long)headers * HEADER_BYTES);
    if (headers != 1)
        fail("fwrite", ckpt_name);
    checksum += sum(small, HEADER_BYTES);
    const int ckpt_closed = fclose(ckpt);
    log_io("fclose", 0);
    if (ckpt_closed != 0)
        fail("fclose", ckpt_name);

    /* A scratch file, written and read back. */
    char scratch_name[64];
    snprintf(scratch_name, sizeof scratch_name, "scratch.%d", rank);
    const int scratch = creat(scratch_name, 0644);
    log_io("creat", 0);
    if (scratch < 0)
        fail("creat", scratch_name);
    fill(small, SCRATCH_BYTES, rank, SCRATCH);
    const ssize_t scratch_written = write(scratch, small, SCRATCH_BYTES);
    log_io("write", scratch_written < 0 ? 0 : scratch_written);
    if (scratch_written != SCRATCH_BYTES)
        fail("write", scratch_name);
    checksum += sum(small, SCRATCH_BYTES);
    const int scratch_closed = close(scratch);
    log_io("close", 0);
    if (scratch_closed != 0)
        fail("close", scratch_name);
    const int again = openat(AT_FDCWD, scratch_name, O_RDONLY);
    log_io("openat", 0);
    if (again < 0)
        fail("openat", scratch_name);
    unsigned char back[TRAILER_BYTES];
    const ssize_t read_back = read(again, back, sizeof back); /* more than the file holds */
    log_io("read", read_back < 0 ? 0 : read_back);
    if (read_back < 0)
        fail("read", scratch_name);
    failures += read_back != SCRATCH_BYTES || memcmp(back, small, SCRATCH_BYTES) != 0;
    const int again_closed = close(again);
    log_io("close", 0);
    if (again_closed != 0)
        fail("close", scratch_name);

    long long mine[2] = {checksum, failures}, total[2] = {0, 0};
    MPI_Allreduce(mine, total, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    log_call("MPI_Allreduce", 2 * (long long)sizeof(long long));
    if (rank == 0)
        printf("posix_output: %d ranks, %d steps of %d bytes, %lld bytes written per rank, checksum %lld, "
               "%lld failures\n",
               size, steps, bytes, 2 * (long long)data_bytes + TRAILER_BYTES + HEADER_BYTES + SCRATCH_BYTES,
               total[0], total[1]);
    free(data);
    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    return total[1] == 0 ? 0 : 1;
}
