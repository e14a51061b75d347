/* Sends to MPI_PROC_NULL, which move nothing and cost next to nothing, so that a run measures the
 * tracer and the trace alone (issue 26):
 *
 *     proc_null_sends CALLS same     every call alike: one loop of CALLS iterations in the trace, whose
 *                                    h-dump --sequence has CALLS lines per rank
 *     proc_null_sends CALLS vary     each call's byte count different, in no order (i * 0x9e3779b1 mod
 *                                    2^31, distinct for every i below 2^31): values that never repeat,
 *                                    which at p = 100 the tracer must keep call by call
 *     proc_null_sends CALLS drift    each call's byte count different but close to the last (1,000,000
 *                                    + i): values that never repeat, each within 0.0001% of the one before
 *     proc_null_sends CALLS none     no MPI calls but MPI_Init and MPI_Finalize (the baseline)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const long calls = argc > 1 ? atol(argv[1]) : 1000;
    const char *mode = argc > 2 ? argv[2] : "same";
    static char byte;
    if (strcmp(mode, "none") != 0) {
        const int vary = strcmp(mode, "vary") == 0;
        const int drift = strcmp(mode, "drift") == 0;
        for (long i = 0; i < calls; ++i) {
            /* MPI_PROC_NULL reads no data: one byte of buffer serves any count. */
            const int count = vary ? (int)(((unsigned long)i * 0x9e3779b1UL) & 0x7fffffffUL)
                              : drift ? (int)(1000000 + i) : 8;
            MPI_Send(&byte, count, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
        }
    }
    MPI_Finalize();
    return 0;
}
