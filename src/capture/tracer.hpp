#pragma once
// The tracer of one process: started by MPI_Init, fed one call at a time by the wrappers, and at
// MPI_Finalize merged with every other rank's and written by rank 0.

#include "capture/call.hpp"

namespace htrace::capture {

// Whether calls are being recorded (between MPI_Init and MPI_Finalize, tracer configured).
bool tracer_active() noexcept;

// Called by Call::finish for every recorded call; `compute_seconds` is the time since the previous
// MPI call returned. Never throws.
void record_call(Op op, const CallArgs& args, int rc, double compute_seconds) noexcept;

double now_seconds() noexcept;

}  // namespace htrace::capture
