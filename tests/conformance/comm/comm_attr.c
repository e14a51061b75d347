/* Attribute caching on communicators: two keyvals made with MPI_Comm_create_keyval, one copied on
 * MPI_Comm_dup by a copy callback (which doubles the value) and one not (MPI_COMM_NULL_COPY_FN);
 * MPI_Comm_set_attr on a duplicate of the world, MPI_Comm_dup of it (the callbacks run),
 * MPI_Comm_get_attr on both, MPI_Comm_delete_attr (the delete callback runs), the callbacks
 * counted; MPI_TAG_UB on the world; MPI_Comm_free runs the delete callbacks of what is left;
 * MPI_Comm_free_keyval. An MPI_Allreduce on each communicator. */
#include "../conformance.h"

static int copies, deletes;

static int copy_double(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)comm, (void)keyval, (void)extra;
    ++copies;
    *(void **)out = (void *)((MPI_Aint)in * 2);
    *flag = 1;
    return MPI_SUCCESS;
}

static int count_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)value;
    ++deletes;
    ++*(int *)extra;
    return MPI_SUCCESS;
}

static void expect_attr(MPI_Comm comm, int keyval, int present, MPI_Aint value, const char *what)
{
    void *got = NULL;
    int flag = -1;
    CALL(MPI_Comm_get_attr, comm, keyval, &got, &flag);
    if (flag != present || (present && (MPI_Aint)got != value))
        conformance_error("%s: flag %d value %ld, expected %d %ld", what, flag, (long)(MPI_Aint)got, present, (long)value);
}

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    int copied_deletes = 0, plain_deletes = 0;
    int copied, plain;
    CALL(MPI_Comm_create_keyval, copy_double, count_delete, &copied, &copied_deletes);
    CALL(MPI_Comm_create_keyval, MPI_COMM_NULL_COPY_FN, count_delete, &plain, &plain_deletes);
    MPI_Comm dup, dup2;
    CALL(MPI_Comm_dup, MPI_COMM_WORLD, &dup);
    CALL(MPI_Comm_set_attr, dup, copied, (void *)(MPI_Aint)(rank + 1));
    CALL(MPI_Comm_set_attr, dup, plain, (void *)(MPI_Aint)(100 + rank));
    expect_attr(dup, copied, 1, rank + 1, "dup copied");
    expect_attr(dup, plain, 1, 100 + rank, "dup plain");
    CALL(MPI_Comm_dup, dup, &dup2);
    if (copies != 1)
        conformance_error("copy callback ran %d times", copies);
    expect_attr(dup2, copied, 1, 2 * (rank + 1), "dup2 copied");
    expect_attr(dup2, plain, 0, 0, "dup2 plain");
    /* Setting again replaces (the delete callback runs on the old value). */
    CALL(MPI_Comm_set_attr, dup, copied, (void *)(MPI_Aint)(rank + 50));
    expect_attr(dup, copied, 1, rank + 50, "dup copied replaced");
    CALL(MPI_Comm_delete_attr, dup, plain);
    expect_attr(dup, plain, 0, 0, "dup plain deleted");
    if (copied_deletes != 1 || plain_deletes != 1)
        conformance_error("delete callbacks %d %d, expected 1 1", copied_deletes, plain_deletes);
    void *tag_ub = NULL;
    int flag = 0;
    CALL(MPI_Comm_get_attr, MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    if (!flag || *(int *)tag_ub < 32767)
        conformance_error("MPI_TAG_UB flag %d", flag);
    int total = 0;
    CALL(MPI_Allreduce, &rank, &total, 1, MPI_INT, MPI_SUM, dup2);
    if (total != size * (size - 1) / 2)
        conformance_error("allreduce on dup2 %d", total);
    CALL(MPI_Allreduce, &rank, &total, 1, MPI_INT, MPI_MAX, dup);
    if (total != size - 1)
        conformance_error("allreduce on dup %d", total);
    CALL(MPI_Comm_free, &dup2); /* deletes dup2's copied attribute */
    CALL(MPI_Comm_free, &dup);  /* deletes dup's copied attribute */
    if (copied_deletes != 3 || plain_deletes != 1 || deletes != 4)
        conformance_error("after frees: delete callbacks %d %d (%d), expected 3 1 (4)", copied_deletes, plain_deletes,
                          deletes);
    CALL(MPI_Comm_free_keyval, &copied);
    CALL(MPI_Comm_free_keyval, &plain);
    if (copied != MPI_KEYVAL_INVALID || plain != MPI_KEYVAL_INVALID)
        conformance_error("freed keyvals not MPI_KEYVAL_INVALID");
    return conformance_finish();
}
