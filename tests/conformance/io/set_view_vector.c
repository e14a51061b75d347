/* File views: each rank's view starts at its rank's first block and its filetype is a vector of
 * blocks strided by the number of ranks (the ranks' blocks interleave); MPI_File_write_all and, after
 * closing and opening again, MPI_File_read_all through the same view; MPI_File_get_view checked; and
 * rank 0 reads the whole file with the default view (MPI_File_read_at) to check the interleaving. */
#include "../conformance.h"

enum { BLOCKS = 6, LENGTH = 5 };

static const char *name = "conformance_io_set_view_vector.dat";

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);

    MPI_Datatype filetype;
    CALL(MPI_Type_vector, BLOCKS, LENGTH, LENGTH * size, MPI_INT, &filetype);
    CALL(MPI_Type_commit, &filetype);
    const MPI_Offset displacement = (MPI_Offset)rank * LENGTH * sizeof(int);

    int out[BLOCKS * LENGTH], in[BLOCKS * LENGTH];
    for (int i = 0; i < BLOCKS * LENGTH; ++i)
        out[i] = rank * 1000 + i;
    MPI_File fh;
    MPI_Status status;
    CALL(MPI_File_open, MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    CALL(MPI_File_set_view, fh, displacement, MPI_INT, filetype, "native", MPI_INFO_NULL);
    CALL(MPI_File_write_all, fh, out, BLOCKS * LENGTH, MPI_INT, &status);
    CALL(MPI_File_close, &fh);

    CALL(MPI_File_open, MPI_COMM_WORLD, name, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh);
    CALL(MPI_File_set_view, fh, displacement, MPI_INT, filetype, "native", MPI_INFO_NULL);
    MPI_Offset view_displacement;
    MPI_Datatype etype, view_filetype;
    char representation[MPI_MAX_DATAREP_STRING];
    CALL(MPI_File_get_view, fh, &view_displacement, &etype, &view_filetype, representation);
    if (view_displacement != displacement || strcmp(representation, "native") != 0)
        conformance_error("view: displacement %lld, representation %s", (long long)view_displacement, representation);
    CALL(MPI_Type_free, &view_filetype);
    CALL(MPI_File_read_all, fh, in, BLOCKS * LENGTH, MPI_INT, &status);
    int count;
    CALL(MPI_Get_count, &status, MPI_INT, &count);
    if (count != BLOCKS * LENGTH)
        conformance_error("read_all read %d ints", count);
    for (int i = 0; i < BLOCKS * LENGTH; ++i)
        if (in[i] != out[i])
            conformance_error("through the view [%d] = %d", i, in[i]);

    CALL(MPI_File_set_view, fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    if (rank == 0) {
        const int total = BLOCKS * LENGTH * size;
        int *whole = malloc(total * sizeof(int));
        CALL(MPI_File_read_at, fh, 0, whole, total, MPI_INT, &status);
        for (int i = 0; i < total; ++i) {
            const int block = i / LENGTH, owner = block % size, k = (block / size) * LENGTH + i % LENGTH;
            if (whole[i] != owner * 1000 + k) {
                conformance_error("file [%d] = %d, expected %d", i, whole[i], owner * 1000 + k);
                break;
            }
        }
        free(whole);
    }
    CALL(MPI_File_close, &fh);
    CALL(MPI_Type_free, &filetype);
    return conformance_finish();
}
