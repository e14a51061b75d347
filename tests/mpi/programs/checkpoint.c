/* A checkpointing code's I/O: every timestep each rank writes its block of a shared file at an offset
 * that follows its rank (MPI_File_write_at_all), with a view of MPI_INT; at the end it reads its last
 * block back (MPI_File_read_at) and checks it, writes a trailer with its own file pointer (seek,
 * MPI_File_write_all) and one with the shared pointer (MPI_File_write_ordered), syncs, and checks the
 * file's size; reads its first block again with a split collective read and with MPI_File_iread_at;
 * writes all its timesteps again into interleaved.dat in one MPI_File_write_all through a strided
 * view (a vector filetype: the same layout as the shared file's) and reads its last block back;
 * then every rank writes a file of its own (ckpt.<rank>.dat, zero-padded to 4 digits: on
 * MPI_COMM_SELF) with MPI_File_write and MPI_File_iwrite in turn, and deletes a scratch file of its
 * own.
 * Files go to the current directory; with `escape`, each rank's own file goes to its parent instead
 * ("../<this directory's name>.ckpt.<rank>.dat"), as a name that replay must keep inside its sandbox.
 *
 * Usage: checkpoint [STEPS] [BLOCK_INTS] [escape]    (defaults 4 and 256) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "logged_start.h"

int main(int argc, char **argv)
{
    int rank, size;
    logged_start(&argc, &argv, &rank, &size);
    const int steps = argc > 1 ? atoi(argv[1]) : 4;
    const int block = argc > 2 ? atoi(argv[2]) : 256;
    const int escape = argc > 3 && strcmp(argv[3], "escape") == 0;
    const long long block_bytes = (long long)block * sizeof(int);
    int *data = malloc((size_t)block * sizeof(int));
    int failures = 0;

    MPI_File shared;
    MPI_File_open(MPI_COMM_WORLD, "shared.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &shared);
    log_io("MPI_File_open", 0);
    MPI_File_set_view(shared, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    log_io("MPI_File_set_view", 0);
    for (int step = 0; step < steps; ++step) {
        for (int i = 0; i < block; ++i)
            data[i] = step * 1000000 + rank * 1000 + i;
        const MPI_Offset at = ((MPI_Offset)step * size + rank) * block; /* in ints: the view's etype */
        MPI_File_write_at_all(shared, at, data, block, MPI_INT, MPI_STATUS_IGNORE);
        log_io("MPI_File_write_at_all", block_bytes);
    }
    /* Collective writes go through aggregator ranks: sync before reading back. */
    MPI_File_sync(shared);
    log_io("MPI_File_sync", 0);
    const MPI_Offset last = ((MPI_Offset)(steps - 1) * size + rank) * block;
    MPI_Status status;
    MPI_File_read_at(shared, last, data, block, MPI_INT, &status);
    log_io("MPI_File_read_at", block_bytes);
    for (int i = 0; i < block; ++i)
        failures += data[i] != (steps - 1) * 1000000 + rank * 1000 + i;

    /* Trailers after the timesteps: one int per rank with the individual pointer, then one more per
     * rank in rank order with the shared pointer. */
    MPI_File_seek(shared, (MPI_Offset)steps * size * block + rank, MPI_SEEK_SET);
    log_io("MPI_File_seek", 0);
    MPI_File_write_all(shared, &rank, 1, MPI_INT, MPI_STATUS_IGNORE);
    log_io("MPI_File_write_all", sizeof(int));
    MPI_File_seek_shared(shared, (MPI_Offset)steps * size * block + size, MPI_SEEK_SET);
    log_io("MPI_File_seek_shared", 0);
    MPI_File_write_ordered(shared, &rank, 1, MPI_INT, MPI_STATUS_IGNORE);
    log_io("MPI_File_write_ordered", sizeof(int));
    /* Every rank's trailers in the file before any rank asks for its size: MPI's sync-barrier-sync. */
    MPI_File_sync(shared);
    log_io("MPI_File_sync", 0);
    MPI_Barrier(MPI_COMM_WORLD);
    log_call("MPI_Barrier", 0);
    MPI_File_sync(shared);
    log_io("MPI_File_sync", 0);
    MPI_Offset file_size;
    MPI_File_get_size(shared, &file_size);
    log_io("MPI_File_get_size", 0);
    const MPI_Offset expected = ((MPI_Offset)steps * size * block + 2 * size) * (MPI_Offset)sizeof(int);
    failures += file_size != expected;

    /* A split collective read of the first timestep's block. */
    MPI_File_read_at_all_begin(shared, (MPI_Offset)rank * block, data, block, MPI_INT);
    log_io("MPI_File_read_at_all_begin", block_bytes);
    MPI_File_read_at_all_end(shared, data, MPI_STATUS_IGNORE);
    log_io("MPI_File_read_at_all_end", 0);
    failures += data[0] != rank * 1000;
    /* The same, non-blocking, with a rank's own read. */
    MPI_Request request;
    MPI_File_iread_at(shared, (MPI_Offset)rank * block, data, block, MPI_INT, &request);
    log_io("MPI_File_iread_at", block_bytes);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    log_completion("MPI_Wait", 1);
    failures += data[1] != rank * 1000 + 1;
    MPI_File_close(&shared);
    log_io("MPI_File_close", 0);

    /* The timesteps again, in one collective write through a strided view: a vector filetype picks
     * the rank's block of every timestep (block ints every size * block ints, from the rank's own
     * displacement), so the file interleaves the ranks as the shared file does; the rank then reads
     * its last block back through the view. */
    MPI_Datatype strided;
    MPI_Type_vector(steps, block, size * block, MPI_INT, &strided);
    log_call("MPI_Type_vector", 0);
    MPI_Type_commit(&strided);
    log_call("MPI_Type_commit", 0);
    MPI_File interleaved;
    MPI_File_open(MPI_COMM_WORLD, "interleaved.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &interleaved);
    log_io("MPI_File_open", 0);
    MPI_File_set_view(interleaved, (MPI_Offset)rank * block_bytes, MPI_INT, strided, "native", MPI_INFO_NULL);
    log_io("MPI_File_set_view", 0);
    int *every_step = malloc((size_t)steps * block * sizeof(int));
    for (int step = 0; step < steps; ++step)
        for (int i = 0; i < block; ++i)
            every_step[step * block + i] = step * 1000000 + rank * 1000 + i;
    MPI_File_write_all(interleaved, every_step, steps * block, MPI_INT, MPI_STATUS_IGNORE);
    log_io("MPI_File_write_all", steps * block_bytes);
    /* Aggregator ranks wrote the collective's data: sync-barrier-sync before reading it back. */
    MPI_File_sync(interleaved);
    log_io("MPI_File_sync", 0);
    MPI_Barrier(MPI_COMM_WORLD);
    log_call("MPI_Barrier", 0);
    MPI_File_sync(interleaved);
    log_io("MPI_File_sync", 0);
    MPI_File_read_at(interleaved, (MPI_Offset)(steps - 1) * block, data, block, MPI_INT, &status);
    log_io("MPI_File_read_at", block_bytes);
    for (int i = 0; i < block; ++i)
        failures += data[i] != (steps - 1) * 1000000 + rank * 1000 + i;
    MPI_File_close(&interleaved);
    log_io("MPI_File_close", 0);
    MPI_Type_free(&strided);
    log_call("MPI_Type_free", 0);
    free(every_step);

    /* A file of each rank's own, and a scratch file deleted at once. */
    char name[4200];
    char here[4096] = ".";
    if (escape && getcwd(here, sizeof here) == NULL)
        return 2;
    const char *base = strrchr(here, '/');
    if (escape)
        snprintf(name, sizeof name, "../%s.ckpt.%04d.dat", base ? base + 1 : here, rank);
    else
        snprintf(name, sizeof name, "ckpt.%04d.dat", rank);
    MPI_File own;
    MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &own);
    log_io("MPI_File_open", 0);
    for (int step = 0; step < steps; ++step) {
        if (step % 2 == 0) {
            MPI_File_write(own, data, block, MPI_INT, MPI_STATUS_IGNORE);
            log_io("MPI_File_write", block_bytes);
        } else {
            MPI_File_iwrite(own, data, block, MPI_INT, &request);
            log_io("MPI_File_iwrite", block_bytes);
            MPI_Wait(&request, MPI_STATUS_IGNORE);
            log_completion("MPI_Wait", 1);
        }
    }
    MPI_File_set_size(own, (MPI_Offset)steps * block_bytes + rank);
    log_io("MPI_File_set_size", 0);
    MPI_File_close(&own);
    log_io("MPI_File_close", 0);
    snprintf(name, sizeof name, "scratch-%d", rank);
    MPI_File scratch;
    MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &scratch);
    log_io("MPI_File_open", 0);
    MPI_File_close(&scratch);
    log_io("MPI_File_close", 0);
    MPI_File_delete(name, MPI_INFO_NULL);
    log_io("MPI_File_delete", 0);

    int all_failures = 0;
    MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    log_call("MPI_Allreduce", sizeof(int));
    if (rank == 0)
        printf("checkpoint: %d steps of %d ints on %d ranks, %lld bytes in the shared file, %d failures\n", steps,
               block, size, (long long)file_size, all_failures);
    free(data);
    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    return all_failures == 0 ? 0 : 1;
}
