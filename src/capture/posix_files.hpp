#pragma once
// POSIX I/O as the tracer records it: which descriptors are the application's files, and what a
// call on one becomes in its event. A descriptor counts once its open was seen while tracing and
// its path is not left out: the system's files (/proc, /sys, /dev), the trace file, and what
// HTRACE_IO_EXCLUDE names. Calls on other descriptors (the standard streams, files opened before
// MPI_Init) are not recorded; those on regular files are counted.

#include "capture/call.hpp"
#include "merge/loop_folding.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace htrace::capture {

class PosixFiles {
public:
    PosixFiles() = default;
    // `excluded`: paths left out with everything under them, absolute or relative to the current
    // directory, besides the system's.
    explicit PosixFiles(const std::vector<std::string>& excluded);

    // Describes `call` (rc: 0, or -1 when the call failed); false when it is not recorded. An open
    // takes the lowest id neither this table nor `mpi_file_ids` holds, and its name goes into
    // `file_names` as a pattern of `world_rank` (trace/file_names.hpp). An open `importing` (CPython's
    // import system reading or caching a module: capture/python_frames.hpp) is left out like an
    // excluded path, and so is every later call on its descriptor.
    bool describe(RecordedCall& call, const CallArgs& args, int rc, const std::vector<int64_t>& mpi_file_ids,
                  std::map<int64_t, std::string>& file_names, int world_rank, bool importing = false);

    // Calls on regular files whose open was not seen.
    uint64_t unseen_calls() const { return unseen_calls_; }
    // Calls left out as the import system's: its opens and the calls on their descriptors.
    uint64_t import_calls() const { return import_calls_; }
    // The ids of the files open now.
    std::vector<int64_t> ids() const;

private:
    struct Open {
        int fd;
        int64_t id;  // -1: left out
        bool importing = false;  // opened by the import system
    };
    Open* find(int fd);
    bool excluded(const char* path, int directory_fd) const;

    std::vector<std::string> excluded_;  // absolute, without a trailing slash
    std::vector<Open> open_;
    uint64_t unseen_calls_ = 0;
    uint64_t import_calls_ = 0;
};

// An absolute path without "." components or repeated slashes (".." stays: no symlink is resolved).
std::string absolute_path(const std::string& path, const std::string& current_directory);

}  // namespace htrace::capture
