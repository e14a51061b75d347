"""How to start an MPI job here, for the test scripts: Open MPI wants to be told about root and
about more ranks than cores; MPICH's launcher takes neither option and needs neither. And how to run
one with a time limit, and read what the program printed."""
import functools
import os
import re
import shlex
import signal
import subprocess

# The tracer's variables, which a run sets itself or not at all.
TRACER_VARIABLES = ("CALL_LOG_DIR", "HTRACE_FILE", "MERGE_PRECISION", "HTRACE_IO_EXCLUDE")
# Open MPI's own diagnostics carry a "[host:pid]" prefix; they are mpirun's, not the program's output.
MPIRUN_LINE = re.compile(r"^\[[^\]\s]+:\d+\] ")


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


def run_job(command, extra_env, cwd, timeout, timed_out=RuntimeError):
    """Runs `command` with the environment (without the tracer's variables) plus `extra_env`; returns
    (exit status, stdout, stderr). Raises `timed_out`, the whole job killed, after `timeout` seconds."""
    env = {name: value for name, value in os.environ.items() if name not in TRACER_VARIABLES}
    env["OMPI_MCA_rmaps_base_oversubscribe"] = "1"
    env.update(extra_env)
    print("$", *(f"{name}={shlex.quote(value)}" for name, value in extra_env.items()), shlex.join(command),
          flush=True)
    return run_session(command, env, cwd, timeout, timed_out)


def run_session(command, env, cwd, timeout, timed_out=RuntimeError):
    """Runs `command` with exactly `env`, in a session of its own, so that a hung job can be killed as
    a whole, ranks (or SimGrid's process) included; returns (exit status, stdout, stderr). Raises
    `timed_out` after `timeout` seconds, once nothing of the session is left running."""
    process = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGTERM)  # mpirun passes SIGTERM on to the ranks
        try:
            stdout, stderr = process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            stdout, stderr = process.communicate()
        raise timed_out(f"timed out after {timeout:g} s: {shlex.join(command)}\n"
                        f"stdout:\n{stdout}\nstderr:\n{stderr}")
    return process.returncode, stdout, stderr


def launcher_lost_a_finalized_rank(status, stderr):
    """Whether mpirun failed only because Open MPI 4.1's launcher, under heavy load and at tens of ranks
    and more, lost track of a rank that had finalized: it reports one "with PID 0" as "exiting
    improperly". The job itself ran to its end; it is worth running again."""
    return status != 0 and "with PID 0" in stderr and "exiting improperly" in stderr


def program_output(stdout):
    """The lines the program printed, without mpirun's diagnostics."""
    return [line for line in stdout.splitlines() if not MPIRUN_LINE.match(line)]
