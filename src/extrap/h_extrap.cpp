// h-extrap: the trace of a rank count nobody ran, from traces of the same program and input at three
// or more smaller counts (extrap/extrapolate.hpp).
//   h-extrap trace-4.h trace-8.h trace-16.h --ranks 1024 -o trace-1024.h
#include "extrap/extrapolate.hpp"
#include "trace/trace_file.hpp"

#include <charconv>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr const char* kUsage =
    "usage: h-extrap TRACE TRACE TRACE... --ranks N -o OUT\n"
    "  Writes the trace of the same program and input at N ranks, from its traces at three or more rank\n"
    "  counts (any precision). Ranks and the values that differ between them follow the process grid\n"
    "  (the program's Cartesian grid, else MPI_Dims_create's in 1, 2 or 3 dimensions); each value that\n"
    "  changes with the rank count is fitted to a model of it (constant, linear, logarithmic, power\n"
    "  law, or those times a logarithm), chosen by how well it predicts each input from the others.\n"
    "  The header records the inputs and each model (h-dump shows them). Where the traces differ in a\n"
    "  way these rules cannot carry, h-extrap writes nothing and names the event.\n";

}  // namespace

int main(int argc, char** argv)
{
    std::vector<std::string> paths;
    std::string output;
    int64_t ranks = 0;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "-o" && i + 1 < argc) {
            output = argv[++i];
        } else if (arg == "--ranks" && i + 1 < argc) {
            const std::string_view given = argv[++i];
            const auto [end, error] = std::from_chars(given.data(), given.data() + given.size(), ranks);
            if (error != std::errc() || end != given.data() + given.size() || ranks < 1) {
                std::cerr << "h-extrap: --ranks wants a positive whole number, not '" << given << "'\n" << kUsage;
                return 2;
            }
        } else if (arg == "-h" || arg == "--help") {
            std::cout << kUsage;
            return 0;
        } else if (arg == "-o" || arg == "--ranks") {
            std::cerr << "h-extrap: " << arg << " wants a value after it\n" << kUsage;
            return 2;
        } else if (!arg.empty() && arg[0] == '-') {
            std::cerr << "h-extrap: unknown option " << arg << "\n" << kUsage;
            return 2;
        } else {
            paths.emplace_back(arg);
        }
    }
    if (paths.empty() || output.empty() || ranks == 0) {
        std::cerr << kUsage;
        return 2;
    }
    std::vector<htrace::Trace> traces;
    for (const std::string& path : paths) {
        htrace::DecodeResult read = htrace::read_trace_file(path);
        if (!read.trace) {
            std::cerr << "h-extrap: " << path << ": " << read.error << "\n";
            return 1;
        }
        traces.push_back(std::move(*read.trace));
    }
    const htrace::ExtrapolationResult result = htrace::extrapolate(traces, paths, ranks);
    if (!result.trace) {
        std::cerr << "h-extrap: " << result.error << "\n";
        return 1;
    }
    if (const std::string error = htrace::write_trace_file(output, *result.trace); !error.empty()) {
        std::cerr << "h-extrap: " << output << ": " << error << "\n";
        return 1;
    }
    const auto& record = result.trace->header.extrapolation;
    std::cerr << "h-extrap: wrote " << output << " (" << ranks << " ranks; " << record.size() - 2
              << " values fitted to models of the rank count; " << record[1] << ")\n";
    return 0;
}
