#pragma once
// The tracer of one process: started by MPI_Init, fed one call at a time by the wrappers, and at
// MPI_Finalize merged with every other rank's and written by rank 0.

#include "capture/call.hpp"
#include "capture/signature.hpp"

#include <atomic>

namespace htrace::capture {

// Whether calls are being recorded (between MPI_Init and MPI_Finalize, tracer configured); read by
// every wrapper, so a plain flag rather than a call.
extern std::atomic<bool> tracing;
inline bool tracer_active() noexcept { return tracing.load(std::memory_order_relaxed); }


// Called by the MPI_Abort wrappers before the library's: the job ends here, so this rank writes its
// partial file and says so. Never throws.
void before_abort(int errorcode) noexcept;


}  // namespace htrace::capture
