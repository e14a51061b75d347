/* A code that reads its input with plain POSIX and stdio calls, for the capture of POSIX I/O (open,
 * pread, read, fread ... wrapped by the preloaded tracer). Before MPI_Init, where nothing is traced
 * and nothing is logged, every rank makes input.dat with stdio: the same bytes on every rank, the
 * world's size (from the launcher's environment, OMPI_COMM_WORLD_SIZE or PMI_SIZE) times CHUNK times
 * CHUNKS_PER_RANK of them, written to a file of the rank's own (input.dat.<rank>.tmp, the rank from
 * OMPI_COMM_WORLD_RANK or PMI_RANK) and renamed over input.dat, so no rank ever truncates or reads
 * another's half-written file. After an MPI_Barrier, by which every rank has made it, each rank reads
 * its region of CHUNKS_PER_RANK chunks (at rank*CHUNKS_PER_RANK*CHUNK) twice: open()s the file, pread()s its first chunk, lseek()s past it and read()s the others one by
 * one, close()s it; then fopen()s it, fseek()s to the region and fread()s it one chunk per fread
 * (CHUNK items of one byte), fclose()s it. The ranks' regions tile the file, so the reads of all ranks
 * cover it exactly: a replay that makes the file as large as its reads need makes it this size.
 * Every chunk is checked against the known content; an MPI_Allreduce of a checksum of all bytes read
 * and of the failed checks ends the job. Every call of the list above after MPI_Init is logged right
 * after it under its plain libc name with the bytes it moved (what read/pread returned, items
 * returned times the item size for fread, 0 for the others).
 *
 * Usage: posix_input [CHUNK] [CHUNKS_PER_RANK]    (defaults 512 and 4) */
#include <mpi.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "logged_start.h"

static const char input_name[] = "input.dat";

/* A call that failed (already logged, if after MPI_Init): the job cannot go on. */
static void fail(const char *function, const char *name)
{
    fprintf(stderr, "posix_input: %s ", function);
    perror(name);
    exit(1);
}

/* The byte of input.dat at `offset`: it follows the offset, so a chunk read from the wrong place
 * (even a multiple of 256 bytes away) does not match. */
static unsigned char content(long long offset)
{
    return (unsigned char)(offset * 7 + (offset >> 8) * 3 + (offset >> 16) + 13);
}

/* Makes input.dat of `bytes` bytes, before MPI_Init: untraced, unlogged. `rank` names the file of its
 * own that is renamed over it. */
static void make_input(long long bytes, int rank)
{
    char name[64];
    snprintf(name, sizeof name, "%s.%d.tmp", input_name, rank);
    FILE *file = fopen(name, "w");
    if (file == NULL)
        fail("fopen", name);
    unsigned char block[4096];
    for (long long at = 0; at < bytes; at += (long long)sizeof block) {
        const size_t length = bytes - at < (long long)sizeof block ? (size_t)(bytes - at) : sizeof block;
        for (size_t i = 0; i < length; ++i)
            block[i] = content(at + (long long)i);
        if (fwrite(block, 1, length, file) != length)
            fail("fwrite", name);
    }
    if (fclose(file) != 0)
        fail("fclose", name);
    if (rename(name, input_name) != 0)
        fail("rename", name);
}

/* The world's size or this process's rank before MPI_Init, from the launcher's environment: Open MPI's
 * variable `open_mpi` or a PMI launcher's (MPICH's) `pmi`. */
static int from_environment(const char *open_mpi, const char *pmi, const char *what)
{
    const char *value = getenv(open_mpi);
    if (value == NULL || value[0] == '\0')
        value = getenv(pmi);
    if (value == NULL || value[0] == '\0' || atoi(value) < 0) {
        fprintf(stderr, "posix_input: neither %s nor %s is set: the %s is needed before MPI_Init, run this "
                        "under mpirun\n", open_mpi, pmi, what);
        exit(2);
    }
    return atoi(value);
}

/* Failed checks of `length` bytes read into `data` from `offset`: 0 or 1. */
static int check(const unsigned char *data, long long length, long long expected, long long offset)
{
    if (length != expected)
        return 1;
    for (long long i = 0; i < length; ++i)
        if (data[i] != content(offset + i))
            return 1;
    return 0;
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
    const int chunk = argc > 1 ? atoi(argv[1]) : 512;
    const int chunks = argc > 2 ? atoi(argv[2]) : 4;
    if (chunk < 1 || chunks < 1) {
        fprintf(stderr, "usage: posix_input [CHUNK] [CHUNKS_PER_RANK]    (both >= 1)\n");
        return 2;
    }
    const int world = from_environment("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "world's size");
    const long long region = (long long)chunks * chunk;
    make_input(world * region, from_environment("OMPI_COMM_WORLD_RANK", "PMI_RANK", "world rank"));

    int rank, size;
    logged_start(&argc, &argv, &rank, &size);
    if (size != world) {
        fprintf(stderr, "posix_input: the environment says %d ranks, MPI_Comm_size %d\n", world, size);
        return 2;
    }
    unsigned char *data = malloc((size_t)chunk);
    if (data == NULL)
        return 2;
    const off_t start = (off_t)rank * region;
    long long checksum = 0;
    long long failures = 0;

    /* Every rank has made input.dat before any reads it. */
    MPI_Barrier(MPI_COMM_WORLD);
    log_call("MPI_Barrier", 0);

    /* POSIX: the first chunk at its offset, then the others from the file offset. */
    const int input = open(input_name, O_RDONLY);
    log_io("open", 0);
    if (input < 0)
        fail("open", input_name);
    const ssize_t first = pread(input, data, (size_t)chunk, start);
    log_io("pread", first < 0 ? 0 : first);
    if (first < 0)
        fail("pread", input_name);
    failures += check(data, first, chunk, start);
    checksum += sum(data, first);
    const off_t next = lseek(input, start + chunk, SEEK_SET);
    log_io("lseek", 0);
    if (next < 0)
        fail("lseek", input_name);
    failures += next != start + chunk;
    for (int i = 1; i < chunks; ++i) {
        const ssize_t got = read(input, data, (size_t)chunk);
        log_io("read", got < 0 ? 0 : got);
        if (got < 0)
            fail("read", input_name);
        failures += check(data, got, chunk, start + (off_t)i * chunk);
        checksum += sum(data, got);
    }
    const int input_closed = close(input);
    log_io("close", 0);
    if (input_closed != 0)
        fail("close", input_name);

    /* stdio: the same region again, one fread per chunk. */
    FILE *stream = fopen(input_name, "r");
    log_io("fopen", 0);
    if (stream == NULL)
        fail("fopen", input_name);
    const int sought = fseek(stream, start, SEEK_SET);
    log_io("fseek", 0);
    if (sought != 0)
        fail("fseek", input_name);
    for (int i = 0; i < chunks; ++i) {
        const size_t items = fread(data, 1, (size_t)chunk, stream);
        log_io("fread", (long long)items);
        failures += check(data, (long long)items, chunk, start + (off_t)i * chunk);
        checksum += sum(data, (long long)items);
    }
    const int stream_closed = fclose(stream);
    log_io("fclose", 0);
    if (stream_closed != 0)
        fail("fclose", input_name);

    long long mine[2] = {checksum, failures}, total[2] = {0, 0};
    MPI_Allreduce(mine, total, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    log_call("MPI_Allreduce", 2 * (long long)sizeof(long long));
    if (rank == 0)
        printf("posix_input: %d ranks, %lld bytes read per rank, checksum %lld, %lld failures\n", size, 2 * region,
               total[0], total[1]);
    free(data);
    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    return total[1] == 0 ? 0 : 1;
}
