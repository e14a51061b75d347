/* MPI_Ineighbor_alltoallw on a 2-D Cartesian communicator (periodic in one dimension, MPI_PROC_NULL
 * at the open edges) and on a directed distributed graph of irregular degrees (neighborhood.h):
 * rank r sends (r + k) % 3 + 1 ints to its out-slot k, as MPI_INTs for even k and as one strided
 * vector for odd k, at byte displacements; received as MPI_INTs in reverse slot order; both
 * started, completed by MPI_Waitall, every block checked. */
#include "neighborhood.h"

static int count_of(int rank, int slot) { return (rank + slot) % 3 + 1; }

struct pending {
    int send[NB_MAX * 6], recv[NB_MAX * 4];
    int scounts[NB_MAX], rcounts[NB_MAX];
    MPI_Aint sdispls[NB_MAX], rdispls[NB_MAX];
    MPI_Datatype stypes[NB_MAX], rtypes[NB_MAX];
};

static void prepare(const struct neighbourhood *nb, struct pending *p, int rank, MPI_Datatype vector_of[4])
{
    for (int i = 0; i < NB_MAX * 6; ++i)
        p->send[i] = -2;
    for (int k = 0; k < nb->outdegree; ++k) {
        const int n = count_of(rank, k);
        p->sdispls[k] = (MPI_Aint)(k * 6 * sizeof(int));
        if (k % 2 == 0) {
            p->scounts[k] = n;
            p->stypes[k] = MPI_INT;
            for (int i = 0; i < n; ++i)
                p->send[k * 6 + i] = nb_value(rank, k, i);
        } else {
            p->scounts[k] = 1;
            p->stypes[k] = vector_of[n];
            for (int i = 0; i < n; ++i)
                p->send[k * 6 + 2 * i] = nb_value(rank, k, i);
        }
    }
    for (int j = 0; j < nb->indegree; ++j) {
        const int s = nb->sources[j];
        p->rcounts[j] = s == MPI_PROC_NULL ? 1 : count_of(s, nb->source_slot[j]);
        p->rdispls[j] = (MPI_Aint)((nb->indegree - 1 - j) * 4 * sizeof(int));
        p->rtypes[j] = MPI_INT;
    }
    for (int i = 0; i < NB_MAX * 4; ++i)
        p->recv[i] = -1;
}

static void check(const struct neighbourhood *nb, const struct pending *p)
{
    for (int j = 0; j < nb->indegree; ++j) {
        const int s = nb->sources[j];
        const int at = (nb->indegree - 1 - j) * 4;
        for (int i = 0; i < 4; ++i) {
            const int expected = s != MPI_PROC_NULL && i < p->rcounts[j] ? nb_value(s, nb->source_slot[j], i) : -1;
            if (p->recv[at + i] != expected)
                conformance_error("%s: slot %d (from %d) element %d = %d, expected %d", nb->name, j, s, i,
                                  p->recv[at + i], expected);
        }
    }
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    /* vector_of[n]: n ints, every other one. */
    MPI_Datatype vector_of[4];
    for (int n = 1; n <= 3; ++n) {
        CALL(MPI_Type_vector, n, 1, 2, MPI_INT, &vector_of[n]);
        CALL(MPI_Type_commit, &vector_of[n]);
    }
    struct neighbourhood nbs[2];
    nb_make_cart(&nbs[0]);
    nb_make_graph(&nbs[1]);
    static struct pending p[2];
    MPI_Request requests[2];
    for (int c = 0; c < 2; ++c) {
        prepare(&nbs[c], &p[c], rank, vector_of);
        CALL(MPI_Ineighbor_alltoallw, p[c].send, p[c].scounts, p[c].sdispls, p[c].stypes, p[c].recv, p[c].rcounts,
             p[c].rdispls, p[c].rtypes, nbs[c].comm, &requests[c]);
    }
    CALL(MPI_Waitall, 2, requests, MPI_STATUSES_IGNORE);
    for (int c = 0; c < 2; ++c)
        check(&nbs[c], &p[c]);
    for (int n = 1; n <= 3; ++n)
        CALL(MPI_Type_free, &vector_of[n]);
    CALL(MPI_Comm_free, &nbs[1].comm);
    CALL(MPI_Comm_free, &nbs[0].comm);
    return conformance_finish();
}
