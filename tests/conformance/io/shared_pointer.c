/* The shared file pointer: every rank appends a record with MPI_File_write_shared (in whatever order
 * the ranks come), MPI_File_seek_shared back to the start, MPI_File_read_ordered reads the records in
 * rank order (each a record of some rank, all ranks once); MPI_File_get_position_shared at the end;
 * then MPI_File_write_ordered appends records in rank order, read back with MPI_File_read_at. Atomic
 * mode (MPI_File_set_atomicity) makes each rank's writes visible to the others' reads. */
#include "../conformance.h"

enum { R = 16 }; /* ints per record */

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);

    MPI_File fh;
    CALL(MPI_File_open, MPI_COMM_WORLD, "conformance_io_shared_pointer.dat",
         MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh);
    CALL(MPI_File_set_atomicity, fh, 1);
    CALL(MPI_File_set_view, fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);

    int record[R], in[R];
    for (int i = 0; i < R; ++i)
        record[i] = rank * 100 + i;
    MPI_Status status;
    CALL(MPI_File_write_shared, fh, record, R, MPI_INT, &status);
    CALL(MPI_Barrier, MPI_COMM_WORLD);

    CALL(MPI_File_seek_shared, fh, 0, MPI_SEEK_SET);
    CALL(MPI_File_read_ordered, fh, in, R, MPI_INT, &status);
    int count;
    CALL(MPI_Get_count, &status, MPI_INT, &count);
    const int writer = in[0] / 100;
    if (count != R || writer < 0 || writer >= size)
        conformance_error("read_ordered: %d ints, first %d", count, in[0]);
    for (int i = 0; i < R; ++i)
        if (in[i] != writer * 100 + i)
            conformance_error("record of rank %d [%d] = %d", writer, i, in[i]);
    int *writers = malloc(size * sizeof(int));
    CALL(MPI_Allgather, &writer, 1, MPI_INT, writers, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; ++r)
        for (int s = 0; s < r; ++s)
            if (writers[r] == writers[s])
                conformance_error("ranks %d and %d read the record of rank %d", s, r, writers[r]);
    free(writers);

    MPI_Offset position;
    CALL(MPI_File_get_position_shared, fh, &position);
    if (position != (MPI_Offset)size * R)
        conformance_error("shared position %lld, expected %d", (long long)position, size * R);

    for (int i = 0; i < R; ++i)
        record[i] = -(rank * 100 + i);
    CALL(MPI_File_write_ordered, fh, record, R, MPI_INT, &status);
    CALL(MPI_Barrier, MPI_COMM_WORLD);
    const int left = (rank + size - 1) % size;
    CALL(MPI_File_read_at, fh, (MPI_Offset)(size + left) * R, in, R, MPI_INT, &status);
    for (int i = 0; i < R; ++i)
        if (in[i] != -(left * 100 + i))
            conformance_error("ordered record of rank %d [%d] = %d", left, i, in[i]);

    CALL(MPI_File_close, &fh);
    return conformance_finish();
}
