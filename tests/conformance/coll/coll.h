/* Shared by the coll family: the communicators each program runs its collectives on, and the inputs
 * and expected results of the reductions on int. */
#ifndef COLL_H
#define COLL_H

#include "../conformance.h"

enum { COLL_COMMS = 3 };
static const char *const coll_comm_names[COLL_COMMS] = {"world", "half", "dup"};

/* comms[0] = MPI_COMM_WORLD; comms[1] = this rank's half of a split of the world (ranks below size / 2,
 * and the rest); comms[2] = a duplicate of MPI_COMM_WORLD. */
static inline void coll_make_comms(MPI_Comm comms[COLL_COMMS])
{
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    comms[0] = MPI_COMM_WORLD;
    CALL(MPI_Comm_split, MPI_COMM_WORLD, rank < size / 2 ? 0 : 1, rank, &comms[1]);
    CALL(MPI_Comm_dup, MPI_COMM_WORLD, &comms[2]);
}

static inline void coll_free_comms(MPI_Comm comms[COLL_COMMS])
{
    CALL(MPI_Comm_free, &comms[1]);
    CALL(MPI_Comm_free, &comms[2]);
}

/* The predefined operations on int, in this order. */
enum { COLL_OPS = 9 };
static const char *const coll_op_names[COLL_OPS] = {"SUM", "PROD", "MAX", "MIN", "LAND", "LOR", "BAND", "BOR", "BXOR"};

static inline void coll_int_ops(MPI_Op ops[COLL_OPS])
{
    ops[0] = MPI_SUM;
    ops[1] = MPI_PROD;
    ops[2] = MPI_MAX;
    ops[3] = MPI_MIN;
    ops[4] = MPI_LAND;
    ops[5] = MPI_LOR;
    ops[6] = MPI_BAND;
    ops[7] = MPI_BOR;
    ops[8] = MPI_BXOR;
}

/* Element i of the input of `rank` (its rank in the communicator) to operation `op` (1 to 11, so that
 * a product over 8 ranks fits an int; 0 and 1 for the logical operations). */
static inline int coll_input(int op, int rank, int i)
{
    if (op == 4)
        return (rank + i) % 4 != 0;
    if (op == 5)
        return (rank + i) % 4 == 0;
    return (rank * 7 + i * 3) % 11 + 1;
}

static inline int coll_combine(int op, int a, int b)
{
    switch (op) {
    case 0: return a + b;
    case 1: return a * b;
    case 2: return a > b ? a : b;
    case 3: return a < b ? a : b;
    case 4: return a && b;
    case 5: return a || b;
    case 6: return a & b;
    case 7: return a | b;
    default: return a ^ b;
    }
}

/* The reduction of element i of the inputs of ranks first..last. */
static inline int coll_fold(int op, int first, int last, int i)
{
    int result = coll_input(op, first, i);
    for (int r = first + 1; r <= last; ++r)
        result = coll_combine(op, result, coll_input(op, r, i));
    return result;
}

#endif
