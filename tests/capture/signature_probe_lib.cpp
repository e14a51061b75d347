// The signature code in a shared library of its own, as in libhtrace: its frames are skipped.
#include "capture/signature.hpp"

#include <cstdint>

extern "C" uint64_t probe_signature() { return htrace::capture::call_path_signature(); }
