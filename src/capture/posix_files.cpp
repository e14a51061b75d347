#include "capture/posix_files.hpp"

#include "capture/communicators.hpp"
#include "trace/file_names.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>

namespace htrace::capture {
namespace {

constexpr const char* kSystemDirectories[] = {"/proc", "/sys", "/dev"};

std::string current_directory()
{
    char buffer[PATH_MAX];
    return getcwd(buffer, sizeof buffer) ? std::string(buffer) : std::string("/");
}

// The directory a descriptor stands for, as the kernel names it.
std::string directory_of(int fd)
{
    char buffer[PATH_MAX];
    const std::string link = "/proc/self/fd/" + std::to_string(fd);
    const ssize_t n = readlink(link.c_str(), buffer, sizeof buffer - 1);
    return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : current_directory();
}

bool under(const std::string& path, const std::string& directory)
{
    if (directory == "/") return true;
    return path.starts_with(directory) && (path.size() == directory.size() || path[directory.size()] == '/');
}

}  // namespace

std::string absolute_path(const std::string& path, const std::string& current_directory)
{
    const std::string whole = path.starts_with('/') ? path : current_directory + "/" + path;
    std::string out;
    size_t at = 0;
    while (at <= whole.size()) {
        size_t end = whole.find('/', at);
        if (end == std::string::npos) end = whole.size();
        const std::string part = whole.substr(at, end - at);
        if (!part.empty() && part != ".") out += "/" + part;
        at = end + 1;
    }
    return out.empty() ? "/" : out;
}

PosixFiles::PosixFiles(const std::vector<std::string>& excluded)
{
    const std::string here = current_directory();
    for (const char* system : kSystemDirectories) excluded_.emplace_back(system);
    for (const auto& path : excluded) {
        if (!path.empty()) excluded_.push_back(absolute_path(path, here));
    }
}

std::vector<int64_t> PosixFiles::ids() const
{
    std::vector<int64_t> out;
    for (const auto& f : open_) {
        if (f.id >= 0) out.push_back(f.id);
    }
    return out;
}

PosixFiles::Open* PosixFiles::find(int fd)
{
    for (auto& f : open_) {
        if (f.fd == fd) return &f;
    }
    return nullptr;
}

bool PosixFiles::excluded(const char* path, int directory_fd) const
{
    if (path == nullptr) return true;
    const std::string relative_to = directory_fd == AT_FDCWD ? current_directory() : directory_of(directory_fd);
    const std::string absolute = absolute_path(path, relative_to);
    for (const auto& directory : excluded_) {
        if (under(absolute, directory)) return true;
    }
    return false;
}

bool PosixFiles::describe(RecordedCall& call, const CallArgs& args, int rc, const std::vector<int64_t>& mpi_file_ids,
                          std::map<int64_t, std::string>& file_names, int world_rank, bool importing)
{
    const Op op = call.op;
    if (is_posix_open(op)) {
        if (importing || excluded(args.filename, args.directory_fd)) {
            if (rc == 0) {
                std::erase_if(open_, [&](const Open& f) { return f.fd == args.fd; });  // closed behind our back
                open_.push_back({args.fd, -1, importing});
            }
            import_calls_ += importing ? 1 : 0;
            return false;
        }
        const std::string pattern = file_name_pattern(args.filename, world_rank);
        const int64_t key = file_name_key(pattern);
        file_names.emplace(key, pattern);
        call.add(Role::file_name, key);
        call.add(Role::amode, args.access_mode);
        int64_t id = kNoComm;
        if (rc == 0) {
            std::erase_if(open_, [&](const Open& f) { return f.fd == args.fd; });  // closed behind our back
            std::vector<int64_t> used = mpi_file_ids;
            for (const auto& f : open_) used.push_back(f.id);
            id = lowest_unused(std::move(used), 0);
            open_.push_back({args.fd, id});
        }
        call.add(Role::file, id);
        return true;
    }
    Open* f = find(args.fd);
    if (f == nullptr) {
        struct stat st {};
        if (args.fd > STDERR_FILENO && fstat(args.fd, &st) == 0 && S_ISREG(st.st_mode)) ++unseen_calls_;
        return false;
    }
    const int64_t id = f->id;
    import_calls_ += f->importing ? 1 : 0;
    if (is_one_of(op, {Op::posix_close, Op::posix_fclose})) open_.erase(open_.begin() + (f - open_.data()));
    if (id < 0) return false;
    call.add(Role::file, id);
    switch (op) {
    case Op::posix_read:
    case Op::posix_fread: call.add(Role::recv_bytes, args.transferred); break;
    case Op::posix_write:
    case Op::posix_fwrite: call.add(Role::bytes, args.transferred); break;
    case Op::posix_pread:
        call.add(Role::offset, args.offset);
        call.add(Role::recv_bytes, args.transferred);
        break;
    case Op::posix_pwrite:
        call.add(Role::offset, args.offset);
        call.add(Role::bytes, args.transferred);
        break;
    case Op::posix_lseek:
    case Op::posix_fseek:
        call.add(Role::offset, args.offset);
        call.add(Role::whence, args.whence);
        break;
    case Op::posix_ftruncate: call.add(Role::file_size, args.file_size); break;
    default: break;
    }
    return true;
}

}  // namespace htrace::capture
