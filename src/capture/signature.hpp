#pragma once
// Call-site signatures: the application's return addresses above the wrapper, each taken relative
// to the load address of its module (ASLR gives every process other raw addresses), hashed.

#include "trace/site_location.hpp"

#include <cstdint>
#include <map>

namespace htrace::capture {

// Where the application called a wrapper: the wrapper's return address and its canonical frame
// address (the application's stack pointer at the call), as __builtin_return_address(0) and
// __builtin_dwarf_cfa() give them inside the wrapper.
struct CallSite {
    uintptr_t return_address = 0;
    uintptr_t frame = 0;
};

// The signature of the call path that reached `site`. The first time a path is seen it is unwound;
// after that, while the same return addresses sit in the same stack slots, the cached signature is
// reused, so a call in a loop costs a few loads instead of an unwind. No allocation, lock or
// system call on a cached path.
uint64_t call_path_signature(CallSite site);

// How the calling thread's signatures were found: in the cache of call paths, or by unwinding
// the stack (a miss: a path not seen before, or whose return addresses could not be checked).
struct SignatureStats {
    uint64_t hits = 0;
    uint64_t misses = 0;
};
SignatureStats signature_stats();

// Where each call path this process unwound was called from (its innermost frame), by the path's
// signature: for h-dump --profile's file and line.
std::map<uint64_t, SiteLocation> site_locations();

// Frames of the application that count (the deeper ones are the same for every call).
inline constexpr int kSignatureDepth = 8;

}  // namespace htrace::capture
