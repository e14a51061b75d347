#pragma once
// The tracer's environment: MERGE_PRECISION, HTRACE_FILE, HTRACE_BINS, HTRACE_REBALANCE,
// HTRACE_FLUSH_SECONDS, HTRACE_IO_EXCLUDE, HTRACE_STATS, HTRACE_PYTHON_IMPORTS.

#include "histogram/histogram.hpp"

#include <string>
#include <vector>

namespace htrace::capture {

struct Config {
    int precision = 100;
    std::string file = "trace.h";
    HistogramConfig histogram;
    int flush_seconds = 0;  // every so many seconds each rank writes its partial file (0: never)
    std::vector<std::string> io_excluded;  // paths whose POSIX I/O is not recorded (colon-separated)
    bool stats = false;  // rank 0 prints the call-path cache's hits and misses at MPI_Finalize
    bool python_imports = false;  // keep the POSIX I/O of CPython's import system (left out by default)
};

struct ConfigResult {
    Config config;
    std::string error;  // one line naming the variable and what is wrong; empty when fine
};

// Reads the environment through `getenv`-like `lookup` (so tests can give their own).
ConfigResult read_config(const char* (*lookup)(const char*));

// Whether the trace file could be written where HTRACE_FILE says: a regular file (or none yet) in a
// directory where a file can be made (tried); the error names the problem.
std::string check_output_path(const std::string& file);

}  // namespace htrace::capture
