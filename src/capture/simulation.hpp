#pragma once
// What differs when the tracer runs inside SimGrid's simulation (the libhtrace-smpi build, compiled
// with HTRACE_SIMULATED): every simulated rank is a context of one process, run one at a time on one
// thread, and SimGrid's privatization gives each rank its own copy of the program's globals, tracer
// included (a copy of the whole program per rank, or of its data segment with smpi/privatization:mmap).

namespace htrace::capture {

inline constexpr bool kSimulatedRun =
#if defined(HTRACE_SIMULATED)
    true;
#else
    false;
#endif

}  // namespace htrace::capture

// State of the rank's thread that calls MPI. Under SimGrid every rank runs on the same thread, and
// switches to another inside an MPI call: a thread-local would be shared by ranks, a global is the
// rank's own.
#if defined(HTRACE_SIMULATED)
#define HTRACE_RANK_LOCAL
#else
#define HTRACE_RANK_LOCAL thread_local
#endif

namespace htrace::capture {
// Whether SimGrid runs all simulated ranks on one copy of the program's globals (smpirun
// -no-privatize): then they would share one tracer. Never outside SimGrid.
#if defined(HTRACE_SIMULATED)
bool ranks_share_globals();
#else
inline bool ranks_share_globals() { return false; }
#endif
}  // namespace htrace::capture
