#pragma once
// Where replay puts a file the trace names: always inside the sandbox directory, whatever the name
// (absolute, with `..`) and whatever was planted in the directory (a sandbox given with --io-dir may
// hold symbolic links, hard links to files elsewhere, FIFOs). A trace is untrusted input: its names
// must not lead replay to any file outside the sandbox. Pure file-system logic, no MPI.
//
// Every file is reached from the sandbox directory's descriptor, one directory at a time, without
// following links (openat with O_NOFOLLOW), and created with O_EXCL; a file already there is used
// only if it is a regular file with a single name. Where that fails at a name, replay uses
// NAME.replayed beside it, checked the same way; where that fails too, the file is refused.

#include <string>
#include <sys/types.h>

namespace htrace::replay {

// A file of the sandbox, open. Move-only: it closes its descriptor.
class SandboxFile {
public:
    SandboxFile() = default;
    SandboxFile(int fd, bool writable, std::string path) : fd_(fd), writable_(writable), path_(std::move(path)) {}
    explicit SandboxFile(std::string refusal) : refusal_(std::move(refusal)) {}
    SandboxFile(SandboxFile&& other) noexcept;
    SandboxFile& operator=(SandboxFile&& other) noexcept;
    ~SandboxFile();

    bool is_open() const { return fd_ >= 0; }
    // Open for reading and writing (where the file lets replay write), positioned at its start.
    int fd() const { return fd_; }
    // False where an existing file of the sandbox lets replay only read it.
    bool writable() const { return writable_; }
    // The sandbox's path joined with the file's, for calls that need a path (MPI_File_open): it named
    // this very file (same device and inode, not a link) when the file was opened.
    const std::string& path() const { return path_; }
    // Why there is no file (when !is_open()): the trace's name and what was planted at it.
    const std::string& refusal() const { return refusal_; }
    // Hands the descriptor over (to fdopen): the caller closes it.
    int release();

private:
    int fd_ = -1;
    bool writable_ = false;
    std::string path_;
    std::string refusal_;
};

class Sandbox {
public:
    // `directory`: an existing directory, chosen by the user (a link there is followed: it is theirs).
    explicit Sandbox(std::string directory);
    ~Sandbox();
    Sandbox(const Sandbox&) = delete;
    Sandbox& operator=(const Sandbox&) = delete;

    // Empty when the directory could be opened.
    const std::string& error() const { return error_; }
    const std::string& directory() const { return directory_; }

    // The file the trace names `name` (as it holds it, for this rank), created empty where missing:
    // its path with empty, `.` and `..` parts left out, directories on the way made. Where one of those
    // directories is not a directory (a link, a file), the name is flattened into one file name at the
    // sandbox's top instead.
    SandboxFile open(const std::string& name) const;

    // The path of the file open(name) uses, without making anything (for a delete): NAME where
    // nothing or a usable file is there, NAME.replayed otherwise.
    std::string path_of(const std::string& name) const;

private:
    std::string directory_;
    int fd_ = -1;
    std::string error_;
};

}  // namespace htrace::replay
