/* MPI_Comm_dup_with_info with an info object of hints (and with MPI_INFO_NULL), MPI_Comm_get_info on
 * the result; traffic on each duplicate (MPI_Sendrecv pairs, MPI_Reduce to the last rank, MPI_Gather)
 * checked; freed. */
#include "../conformance.h"

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    MPI_Info info;
    CALL(MPI_Info_create, &info);
    CALL(MPI_Info_set, info, "mpi_assert_no_any_tag", "true");
    CALL(MPI_Info_set, info, "h_trace_conformance", "yes");
    MPI_Comm comms[2];
    CALL(MPI_Comm_dup_with_info, MPI_COMM_WORLD, info, &comms[0]);
    CALL(MPI_Info_free, &info);
    CALL(MPI_Comm_dup_with_info, comms[0], MPI_INFO_NULL, &comms[1]);
    MPI_Info got;
    CALL(MPI_Comm_get_info, comms[0], &got);
    if (got == MPI_INFO_NULL)
        conformance_error("MPI_Comm_get_info gave MPI_INFO_NULL");
    else
        CALL(MPI_Info_free, &got);
    for (int c = 0; c < 2; ++c) {
        MPI_Comm comm = comms[c];
        int crank, csize;
        CALL(MPI_Comm_rank, comm, &crank);
        CALL(MPI_Comm_size, comm, &csize);
        if (crank != rank || csize != size)
            conformance_error("comm %d: rank %d size %d", c, crank, csize);
        const int partner = crank ^ 1;
        if (partner < csize) {
            int out[2] = {c, crank}, in[2] = {-1, -1};
            MPI_Status status;
            CALL(MPI_Sendrecv, out, 2, MPI_INT, partner, c, in, 2, MPI_INT, partner, c, comm, &status);
            if (in[0] != c || in[1] != partner || status.MPI_SOURCE != partner || status.MPI_TAG != c)
                conformance_error("comm %d: sendrecv got %d %d from %d", c, in[0], in[1], status.MPI_SOURCE);
        }
        long value = 10 * crank + c, total = -1;
        CALL(MPI_Reduce, &value, &total, 1, MPI_LONG, MPI_SUM, csize - 1, comm);
        if (crank == csize - 1 && total != 10L * csize * (csize - 1) / 2 + (long)c * csize)
            conformance_error("comm %d: reduce %ld", c, total);
        int all[64];
        int mine = crank * crank + c;
        CALL(MPI_Gather, &mine, 1, MPI_INT, all, 1, MPI_INT, 0, comm);
        if (crank == 0)
            for (int i = 0; i < csize; ++i)
                if (all[i] != i * i + c)
                    conformance_error("comm %d: gather[%d] = %d", c, i, all[i]);
    }
    CALL(MPI_Comm_free, &comms[1]);
    CALL(MPI_Comm_free, &comms[0]);
    return conformance_finish();
}
