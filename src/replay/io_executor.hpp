#pragma once
// Issues the I/O calls of a schedule (replay/schedule.hpp, CallKind::io), MPI-IO and POSIX, on files
// inside a sandbox directory (replay/sandbox.hpp), with scratch data. MPI-IO views are of bytes at
// the recorded displacement, in the recorded strided blocks where the filetype was not contiguous,
// so offsets and sizes are the recorded bytes.

#include "replay/schedule.hpp"

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <unordered_map>

namespace htrace::replay {

class Files {
public:
    // `sandbox`: an existing directory.
    explicit Files(std::string sandbox) : sandbox_(std::move(sandbox)) {}
    Files(const Files&) = delete;
    Files& operator=(const Files&) = delete;

    // `buffer` holds at least the call's bytes; `comm` is the call's communicator (File_open);
    // `request` receives the request of MPI_File_iwrite and its kin.
    void issue(const ScheduledCall& call, MPI_Comm comm, char* buffer, MPI_Request* request);

    uint64_t bytes_read() const { return read_; }
    uint64_t bytes_written() const { return written_; }

private:
    struct Open {
        MPI_File fh = MPI_FILE_NULL;
        int fd = -1;              // POSIX: open, openat, creat
        FILE* stream = nullptr;   //   fopen
        std::string path;
    };
    void posix(const ScheduledCall& call, char* buffer);
    void open_posix(const ScheduledCall& call);
    void read(const ScheduledCall& call, Open& file, char* buffer, MPI_Request* request);
    void write(const ScheduledCall& call, Open& file, char* buffer, MPI_Request* request);
    // Reads of a file the application only read need it as long as they reach: replay makes it so.
    static void extend_to(const std::string& path, int64_t bytes);

    std::string sandbox_;
    std::unordered_map<int64_t, Open> files_;
    uint64_t read_ = 0;
    uint64_t written_ = 0;
};

}  // namespace htrace::replay
