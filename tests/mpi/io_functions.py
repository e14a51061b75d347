"""The I/O functions h-trace records: MPI-IO's (MPI_File_*) and the POSIX ones, whose list is read
from the one the trace is built with (src/trace/posix_operations.inc)."""

import pathlib
import re

POSIX_FUNCTIONS = re.findall(
    r"^HTRACE_POSIX_OPERATION\((\w+)\)",
    (pathlib.Path(__file__).resolve().parents[2] / "src" / "trace" / "posix_operations.inc").read_text(), re.M)

# An I/O event's line in `h-dump`'s output.
IO_EVENT = re.compile(r"^\s*(MPI_File_\w+|" + "|".join(POSIX_FUNCTIONS) + r") @")


def is_io_function(name):
    return name.startswith("MPI_File_") or name in POSIX_FUNCTIONS
