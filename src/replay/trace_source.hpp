#pragma once
// Where a replaying rank gets its decoded trace: one interface, with one implementation per way of
// running the replay. h-replay's ranks are processes of their own, and each reads the file
// (own_trace.cpp). h-replay-smpi's ranks are all in one process, SimGrid's, where a trace decoded
// once per rank would multiply its memory by the rank count: the first rank to ask reads it, and every
// other rank shares that one copy (shared_trace.cpp, in the library all ranks share).

#include "trace/trace_file.hpp"

#include <memory>
#include <string>

namespace htrace::replay {

// The trace at `path` as read_trace_file gives it (its error where it cannot be replayed), read-only:
// under SimGrid other ranks hold the same one.
std::shared_ptr<const DecodeResult> load_trace(const std::string& path);

}  // namespace htrace::replay
