/* The file names of the issue "file-name patterns from coincidence": a shared input whose path holds
 * runs of digits that some ranks' numbers spell, and files of each rank's own.
 *
 * The shared input is lib3.11/part_0002.dat (as a Python installation's lib/python3.11/...): rank 2's
 * number in it padded to 4 digits, rank 3's and rank 11's in the directory's name, so at 4 ranks two
 * ranks and at 12 ranks three see their own number in it, each in another place, while every rank
 * opens the same file. Before MPI_Init, untraced and unlogged (as an installation is there before the
 * job), every rank makes the directory lib3.11 and the input: SIZE*BYTES bytes (the world's size from
 * the launcher's environment, OMPI_COMM_WORLD_SIZE or PMI_SIZE), each byte following its offset,
 * written to a file of the rank's own (lib3.11/part_0002.dat.<rank>.tmp, the rank from
 * OMPI_COMM_WORLD_RANK or PMI_RANK) and renamed over the input, so no rank reads another's
 * half-written file. After an MPI_Barrier every rank open()s the input, pread()s its own BYTES at
 * rank*BYTES, close()s it; reads the same part again through MPI-IO (MPI_File_open on
 * MPI_COMM_WORLD, read-only, MPI_File_read_at_all, MPI_File_close); then writes a file of its own,
 * out_<rank>.dat, with fopen(), fwrite() of BYTES bytes, fclose(). The ranks' parts tile the input, so
 * a replay that makes it as large as its reads need makes it this size. Each read is checked against
 * the known content; an MPI_Allreduce of the failed checks ends the job. The files left, and their
 * sizes:
 *
 *     lib3.11/part_0002.dat    SIZE*BYTES
 *     out_<rank>.dat           BYTES
 *
 * Every call after MPI_Init is logged right after it under its name (the plain libc name for POSIX
 * calls) with the bytes it moved; the calls that name a file (open, fopen, MPI_File_open) also log
 * the name as given (file=NAME), which tests/mpi/check_file_names.py compares with the trace's: the
 * shared input must be one name for all ranks, literal, and out_<rank>.dat one pattern. Every rank
 * names as many files, in the same order.
 *
 * Usage: file_names [BYTES]    (default 256) */
#include <mpi.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "logged_start.h"

static const char directory[] = "lib3.11";
static const char shared_name[] = "lib3.11/part_0002.dat";

/* A call that failed (already logged, if after MPI_Init): the job cannot go on. */
static void fail(const char *function, const char *name)
{
    fprintf(stderr, "file_names: %s ", function);
    perror(name);
    exit(1);
}

/* The byte of the shared input at `offset`. */
static unsigned char content(long long offset)
{
    return (unsigned char)(offset * 7 + (offset >> 8) * 3 + 11);
}

/* Failed checks of `got` bytes read into `data` from `offset` where `expected` were asked for: 0 or 1. */
static int check(const unsigned char *data, long long got, long long expected, long long offset)
{
    if (got != expected)
        return 1;
    for (long long i = 0; i < got; ++i)
        if (data[i] != content(offset + i))
            return 1;
    return 0;
}

/* Makes the directory and the shared input of `bytes` bytes, before MPI_Init: untraced, unlogged.
 * `rank` names the file of its own that is renamed over the input. */
static void make_input(long long bytes, int rank)
{
    if (mkdir(directory, 0755) != 0 && errno != EEXIST)
        fail("mkdir", directory);
    char name[128];
    snprintf(name, sizeof name, "%s.%d.tmp", shared_name, rank);
    FILE *file = fopen(name, "w");
    if (file == NULL)
        fail("fopen", name);
    for (long long at = 0; at < bytes; ++at)
        if (fputc(content(at), file) == EOF)
            fail("fputc", name);
    if (fclose(file) != 0)
        fail("fclose", name);
    if (rename(name, shared_name) != 0)
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
        fprintf(stderr, "file_names: neither %s nor %s is set: the %s is needed before MPI_Init, run this "
                        "under mpirun\n", open_mpi, pmi, what);
        exit(2);
    }
    return atoi(value);
}

/* This rank's part of the shared input through POSIX: failed checks. */
static int read_shared_posix(unsigned char *data, int bytes, int rank)
{
    const off_t offset = (off_t)rank * bytes;
    const int fd = open(shared_name, O_RDONLY);
    log_io_file("open", 0, shared_name);
    if (fd < 0)
        fail("open", shared_name);
    const ssize_t got = pread(fd, data, (size_t)bytes, offset);
    log_io("pread", got < 0 ? 0 : got);
    if (got < 0)
        fail("pread", shared_name);
    const int closed = close(fd);
    log_io("close", 0);
    if (closed != 0)
        fail("close", shared_name);
    return check(data, got, bytes, offset);
}

/* The same part through MPI-IO, all ranks together: failed checks. */
static int read_shared_mpi_io(unsigned char *data, int bytes, int rank)
{
    const MPI_Offset offset = (MPI_Offset)rank * bytes;
    MPI_File file;
    MPI_File_open(MPI_COMM_WORLD, shared_name, MPI_MODE_RDONLY, MPI_INFO_NULL, &file);
    log_io_file("MPI_File_open", 0, shared_name);
    MPI_Status status;
    MPI_File_read_at_all(file, offset, data, bytes, MPI_BYTE, &status);
    log_io("MPI_File_read_at_all", bytes);
    int got = 0;
    MPI_Get_count(&status, MPI_BYTE, &got);
    log_call("MPI_Get_count", 0);
    MPI_File_close(&file);
    log_io("MPI_File_close", 0);
    return check(data, got, bytes, offset);
}

/* This rank's own file, out_<rank>.dat, through stdio. */
static void write_own(const unsigned char *data, int bytes, int rank)
{
    char name[64];
    snprintf(name, sizeof name, "out_%d.dat", rank);
    FILE *file = fopen(name, "w");
    log_io_file("fopen", 0, name);
    if (file == NULL)
        fail("fopen", name);
    const size_t items = fwrite(data, 1, (size_t)bytes, file);
    log_io("fwrite", (long long)items);
    if (items != (size_t)bytes)
        fail("fwrite", name);
    const int closed = fclose(file);
    log_io("fclose", 0);
    if (closed != 0)
        fail("fclose", name);
}

int main(int argc, char **argv)
{
    const int bytes = argc > 1 ? atoi(argv[1]) : 256;
    if (bytes < 1) {
        fprintf(stderr, "usage: file_names [BYTES]    (BYTES >= 1)\n");
        return 2;
    }
    const int world = from_environment("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "world's size");
    make_input((long long)world * bytes, from_environment("OMPI_COMM_WORLD_RANK", "PMI_RANK", "world rank"));

    int rank, size;
    logged_start(&argc, &argv, &rank, &size);
    if (size != world) {
        fprintf(stderr, "file_names: the environment says %d ranks, MPI_Comm_size %d\n", world, size);
        return 2;
    }
    unsigned char *data = malloc((size_t)bytes);
    if (data == NULL)
        return 2;
    /* Every rank has made the input before any reads it. */
    MPI_Barrier(MPI_COMM_WORLD);
    log_call("MPI_Barrier", 0);

    int failures = read_shared_posix(data, bytes, rank);
    failures += read_shared_mpi_io(data, bytes, rank);
    write_own(data, bytes, rank);

    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    log_call("MPI_Allreduce", sizeof(int));
    if (rank == 0)
        printf("file_names: %d ranks read %s, %d bytes each, and wrote out_<rank>.dat: %d failures\n", size,
               shared_name, bytes, total);
    free(data);
    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    return total == 0 ? 0 : 1;
}
