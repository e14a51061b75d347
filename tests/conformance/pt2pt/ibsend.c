/* MPI_Ibsend, relied upon: partners both MPI_Ibsend two large messages (beyond any eager limit) to
 * each other and complete them with MPI_Wait before either receives. A buffered send completes once
 * its data is in the attached buffer, so this cannot deadlock (with MPI_Isend and MPI_Wait it would,
 * for messages the library does not buffer). Then the partners receive with MPI_Irecv/MPI_Waitall,
 * check the data, and detach the buffer. */
#include "conformance.h"

enum { MESSAGES = 2, LENGTH = 30000, TAG = 14 };

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
        int *out = malloc(MESSAGES * LENGTH * sizeof(int)), *in = malloc(MESSAGES * LENGTH * sizeof(int));
        for (int m = 0; m < MESSAGES; ++m) {
            for (int i = 0; i < LENGTH; ++i)
                out[m * LENGTH + i] = rank * 1000000 + m * 100000 + i;
            MPI_Request request;
            CALL(MPI_Ibsend, out + m * LENGTH, LENGTH, MPI_INT, partner, TAG + m, MPI_COMM_WORLD, &request);
            CALL(MPI_Wait, &request, MPI_STATUS_IGNORE);
        }
        MPI_Request requests[MESSAGES];
        MPI_Status statuses[MESSAGES];
        for (int m = 0; m < MESSAGES; ++m)
            CALL(MPI_Irecv, in + m * LENGTH, LENGTH, MPI_INT, partner, TAG + m, MPI_COMM_WORLD, &requests[m]);
        CALL(MPI_Waitall, MESSAGES, requests, statuses);
        for (int m = 0; m < MESSAGES; ++m) {
            if (statuses[m].MPI_SOURCE != partner || statuses[m].MPI_TAG != TAG + m)
                conformance_error("message %d: source %d tag %d", m, statuses[m].MPI_SOURCE, statuses[m].MPI_TAG);
            for (int i = 0; i < LENGTH; ++i)
                if (in[m * LENGTH + i] != partner * 1000000 + m * 100000 + i) {
                    conformance_error("message %d: [%d] = %d", m, i, in[m * LENGTH + i]);
                    break;
                }
        }
        void *detached;
        int detached_size;
        CALL(MPI_Buffer_detach, &detached, &detached_size);
        free(buffer);
        free(out);
        free(in);
    }
    return conformance_finish();
}
