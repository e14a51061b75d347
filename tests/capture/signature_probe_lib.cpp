// The signature code in a shared library of its own, as in libhtrace: its frames are skipped.
#include "capture/signature.hpp"

#include <cstdint>

extern "C" __attribute__((noinline)) uint64_t probe_signature()
{
    const htrace::capture::CallSite site{reinterpret_cast<uintptr_t>(__builtin_return_address(0)),
                                         reinterpret_cast<uintptr_t>(__builtin_dwarf_cfa())};
    return htrace::capture::call_path_signature(site);
}

extern "C" void probe_stats(uint64_t* hits, uint64_t* misses)
{
    const auto stats = htrace::capture::signature_stats();
    *hits = stats.hits;
    *misses = stats.misses;
}
