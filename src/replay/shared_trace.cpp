#include "replay/trace_source.hpp"

#include <map>
#include <mutex>

namespace htrace::replay {

// Under SimGrid every simulated rank runs in the one process, and this code is in a library loaded
// once for all of them: the first rank to ask decodes the trace, and the others get that copy, or
// its error, without reading the file again. Nothing writes to a trace after it is decoded, so ranks
// share it as they would the file. Kept until the simulation ends. The lock is for SimGrid's thread
// contexts; decoding makes no MPI call, so no other rank runs meanwhile in the default ones.
std::shared_ptr<const DecodeResult> load_trace(const std::string& path)
{
    static std::mutex mutex;
    static std::map<std::string, std::shared_ptr<const DecodeResult>> decoded;
    const std::lock_guard lock(mutex);
    std::shared_ptr<const DecodeResult>& trace = decoded[path];
    if (!trace) trace = std::make_shared<const DecodeResult>(read_trace_file(path));
    return trace;
}

}  // namespace htrace::replay
