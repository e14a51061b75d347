/* MPI_Comm_split where some ranks pass MPI_UNDEFINED (and get MPI_COMM_NULL) and the others split
 * into two colours; the members then bcast from their last rank and exchange with MPI_Sendrecv,
 * while world traffic (an MPI_Barrier and an MPI_Allreduce) continues for all. */
#include "../conformance.h"

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    /* Ranks 1 and 3 (mod 5) stay out; the others split by rank mod 2. */
    const int out = rank % 5 == 1 || rank % 5 == 3;
    const int colour = out ? MPI_UNDEFINED : rank % 2;
    MPI_Comm comm;
    CALL(MPI_Comm_split, MPI_COMM_WORLD, colour, rank, &comm);
    if (out) {
        if (comm != MPI_COMM_NULL)
            conformance_error("MPI_UNDEFINED colour gave a communicator");
    } else if (comm == MPI_COMM_NULL) {
        conformance_error("colour %d gave MPI_COMM_NULL", colour);
    } else {
        int members[16], count = 0;
        for (int r = 0; r < size; ++r)
            if (!(r % 5 == 1 || r % 5 == 3) && r % 2 == colour)
                members[count++] = r;
        int crank, csize;
        CALL(MPI_Comm_rank, comm, &crank);
        CALL(MPI_Comm_size, comm, &csize);
        if (csize != count || members[crank] != rank)
            conformance_error("colour %d: rank %d of %d, expected %d members", colour, crank, csize, count);
        int value = crank == csize - 1 ? 1000 + colour : -1;
        CALL(MPI_Bcast, &value, 1, MPI_INT, csize - 1, comm);
        if (value != 1000 + colour)
            conformance_error("colour %d: bcast %d", colour, value);
        const int partner = crank ^ 1;
        if (partner < csize) {
            int mine = rank, theirs = -1;
            MPI_Status status;
            CALL(MPI_Sendrecv, &mine, 1, MPI_INT, partner, 3, &theirs, 1, MPI_INT, partner, 3, comm, &status);
            if (theirs != members[partner])
                conformance_error("colour %d: sendrecv got %d, expected %d", colour, theirs, members[partner]);
        }
        CALL(MPI_Comm_free, &comm);
    }
    CALL(MPI_Barrier, MPI_COMM_WORLD);
    int participants = !out, total = 0;
    CALL(MPI_Allreduce, &participants, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int expected = 0;
    for (int r = 0; r < size; ++r)
        expected += !(r % 5 == 1 || r % 5 == 3);
    if (total != expected)
        conformance_error("participants %d, expected %d", total, expected);
    return conformance_finish();
}
