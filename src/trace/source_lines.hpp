#pragma once
// Call sites' source lines (h-dump --profile): each site's module and address (SiteLocation) looked
// up in the module's debug information by binutils' addr2line, run as a child process. The module
// paths come from the trace, which is untrusted: only regular files are read, no shell runs, and the
// children share one time limit and a bound on what they print. A site that cannot be resolved (the
// binary is elsewhere, has no debug information, or addr2line is missing) is left out, and the
// profile shows its module and address instead. The fuzzers render without this, so they start no
// process.

#include "trace/site_location.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

namespace htrace {

struct SourceLine {
    std::string file;      // as the debug information names it
    unsigned line = 0;
    std::string function;  // demangled; empty when unknown
    bool operator==(const SourceLine&) const = default;
};

// By the sites' signatures, those addr2line could resolve.
using SourceLines = std::map<uint64_t, SourceLine>;

SourceLines resolve_source_lines(const std::map<uint64_t, SiteLocation>& locations,
                                 std::chrono::milliseconds time_limit = std::chrono::seconds(20));

// One pair of addr2line -f lines (the function, then "file:line" with an optional
// " (discriminator N)"); false for the unknowns it prints as "??".
bool parse_addr2line_answer(const std::string& function_line, const std::string& place_line, SourceLine& out);

}  // namespace htrace
