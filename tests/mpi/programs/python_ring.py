"""A diffusion on a ring of ranks, in Python with mpi4py, whose MPI calls come from several Python
functions: the test program of Python call sites (tests/mpi/check_python.py).

    python3 python_ring.py ITERATIONS CHECKPOINT_EVERY OUTPUT_DIR

Each rank holds a few cells; every iteration exchanges its edge cells with both neighbours through
one function, send_halo() (called from two lines, one per direction), relaxes, and sums the norm
over the ranks through reduce_norm() (called from the loop, and once more at the end). Every
CHECKPOINT_EVERY iterations it writes its cells to OUTPUT_DIR/ring.RANK with os.open, os.write and
os.close; at the end it reads its own source (a .py file the program opens itself, not an import).
Modules imported after MPI is initialized (statistics, and what it imports) are the interpreter's
reads. Each rank prints one line with what it computed and one with the calls it made from each
place (its own count, the truth the test holds the trace to); rank 0 gathers and prints them.
"""
import json
import os
import sys

from mpi4py import MPI  # initializes MPI
import array

import statistics  # imported while traced: its module files are the interpreter's reads

CELLS = 8
calls = {}


def count(place):
    calls[place] = calls.get(place, 0) + 1


def send_halo(comm, outgoing, incoming, to, source):
    comm.Sendrecv(outgoing, dest=to, sendtag=7, recvbuf=incoming, source=source, recvtag=7)


def reduce_norm(comm, cells):
    local = array.array("d", [sum(c * c for c in cells)])
    total = array.array("d", [0.0])
    comm.Allreduce(local, total, op=MPI.SUM)
    return total[0]


def exchange(comm, cells, left, right):
    from_left = array.array("d", [0.0])
    from_right = array.array("d", [0.0])
    send_halo(comm, array.array("d", [cells[-1]]), from_left, right, left)
    count("send_halo right")
    send_halo(comm, array.array("d", [cells[0]]), from_right, left, right)
    count("send_halo left")
    return from_left[0], from_right[0]


def relax(cells, from_left, from_right):
    padded = [from_left] + list(cells) + [from_right]
    return array.array("d", [(padded[i - 1] + 2 * padded[i] + padded[i + 1]) / 4 for i in range(1, CELLS + 1)])


def checkpoint(path, cells):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, cells.tobytes())
    os.close(fd)
    count("checkpoint")


def read_own_source():
    fd = os.open(os.path.abspath(__file__), os.O_RDONLY)
    text = os.read(fd, 1 << 20)
    os.close(fd)
    count("read_own_source")
    return len(text)


def main():
    iterations, every, output_dir = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    left, right = (rank - 1) % size, (rank + 1) % size
    cells = array.array("d", [float((rank * CELLS + i) % 5) for i in range(CELLS)])
    norms = []
    for step in range(1, iterations + 1):
        from_left, from_right = exchange(comm, cells, left, right)
        cells = relax(cells, from_left, from_right)
        norms.append(reduce_norm(comm, cells))
        count("reduce_norm loop")
        if step % every == 0:
            checkpoint(os.path.join(output_dir, f"ring.{rank}"), cells)
    final = reduce_norm(comm, cells)
    count("reduce_norm final")
    source_bytes = read_own_source()
    said = comm.gather(f"rank {rank} final {final!r} mean {statistics.fmean(norms)!r} source {source_bytes}\n"
                       f"calls rank {rank} {json.dumps(calls, sort_keys=True)}", root=0)
    if rank == 0:
        print("\n".join(said), flush=True)  # one rank prints: lines of several ranks would mix


main()
