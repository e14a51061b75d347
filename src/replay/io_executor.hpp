#pragma once
// Issues the I/O calls of a schedule (replay/schedule.hpp, CallKind::io), MPI-IO and POSIX, on files
// inside a sandbox directory (replay/sandbox.hpp), with scratch data. MPI-IO views are of bytes at
// the recorded displacement, in the recorded strided blocks where the filetype was not contiguous,
// so offsets and sizes are the recorded bytes.

#include "replay/sandbox.hpp"
#include "replay/schedule.hpp"

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <unordered_map>

namespace htrace::replay {

class Files {
public:
    explicit Files(const Sandbox& sandbox) : sandbox_(sandbox) {}
    ~Files();
    Files(const Files&) = delete;
    Files& operator=(const Files&) = delete;

    // `buffer` holds at least the call's bytes; `comm` is the call's communicator (File_open);
    // `request` receives the request of MPI_File_iwrite and its kin.
    void issue(const ScheduledCall& call, MPI_Comm comm, char* buffer, MPI_Request* request);

    uint64_t bytes_read() const { return read_; }
    uint64_t bytes_written() const { return written_; }
    // Opens the sandbox refused (something planted where the file goes), and the first one's reason.
    uint64_t refused() const { return refused_; }
    const std::string& first_refusal() const { return first_refusal_; }

private:
    struct Open {
        MPI_File fh = MPI_FILE_NULL;
        // POSIX (open, openat, creat): the file; MPI-IO: the same file, held to extend it for reads.
        int fd = -1;
        FILE* stream = nullptr;   // fopen: the file (its descriptor is fileno's)
        bool reads = true;        // the application opened it for reading, for writing
        bool writes = true;
    };
    void posix(const ScheduledCall& call, char* buffer);
    void open_mpi(const ScheduledCall& call, MPI_Comm comm);
    void open_posix(const ScheduledCall& call);
    void refuse(const std::string& why);
    void read(const ScheduledCall& call, Open& file, char* buffer, MPI_Request* request);
    void write(const ScheduledCall& call, Open& file, char* buffer, MPI_Request* request);
    static void close(Open& file);
    // Reads of a file the application only read need it as long as they reach: replay makes it so.
    static void extend_to(int fd, int64_t bytes);

    const Sandbox& sandbox_;
    std::unordered_map<int64_t, Open> files_;
    uint64_t read_ = 0;
    uint64_t written_ = 0;
    uint64_t refused_ = 0;
    std::string first_refusal_;
};

}  // namespace htrace::replay
