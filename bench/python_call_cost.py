"""Issue 27: what an MPI call and a POSIX call made from Python cost, timed inside the program (run by
bench/python_cost.py under /usr/bin/python3 with mpi4py).

    python3 python_call_cost.py CALLS REPETITIONS FILE

Times CALLS calls of MPI_Allreduce (8 bytes) and of os.pwrite (8 bytes to FILE, opened after
MPI_Init), each made three Python frames deep, REPETITIONS times; rank 0 prints the median ns per call.
"""
import array
import os
import statistics
import sys
import time

from mpi4py import MPI


def reduce_once(comm, local, total):
    comm.Allreduce(local, total, op=MPI.SUM)


def write_once(fd, data):
    os.pwrite(fd, data, 0)


def timed(calls, once, *args):
    start = time.perf_counter()
    for _ in range(calls):
        once(*args)
    return (time.perf_counter() - start) / calls * 1e9


def main():
    calls, repetitions, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    comm = MPI.COMM_WORLD
    local, total = array.array("d", [1.0]), array.array("d", [0.0])
    fd = os.open(f"{path}.{comm.Get_rank()}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    mpi, posix = [], []
    for _ in range(repetitions):
        comm.Barrier()
        mpi.append(timed(calls, reduce_once, comm, local, total))
        posix.append(timed(calls, write_once, fd, b"12345678"))
    os.close(fd)
    if comm.Get_rank() == 0:
        print(f"calls_per_rank {calls * repetitions} mpi_median_ns_per_call {statistics.median(mpi):.1f} "
              f"posix_median_ns_per_call {statistics.median(posix):.1f}")


main()
