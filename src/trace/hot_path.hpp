#pragma once
// The functions every recorded MPI call runs (the wrapper's Call, the recorder, the call-path
// signature, the loop folder's append) are marked HTRACE_HOT: the compiler puts them in .text.hot,
// which the linker lays out together, so a call runs code from a few pages and lines of the
// library instead of from all over it. That is what a call pays for after the kernel, or the
// application's own code, has evicted the tracer from the caches and TLB (an MPI-IO call). The rest
// (setup, finalize, the merge, rare operations) stays where it is.
//
// The hot path is also kept shallow: HTRACE_INLINE functions are inlined into their caller, so a
// recorded call runs as the wrapper, record_call and a level or two below it (the call-path
// signature, the loop folder). The processor predicts returns from a small stack of return
// addresses (about 32 entries); every level the tracer nests deeper than the MPI library itself
// overwrites one of the application's entries, and that return then mispredicts. Deep application
// stacks of distinct functions (C++ templates, Fortran) pay that on every MPI call (measured in
// bench/RESULTS.md, issue 27, "a shallow hot path"). What a recorded call seldom needs stays out of
// the inlined body, so that it does not spread the hot path over more cache lines: HTRACE_COLD for
// what runs once or rarely (start, finalize, communicator creation), HTRACE_OUT_OF_LINE for what
// only some programs run often (one-sided calls, persistent requests).

#if defined(__GNUC__)
#define HTRACE_HOT [[gnu::hot]]
#define HTRACE_INLINE [[gnu::always_inline]] inline
#define HTRACE_COLD [[gnu::cold, gnu::noinline]]
#define HTRACE_OUT_OF_LINE [[gnu::noinline]]
#else
#define HTRACE_HOT
#define HTRACE_INLINE inline
#define HTRACE_COLD
#define HTRACE_OUT_OF_LINE
#endif
