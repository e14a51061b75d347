/* MPI_File_delete: a file made collectively and written is closed and deleted by rank 0; opening it
 * again without MPI_MODE_CREATE then fails on every rank with MPI_ERR_NO_SUCH_FILE (MPI_Error_class;
 * files return errors by default), and deleting it a second time fails alike. A second file made by
 * every rank on MPI_COMM_SELF is deleted by its own rank. */
#include "../conformance.h"

static const char *name = "conformance_io_delete.dat";

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);

    MPI_File fh;
    MPI_Status status;
    int value = rank;
    CALL(MPI_File_open, MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    CALL(MPI_File_write_at, fh, (MPI_Offset)rank * sizeof(int), &value, 1, MPI_INT, &status);
    CALL(MPI_File_close, &fh);
    if (rank == 0) {
        int err = CALL(MPI_File_delete, name, MPI_INFO_NULL);
        if (err != MPI_SUCCESS)
            conformance_error("MPI_File_delete of an existing file failed");
    }
    CALL(MPI_Barrier, MPI_COMM_WORLD);

    int err = CALL(MPI_File_open, MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    int error_class = MPI_SUCCESS;
    if (err == MPI_SUCCESS) {
        conformance_error("opened a deleted file");
        CALL(MPI_File_close, &fh);
    } else {
        CALL(MPI_Error_class, err, &error_class);
        if (error_class != MPI_ERR_NO_SUCH_FILE)
            conformance_error("opening a deleted file: error class %d, expected MPI_ERR_NO_SUCH_FILE", error_class);
    }
    CALL(MPI_Barrier, MPI_COMM_WORLD);
    if (rank == size - 1) {
        err = CALL(MPI_File_delete, name, MPI_INFO_NULL);
        if (err == MPI_SUCCESS)
            conformance_error("deleted a file twice");
    }

    char own[64];
    snprintf(own, sizeof own, "conformance_io_delete.%d.dat", rank);
    CALL(MPI_File_open, MPI_COMM_SELF, own, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_EXCL, MPI_INFO_NULL, &fh);
    CALL(MPI_File_write, fh, &value, 1, MPI_INT, &status);
    CALL(MPI_File_close, &fh);
    err = CALL(MPI_File_delete, own, MPI_INFO_NULL);
    if (err != MPI_SUCCESS)
        conformance_error("deleting %s failed", own);
    return conformance_finish();
}
