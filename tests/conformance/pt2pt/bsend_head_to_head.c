/* Buffered sends that the program relies on: partners (0,1), (2,3), ... both MPI_Bsend three large
 * messages (beyond any eager limit) to each other before either receives. With MPI_Ssend (or a
 * standard send the library does not buffer) this would deadlock; the attached buffer makes it
 * correct. The buffer is detached at the end (which waits for the buffered messages to go). */
#include "conformance.h"

enum { MESSAGES = 3, LENGTH = 40000, TAG = 9 };

int main(int argc, char **argv)
{
    conformance_init(&argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    const int partner = rank ^ 1;
    if (partner < size) {
        int pack_size;
        CALL(MPI_Pack_size, LENGTH, MPI_INT, MPI_COMM_WORLD, &pack_size);
        const int buffer_size = MESSAGES * (pack_size + MPI_BSEND_OVERHEAD);
        char *buffer = malloc(buffer_size);
        CALL(MPI_Buffer_attach, buffer, buffer_size);
        int *out = malloc(LENGTH * sizeof(int)), *in = malloc(LENGTH * sizeof(int));
        for (int m = 0; m < MESSAGES; ++m) {
            for (int i = 0; i < LENGTH; ++i)
                out[i] = rank * 1000000 + m * 100000 + i;
            CALL(MPI_Bsend, out, LENGTH, MPI_INT, partner, TAG + m, MPI_COMM_WORLD);
        }
        for (int m = 0; m < MESSAGES; ++m) {
            MPI_Status status;
            CALL(MPI_Recv, in, LENGTH, MPI_INT, partner, TAG + m, MPI_COMM_WORLD, &status);
            int count;
            CALL(MPI_Get_count, &status, MPI_INT, &count);
            if (count != LENGTH || status.MPI_SOURCE != partner || status.MPI_TAG != TAG + m)
                conformance_error("message %d: count %d source %d tag %d", m, count, status.MPI_SOURCE, status.MPI_TAG);
            for (int i = 0; i < LENGTH; ++i)
                if (in[i] != partner * 1000000 + m * 100000 + i) {
                    conformance_error("message %d: in[%d] = %d", m, i, in[i]);
                    break;
                }
        }
        void *detached;
        int detached_size;
        CALL(MPI_Buffer_detach, &detached, &detached_size);
        if (detached != buffer || detached_size != buffer_size)
            conformance_error("MPI_Buffer_detach gave %d bytes, attached %d", detached_size, buffer_size);
        free(buffer);
        free(out);
        free(in);
    }
    return conformance_finish();
}
