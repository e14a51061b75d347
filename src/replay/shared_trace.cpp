#include "replay/trace_holder.hpp"
#include "replay/trace_source.hpp"

namespace htrace::replay {

// Under SimGrid every simulated rank runs in the one process. The first rank to ask decodes the
// trace, through its own copy of the reader, into an object the holder keeps for the whole
// simulation; the others get that object, or its error, without reading the file again. Nothing
// writes to it after it is made, so ranks share it as they would the file.
std::shared_ptr<const DecodeResult> load_trace(const std::string& path)
{
    const void* held = hold_once("trace:" + path, [&]() -> const void* {
        return new const DecodeResult(read_trace_file(path));
    });
    // Not owned: the holder keeps it until the process ends.
    return std::shared_ptr<const DecodeResult>(std::shared_ptr<void>(), static_cast<const DecodeResult*>(held));
}

}  // namespace htrace::replay
