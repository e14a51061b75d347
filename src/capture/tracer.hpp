#pragma once
// The tracer of one process: started by MPI_Init, fed one call at a time by the wrappers, and at
// MPI_Finalize merged with every other rank's and written by rank 0.

#include "capture/call.hpp"
#include "capture/signature.hpp"

namespace htrace::capture {

// Whether calls are being recorded (between MPI_Init and MPI_Finalize, tracer configured).
bool tracer_active() noexcept;

// Called by Call::finish for every recorded call, which began at `entered` (now_ticks()). Never
// throws.
void record_call(Op op, const CallArgs& args, int rc, double entered, CallSite site) noexcept;

// The tracer's clock, read twice per call: the time-stamp counter where it is invariant (a few
// nanoseconds), converted to seconds once at MPI_Finalize against the steady clock.
double now_ticks() noexcept;

}  // namespace htrace::capture
