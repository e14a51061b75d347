#pragma once
// The functions every recorded MPI call runs (the wrapper's Call, the recorder, the call-path
// signature, the loop folder's append) are marked HTRACE_HOT: the compiler puts them in .text.hot,
// which the linker lays out together, so a call runs code from a few pages and lines of the
// library instead of from all over it. That is what a call pays for after the kernel, or the
// application's own code, has evicted the tracer from the caches and TLB (an MPI-IO call). The rest
// (setup, finalize, the merge, rare operations) stays where it is.

#if defined(__GNUC__)
#define HTRACE_HOT [[gnu::hot]]
#else
#define HTRACE_HOT
#endif
