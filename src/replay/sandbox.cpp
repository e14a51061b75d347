#include "replay/sandbox.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

namespace htrace::replay {
namespace {

// The name beside a file's own that replay uses when something was planted at that one.
constexpr const char* kFallbackSuffix = ".replayed";

class UniqueFd {
public:
    explicit UniqueFd(int fd = -1) : fd_(fd) {}
    UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    UniqueFd& operator=(UniqueFd&& other) noexcept
    {
        std::swap(fd_, other.fd_);
        return *this;
    }
    ~UniqueFd()
    {
        if (fd_ >= 0) ::close(fd_);
    }
    int get() const { return fd_; }
    int release() { return std::exchange(fd_, -1); }

private:
    int fd_;
};

std::vector<std::string> name_parts(const std::string& name)
{
    std::vector<std::string> parts;
    for (size_t at = 0; at <= name.size();) {
        const size_t end = std::min(name.find('/', at), name.size());
        std::string part = name.substr(at, end - at);
        if (!part.empty() && part != "." && part != "..") parts.push_back(std::move(part));
        at = end + 1;
    }
    if (parts.empty()) parts.push_back("unnamed");
    return parts;
}

// A trace's name as a refusal shows it: on one line and of bounded length, whatever the trace holds.
std::string printable(const std::string& name)
{
    constexpr size_t kShown = 200;
    std::string out;
    for (const char c : name.substr(0, kShown)) out += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c;
    return name.size() > kShown ? out + "..." : out;
}

// The directory a file goes in, open (or -1 where it does not exist and was not to be made), its
// path from the sandbox's top ("" or "a/b/"), and the file's name in it.
struct Place {
    UniqueFd dir;
    std::string relative;
    std::string leaf;
};

// Walks the directories of `parts` from the sandbox's descriptor, never through a link; with
// `create`, makes those missing. Where one is not a directory, the whole name flattened, at the top.
Place place(int sandbox, const std::vector<std::string>& parts, bool create)
{
    Place at{UniqueFd(::fcntl(sandbox, F_DUPFD_CLOEXEC, 0)), "", parts.back()};
    for (size_t k = 0; k + 1 < parts.size(); ++k) {
        const auto open_dir = [&] {
            return ::openat(at.dir.get(), parts[k].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        };
        int next = open_dir();
        if (next < 0 && errno == ENOENT && create) {
            ::mkdirat(at.dir.get(), parts[k].c_str(), 0755);  // EEXIST: another rank made it, fine
            next = open_dir();
        }
        if (next < 0 && errno == ENOENT && !create) {
            // Nothing there: no file of replay's either. The name as it would be made.
            at.dir = UniqueFd();
            for (; k + 1 < parts.size(); ++k) at.relative += parts[k] + "/";
            return at;
        }
        if (next < 0) {  // a link, a file, a name too long: not a directory of the sandbox
            std::string flat;
            for (const auto& part : parts) flat += (flat.empty() ? "" : "_") + part;
            return {UniqueFd(::fcntl(sandbox, F_DUPFD_CLOEXEC, 0)), "", flat};
        }
        at.dir = UniqueFd(next);
        at.relative += parts[k] + "/";
    }
    return at;
}

// Why a directory entry of this status (not followed) cannot be replay's file; empty when it can. A
// file with more than one name may be a hard link to a file outside the sandbox.
std::string planted(const struct stat& st)
{
    if (S_ISLNK(st.st_mode)) return "a symbolic link is there";
    if (!S_ISREG(st.st_mode)) return "something other than a regular file is there";
    if (st.st_nlink > 1) return "a file with " + std::to_string(st.st_nlink) + " names (hard links) is there";
    return {};
}

// Opens, or creates, the regular file `leaf` in `place`, or says why not.
SandboxFile open_in(const std::string& directory, const Place& place, const std::string& leaf, std::string& why)
{
    const int dir = place.dir.get();
    bool writable = true;
    UniqueFd fd(::openat(dir, leaf.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (fd.get() < 0 && errno == EEXIST) {
        // Already there: made by another rank or an earlier open of this replay, or planted. It is
        // looked at before it is opened, so that no device or FIFO is ever opened.
        struct stat st;
        if (::fstatat(dir, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            why = std::strerror(errno);
            return {};
        }
        if (why = planted(st); !why.empty()) return {};
        const int flags = O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
        fd = UniqueFd(::openat(dir, leaf.c_str(), O_RDWR | flags));
        if (fd.get() < 0 && errno == EACCES) {  // an input of a given --io-dir that is read-only
            fd = UniqueFd(::openat(dir, leaf.c_str(), O_RDONLY | flags));
            writable = false;
        }
        if (fd.get() >= 0) ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
    }
    if (fd.get() < 0) {
        why = errno == ELOOP ? "a symbolic link is there" : std::strerror(errno);
        return {};
    }
    // What was opened, whatever changed since it was looked at.
    struct stat opened;
    if (::fstat(fd.get(), &opened) != 0 || !(why = planted(opened)).empty()) {
        if (why.empty()) why = std::strerror(errno);
        return {};
    }
    // The path MPI-IO is given must name this file: the directories on the way were opened as
    // directories, not links, so it does unless they changed meanwhile; it is checked all the same.
    std::string path = directory + "/" + place.relative + leaf;
    struct stat named;
    if (::lstat(path.c_str(), &named) != 0 || named.st_dev != opened.st_dev || named.st_ino != opened.st_ino) {
        why = "its path leads to another file";
        return {};
    }
    return SandboxFile(fd.release(), writable, std::move(path));
}

}  // namespace

SandboxFile::SandboxFile(SandboxFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), writable_(other.writable_), path_(std::move(other.path_)),
      refusal_(std::move(other.refusal_))
{
}

SandboxFile& SandboxFile::operator=(SandboxFile&& other) noexcept
{
    std::swap(fd_, other.fd_);
    std::swap(writable_, other.writable_);
    std::swap(path_, other.path_);
    std::swap(refusal_, other.refusal_);
    return *this;
}

SandboxFile::~SandboxFile()
{
    if (fd_ >= 0) ::close(fd_);
}

int SandboxFile::release() { return std::exchange(fd_, -1); }

Sandbox::Sandbox(std::string directory) : directory_(std::move(directory))
{
    fd_ = ::open(directory_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0) error_ = directory_ + ": " + std::strerror(errno);
}

Sandbox::~Sandbox()
{
    if (fd_ >= 0) ::close(fd_);
}

SandboxFile Sandbox::open(const std::string& name) const
{
    const Place at = place(fd_, name_parts(name), true);
    std::string reasons;
    for (const std::string& leaf : {at.leaf, at.leaf + kFallbackSuffix}) {
        std::string why;
        SandboxFile file = open_in(directory_, at, leaf, why);
        if (file.is_open()) return file;
        reasons += (reasons.empty() ? "" : "; ") + printable(at.relative + leaf) + ": " + why;
    }
    return SandboxFile(printable(name) + ": not replayed, nothing usable in the sandbox (" + reasons + ")");
}

std::string Sandbox::path_of(const std::string& name) const
{
    const Place at = place(fd_, name_parts(name), false);
    struct stat st;
    const bool usable = at.dir.get() < 0 || ::fstatat(at.dir.get(), at.leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
                        planted(st).empty();
    return directory_ + "/" + at.relative + at.leaf + (usable ? "" : kFallbackSuffix);
}

}  // namespace htrace::replay
