/* A token travels around a ring of all ranks LAPS times (MPI_Send to the right, MPI_Recv from the
 * left, rank 0 starts each lap), then every rank contributes the sum of the tokens it saw to an
 * MPI_Allreduce. Exercises the ring endpoints a tracer must fold into one relative value, including
 * the wrap-around from the last rank to rank 0.
 *
 * Usage: ring [LAPS]    (default 10) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "logged_start.h"

enum { TOKEN_LENGTH = 4 }; /* long longs per message: 32 bytes */

int main(int argc, char **argv)
{
    int rank, size;
    logged_start(&argc, &argv, &rank, &size);

    const int laps = argc > 1 ? atoi(argv[1]) : 10;
    const int right = (rank + 1) % size;
    const int left = (rank - 1 + size) % size;
    const long long token_bytes = TOKEN_LENGTH * (long long)sizeof(long long);

    long long token[TOKEN_LENGTH] = {0};
    long long seen = 0;
    for (int lap = 0; lap < laps; ++lap) {
        if (rank == 0) {
            for (int i = 0; i < TOKEN_LENGTH; ++i)
                token[i] = lap + i;
            MPI_Send(token, TOKEN_LENGTH, MPI_LONG_LONG, right, lap, MPI_COMM_WORLD);
            log_send("MPI_Send", token_bytes, right, lap);
            MPI_Recv(token, TOKEN_LENGTH, MPI_LONG_LONG, left, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            log_recv("MPI_Recv", token_bytes, left, lap);
        } else {
            MPI_Recv(token, TOKEN_LENGTH, MPI_LONG_LONG, left, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            log_recv("MPI_Recv", token_bytes, left, lap);
            for (int i = 0; i < TOKEN_LENGTH; ++i)
                token[i] += rank * (i + 1);
            MPI_Send(token, TOKEN_LENGTH, MPI_LONG_LONG, right, lap, MPI_COMM_WORLD);
            log_send("MPI_Send", token_bytes, right, lap);
        }
        for (int i = 0; i < TOKEN_LENGTH; ++i)
            seen += token[i];
    }

    long long total = 0;
    MPI_Allreduce(&seen, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    log_call("MPI_Allreduce", sizeof(long long));

    if (rank == 0)
        printf("ring: ranks %d laps %d last token %lld %lld %lld %lld checksum %lld\n", size, laps, token[0],
               token[1], token[2], token[3], total);

    MPI_Finalize();
    log_call("MPI_Finalize", 0);
    call_log_close();
    return 0;
}
