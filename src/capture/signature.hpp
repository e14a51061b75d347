#pragma once
// Call-site signatures: the application's return addresses above the wrapper, each taken relative
// to the load address of its module (ASLR gives every process other raw addresses), hashed.

#include <cstdint>

namespace htrace::capture {

// The signature of the current call path, skipping the tracer's own frames.
uint64_t call_path_signature();

// Frames of the application that count (the deeper ones are the same for every call).
inline constexpr int kSignatureDepth = 8;

}  // namespace htrace::capture
