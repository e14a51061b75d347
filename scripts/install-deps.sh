#!/usr/bin/env bash
# Installs what h-trace builds and tests with, from Debian's packages (Debian 12).
set -euo pipefail
# libsimgrid-dev: SimGrid's SMPI (smpicxx, smpicc, smpirun), for h-replay-smpi and the simulated tests.
# chromium: the headless browser the test of h-report opens its HTML pages in.
# libzstd-dev: trace files are compressed with zstd (zstd: the fuzzing corpus's plain seeds).
# clang-14, libclang-rt-14-dev: libFuzzer and the sanitizers of the fuzzing build (fuzz/).
# python3-mpi4py: the Python program of tests/mpi/check_python.py (built on Open MPI, for /usr/bin/python3).
# libotf2-trace-dev, otf2-tools: OTF2 archives of timelines (h-replay/h-dump --otf2) and otf2-print for their tests.
packages=(build-essential gfortran meson ninja-build pkg-config python3
          openmpi-bin libopenmpi-dev mpich libmpich-dev libboost-dev doctest-dev libzstd-dev zstd
          libsimgrid-dev chromium clang-14 libclang-rt-14-dev python3-mpi4py libotf2-trace-dev otf2-tools)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
