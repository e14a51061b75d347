/* User-defined operations (MPI_Op_create): a commutative one on a pair type (a contiguous type of two
 * ints: sums the first, keeps the larger second) in MPI_Allreduce and MPI_Iallreduce, and a
 * non-commutative one (composition of affine maps x -> a x + b mod 97, which MPI applies in rank order)
 * in MPI_Allreduce and in MPI_Reduce to the last rank (non-zero), on MPI_COMM_WORLD and on a split
 * half. */
#include "coll.h"

enum { N = 3, MOD = 97 };

typedef struct { int a, b; } pair;

static void sum_max(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    pair *x = in, *y = inout;
    for (int i = 0; i < *len; ++i) {
        y[i].a += x[i].a;
        y[i].b = x[i].b > y[i].b ? x[i].b : y[i].b;
    }
}

/* inout = in then inout: x -> a_out (a_in x + b_in) + b_out. */
static void compose(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    pair *x = in, *y = inout;
    for (int i = 0; i < *len; ++i) {
        const int a = y[i].a * x[i].a % MOD, b = (y[i].a * x[i].b + y[i].b) % MOD;
        y[i].a = a;
        y[i].b = b;
    }
}

static pair map_of(int rank, int i) { return (pair){(rank * 5 + i + 2) % MOD, (rank * 11 + 3 * i + 1) % MOD}; }

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int world_rank, world_size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &world_rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &world_size);
    MPI_Comm comms[2] = {MPI_COMM_WORLD, MPI_COMM_NULL};
    CALL(MPI_Comm_split, MPI_COMM_WORLD, world_rank < world_size / 2 ? 0 : 1, world_rank, &comms[1]);
    MPI_Datatype pair_type;
    CALL(MPI_Type_contiguous, 2, MPI_INT, &pair_type);
    CALL(MPI_Type_commit, &pair_type);
    MPI_Op sum_max_op, compose_op;
    CALL(MPI_Op_create, sum_max, 1, &sum_max_op);
    CALL(MPI_Op_create, compose, 0, &compose_op);
    for (int c = 0; c < 2; ++c) {
        int rank, size;
        CALL(MPI_Comm_rank, comms[c], &rank);
        CALL(MPI_Comm_size, comms[c], &size);
        pair in[N], out[N], iout[N], chain[N], reduced[N];
        for (int i = 0; i < N; ++i)
            in[i] = (pair){rank + i, (rank * 3 + i) % 5};
        CALL(MPI_Allreduce, in, out, N, pair_type, sum_max_op, comms[c]);
        MPI_Request request;
        CALL(MPI_Iallreduce, in, iout, N, pair_type, sum_max_op, comms[c], &request);
        CALL(MPI_Wait, &request, MPI_STATUS_IGNORE);
        for (int i = 0; i < N; ++i) {
            int max = 0;
            for (int r = 0; r < size; ++r)
                max = (r * 3 + i) % 5 > max ? (r * 3 + i) % 5 : max;
            const int sum = size * (size - 1) / 2 + size * i;
            if (out[i].a != sum || out[i].b != max || iout[i].a != sum || iout[i].b != max)
                conformance_error("comm %d sum_max[%d] = (%d, %d) and (%d, %d), expected (%d, %d)", c, i, out[i].a,
                                  out[i].b, iout[i].a, iout[i].b, sum, max);
        }

        for (int i = 0; i < N; ++i)
            in[i] = map_of(rank, i);
        CALL(MPI_Allreduce, in, chain, N, pair_type, compose_op, comms[c]);
        CALL(MPI_Reduce, in, reduced, N, pair_type, compose_op, size - 1, comms[c]);
        for (int i = 0; i < N; ++i) {
            pair expected = map_of(0, i);
            for (int r = 1; r < size; ++r) {
                pair next = map_of(r, i);
                int len = 1;
                compose(&expected, &next, &len, NULL);
                expected = next;
            }
            if (chain[i].a != expected.a || chain[i].b != expected.b)
                conformance_error("comm %d compose[%d] = (%d, %d), expected (%d, %d)", c, i, chain[i].a, chain[i].b,
                                  expected.a, expected.b);
            if (rank == size - 1 && (reduced[i].a != expected.a || reduced[i].b != expected.b))
                conformance_error("comm %d reduced compose[%d] = (%d, %d), expected (%d, %d)", c, i, reduced[i].a,
                                  reduced[i].b, expected.a, expected.b);
        }
    }
    CALL(MPI_Op_free, &compose_op);
    CALL(MPI_Op_free, &sum_max_op);
    CALL(MPI_Type_free, &pair_type);
    CALL(MPI_Comm_free, &comms[1]);
    return conformance_finish();
}
