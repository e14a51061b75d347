"""How to start an MPI job here, for the test scripts: Open MPI wants to be told about root and
about more ranks than cores; MPICH's launcher takes neither option and needs neither."""
import functools
import os
import subprocess


@functools.lru_cache(maxsize=None)
def is_open_mpi(mpirun):
    try:
        version = subprocess.run([mpirun, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    # Open MPI 4's mpirun says "mpirun (Open MPI) 4.1.4"; its orterun, "(OpenRTE)".
    return any(name in version.stdout + version.stderr for name in ("Open MPI", "OpenRTE"))


def mpirun_command(mpirun, ranks, command):
    extra = []
    if is_open_mpi(mpirun):
        extra = ["--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
    return [mpirun] + extra + ["-np", str(ranks)] + list(command)
