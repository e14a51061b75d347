/* Files in the current directory, through individual file pointers: every rank opens a file of its
 * own there on MPI_COMM_SELF ("conformance_io_current_dir.<rank>.dat"), writes records with
 * MPI_File_write, checks MPI_File_get_position, seeks (MPI_File_seek, MPI_SEEK_SET and MPI_SEEK_CUR),
 * reads with MPI_File_read; all ranks share "./conformance_io_current_dir.dat" on MPI_COMM_WORLD where
 * each writes with MPI_File_write after seeking to its block. The program checks with stat(2) that
 * the files are in the current directory, then deletes them with MPI_File_delete. */
#define _POSIX_C_SOURCE 200809L
#include "../conformance.h"
#include <sys/stat.h>

enum { R = 10, RECORDS = 5 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);

    char own[64];
    snprintf(own, sizeof own, "conformance_io_current_dir.%d.dat", rank);
    MPI_File fh;
    MPI_Status status;
    CALL(MPI_File_open, MPI_COMM_SELF, own, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    int record[R];
    for (int k = 0; k < RECORDS; ++k) {
        for (int i = 0; i < R; ++i)
            record[i] = rank * 1000 + k * 10 + i;
        CALL(MPI_File_write, fh, record, R, MPI_INT, &status);
    }
    MPI_Offset position;
    CALL(MPI_File_get_position, fh, &position);
    if (position != (MPI_Offset)(RECORDS * R * sizeof(int)))
        conformance_error("position after the writes %lld", (long long)position);
    CALL(MPI_File_seek, fh, (MPI_Offset)(R * sizeof(int)), MPI_SEEK_SET);
    CALL(MPI_File_seek, fh, (MPI_Offset)(2 * R * sizeof(int)), MPI_SEEK_CUR);
    CALL(MPI_File_read, fh, record, R, MPI_INT, &status);
    for (int i = 0; i < R; ++i)
        if (record[i] != rank * 1000 + 3 * 10 + i)
            conformance_error("record 3 [%d] = %d", i, record[i]);
    CALL(MPI_File_close, &fh);

    const char *shared = "./conformance_io_current_dir.dat";
    CALL(MPI_File_open, MPI_COMM_WORLD, shared, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    CALL(MPI_File_seek, fh, (MPI_Offset)rank * R * sizeof(int), MPI_SEEK_SET);
    for (int i = 0; i < R; ++i)
        record[i] = rank;
    CALL(MPI_File_write, fh, record, R, MPI_INT, &status);
    CALL(MPI_File_close, &fh);

    struct stat info;
    if (stat(own, &info) != 0 || info.st_size != (off_t)(RECORDS * R * sizeof(int)))
        conformance_error("%s is not in the current directory with %d bytes", own, (int)(RECORDS * R * sizeof(int)));
    if (stat(shared, &info) != 0 || info.st_size != (off_t)(size * R * sizeof(int)))
        conformance_error("%s is not in the current directory with %d bytes", shared, (int)(size * R * sizeof(int)));
    CALL(MPI_File_delete, own, MPI_INFO_NULL);
    CALL(MPI_Barrier, MPI_COMM_WORLD);
    if (rank == 0)
        CALL(MPI_File_delete, shared, MPI_INFO_NULL);
    return conformance_finish();
}
