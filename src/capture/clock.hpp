#pragma once
// The tracer's clock, read twice per call: the time-stamp counter where there is one (a few
// nanoseconds, and no system call), converted to seconds once at MPI_Finalize against the steady
// clock. Under SimGrid (HTRACE_SIMULATED) it is the simulation's clock, MPI_Wtime, in seconds: the
// run traced is the simulated one.

#include "capture/simulation.hpp"

#include <chrono>
#if defined(HTRACE_SIMULATED)
#include <mpi.h>
#elif defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace htrace::capture {

inline double now_ticks() noexcept
{
#if defined(HTRACE_SIMULATED)
    return PMPI_Wtime();
#elif defined(__x86_64__)
    return static_cast<double>(__rdtsc());
#else
    return static_cast<double>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

inline double steady_seconds() noexcept
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace htrace::capture
