/* MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) (one node here, so every rank), then MPI_UNDEFINED for
 * the odd ranks in a second call; on the node communicator a ring of MPI_Isend/MPI_Irecv, an
 * MPI_Allreduce, an MPI_Scan and an MPI_Barrier, checked against the ranks' world ranks. */
#include "../conformance.h"

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    MPI_Comm node;
    CALL(MPI_Comm_split_type, MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, size - rank, MPI_INFO_NULL, &node);
    int nrank, nsize;
    CALL(MPI_Comm_rank, node, &nrank);
    CALL(MPI_Comm_size, node, &nsize);
    /* Every rank is on this node, keys reverse the order. */
    if (nsize != size || nrank != size - 1 - rank)
        conformance_error("node rank %d of %d", nrank, nsize);
    int worlds[16];
    CALL(MPI_Allgather, &rank, 1, MPI_INT, worlds, 1, MPI_INT, node);
    const int right = (nrank + 1) % nsize, left = (nrank + nsize - 1) % nsize;
    int out = rank, in = -1;
    MPI_Request requests[2];
    CALL(MPI_Irecv, &in, 1, MPI_INT, left, 0, node, &requests[0]);
    CALL(MPI_Isend, &out, 1, MPI_INT, right, 0, node, &requests[1]);
    CALL(MPI_Waitall, 2, requests, MPI_STATUSES_IGNORE);
    if (in != worlds[left])
        conformance_error("ring got %d, expected %d", in, worlds[left]);
    int one = 1, prefix = 0, total = 0;
    CALL(MPI_Scan, &one, &prefix, 1, MPI_INT, MPI_SUM, node);
    CALL(MPI_Allreduce, &one, &total, 1, MPI_INT, MPI_SUM, node);
    if (prefix != nrank + 1 || total != nsize)
        conformance_error("scan %d allreduce %d", prefix, total);
    CALL(MPI_Barrier, node);
    MPI_Comm even;
    CALL(MPI_Comm_split_type, node, rank % 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &even);
    if (rank % 2) {
        if (even != MPI_COMM_NULL)
            conformance_error("MPI_UNDEFINED gave a communicator");
    } else {
        int esize, count = 0;
        CALL(MPI_Comm_size, even, &esize);
        CALL(MPI_Allreduce, &one, &count, 1, MPI_INT, MPI_SUM, even);
        if (esize != (size + 1) / 2 || count != esize)
            conformance_error("even: size %d count %d", esize, count);
        CALL(MPI_Comm_free, &even);
    }
    CALL(MPI_Comm_free, &node);
    return conformance_finish();
}
