#include "replay/trace_source.hpp"

namespace htrace::replay {

// Each rank of a real MPI job is a process: it reads the file itself.
std::shared_ptr<const DecodeResult> load_trace(const std::string& path)
{
    return std::make_shared<const DecodeResult>(read_trace_file(path));
}

}  // namespace htrace::replay
