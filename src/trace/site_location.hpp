#pragma once
// Where a call site is in the program's code (format 20): the module that made the call (as the
// loader named it: the executable's absolute path, a shared object's path) and the call's address in
// the module's own numbering (its ELF virtual address, which addr2line takes). The tracer finds it
// when it first unwinds the site's call path; sites named by Python's frames have none. Apart from
// the trace model, for the capture's signatures, which know nothing else of it.

#include <cstdint>
#include <string>

namespace htrace {

struct SiteLocation {
    std::string module;
    uint64_t address = 0;
    bool operator==(const SiteLocation&) const = default;
};

}  // namespace htrace
