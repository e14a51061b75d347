#pragma once
// The tracer's own machine code, mapped into the process before the first traced call.

namespace htrace::capture {

// Reads a byte of every page of the tracer library's code, so that the kernel maps them all now.
// Called once at MPI_Init; never throws.
void map_own_code() noexcept;

}  // namespace htrace::capture
