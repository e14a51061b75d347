#!/bin/sh
# Every test runs in here (tests/meson.build's default test setup): the suite runs its tests side by
# side, several MPI jobs at once.
#
# Each test gets an Open MPI session directory of its own: each mpirun makes and, when it ends,
# removes the shared /tmp/ompi.HOST.UID, and one that starts just as another ends can find it gone
# and fail to start ("A call to mkdir was unable to create the desired directory").
#
# Open MPI's ob1 point-to-point layer is named: it is the one Open MPI takes on one node, but only
# after probing UCX and the PSM and OFI transports, a fifth of a second of every job's start.
#
# MPICH ignores both variables.
dir=$(mktemp -d "${TMPDIR:-/tmp}/h-trace-test-ompi.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
OMPI_MCA_orte_tmpdir_base=$dir OMPI_MCA_pml=${OMPI_MCA_pml:-ob1} "$@"
