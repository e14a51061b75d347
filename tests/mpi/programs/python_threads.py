"""Python threads that call MPI while others hold the GIL: the tracer takes the GIL to read a
call's Python frames, and must neither deadlock nor change what the program computes
(tests/mpi/check_python.py, case threads).

    python3 python_threads.py ITERATIONS

The main thread exchanges with its ring neighbours (MPI releases the GIL around each call) while a
second thread reduces on a communicator of its own and a third only computes in Python, holding the
GIL between the interpreter's switches. Rank 0 prints what each rank computed and how many calls
each thread made.
"""
import array
import sys
import threading

from mpi4py import MPI

iterations = int(sys.argv[1])
world = MPI.COMM_WORLD
rank, size = world.Get_rank(), world.Get_size()
other = world.Dup()
results = {}


def reducer():
    total = array.array("d", [0.0])
    for step in range(iterations):
        other.Allreduce(array.array("d", [float(rank + step)]), total, op=MPI.SUM)
    results["reduced"] = total[0]
    results["reducer calls"] = iterations


def spinner(stop):
    spins = 0
    while not stop.is_set():
        spins = (spins * 31 + 7) % 1000003
    results["spun"] = True


stop = threading.Event()
threads = [threading.Thread(target=reducer), threading.Thread(target=spinner, args=(stop,))]
for thread in threads:
    thread.start()
value = array.array("d", [float(rank)])
incoming = array.array("d", [0.0])
for step in range(iterations):
    world.Sendrecv(value, dest=(rank + 1) % size, recvbuf=incoming, source=(rank - 1) % size)
    value[0] = incoming[0] + 1
threads[0].join()
stop.set()
threads[1].join()
said = world.gather(f"rank {rank} value {value[0]!r} reduced {results['reduced']!r} sendrecv {iterations} "
                    f"allreduce {results['reducer calls']} spun {results['spun']}", root=0)
if rank == 0:
    print("\n".join(said), flush=True)
other.Free()
