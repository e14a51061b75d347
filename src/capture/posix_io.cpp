// The POSIX I/O wrappers, which the dynamic linker finds before the C library's when the tracer is
// preloaded or linked. Each passes the call on (dlsym(RTLD_NEXT)) and, while tracing and outside
// any MPI call (I/O the MPI library does is part of the MPI call that made it), records it; errno
// is the C library's, whatever recording does. A 64-bit variant records as its plain function.
// Both would rename or wrap the functions defined here (open as open64, read as an inline checker):
// each function and its 64-bit variant are defined by their own names.
#undef _FORTIFY_SOURCE
#undef _FILE_OFFSET_BITS

#include "capture/call.hpp"
#include "trace/event.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

using htrace::Op;
using htrace::capture::Call;

namespace {

template <typename Function>
Function next_definition(const char* name)
{
    return reinterpret_cast<Function>(dlsym(RTLD_NEXT, name));
}

// The C library's `name`, looked up once.
#define HTRACE_NEXT(name) static const auto next = next_definition<decltype(&::name)>(#name)

int64_t open_mode(int flags)
{
    int64_t mode = 0;
    switch (flags & O_ACCMODE) {
    case O_WRONLY: mode = htrace::kFileModeWriteOnly; break;
    case O_RDWR: mode = htrace::kFileModeReadWrite; break;
    default: mode = htrace::kFileModeReadOnly; break;
    }
    if (flags & O_CREAT) mode |= htrace::kFileModeCreate;
    if (flags & O_EXCL) mode |= htrace::kFileModeExcl;
    if (flags & O_TRUNC) mode |= htrace::kFileModeTruncate;
    if (flags & O_APPEND) mode |= htrace::kFileModeAppend;
    return mode;
}

// fopen's mode string: r, w, a, each optionally with + (and b, e, x, m, c, which do not matter here).
int64_t stream_mode(const char* mode)
{
    if (mode == nullptr) return htrace::kFileModeReadOnly;
    const bool plus = std::strchr(mode, '+') != nullptr;
    const int64_t access = plus ? htrace::kFileModeReadWrite : mode[0] == 'r' ? htrace::kFileModeReadOnly
                                                                              : htrace::kFileModeWriteOnly;
    if (mode[0] == 'w') return access | htrace::kFileModeCreate | htrace::kFileModeTruncate;
    if (mode[0] == 'a') return access | htrace::kFileModeCreate | htrace::kFileModeAppend;
    return access;
}

int64_t portable_whence(int whence)
{
    if (whence == SEEK_CUR) return htrace::kSeekCur;
    if (whence == SEEK_END) return htrace::kSeekEnd;
    return htrace::kSeekSet;
}

mode_t creation_mode(int flags, va_list& rest)
{
    return (flags & (O_CREAT | O_TMPFILE)) ? static_cast<mode_t>(va_arg(rest, int)) : 0;
}

// Records `call` (when it is recording) and leaves errno as the C library set it.
void finish(Call& call, bool failed)
{
    if (!call.recording()) return;
    const int saved = errno;
    call.finish(failed ? -1 : 0);
    errno = saved;
}

int record_open(Call& call, int fd, const char* path, int64_t mode, int directory_fd = AT_FDCWD)
{
    if (call.recording()) {
        auto& a = call.args();
        a.fd = fd;
        a.filename = path;
        a.access_mode = mode;
        a.directory_fd = directory_fd;
    }
    finish(call, fd < 0);
    return fd;
}

FILE* record_fopen(Call& call, FILE* stream, const char* path, const char* mode)
{
    if (call.recording()) {
        auto& a = call.args();
        a.fd = stream ? fileno(stream) : -1;
        a.filename = path;
        a.access_mode = stream_mode(mode);
    }
    finish(call, stream == nullptr);
    return stream;
}

// A call on a descriptor that moves `transferred` bytes (or fails with -1) at `offset`, if any.
template <typename Result>
Result record_on(Call& call, int fd, Result result, int64_t transferred = 0, int64_t offset = 0)
{
    if (call.recording()) {
        auto& a = call.args();
        a.fd = fd;
        a.transferred = result < 0 ? 0 : transferred;
        a.offset = offset;
    }
    finish(call, result < 0);
    return result;
}

off_t record_seek(Call& call, int fd, off_t result, off_t offset, int whence)
{
    if (call.recording()) {
        call.args().whence = static_cast<int>(portable_whence(whence));
    }
    return record_on(call, fd, result, 0, offset);
}

int stream_fd(FILE* stream) { return stream ? fileno(stream) : -1; }

}  // namespace

extern "C" {

int open(const char* path, int flags, ...)
{
    va_list rest;
    va_start(rest, flags);
    const mode_t mode = creation_mode(flags, rest);
    va_end(rest);
    HTRACE_NEXT(open);
    Call call(Op::posix_open, HTRACE_CALL_SITE);
    return record_open(call, next(path, flags, mode), path, open_mode(flags));
}

int open64(const char* path, int flags, ...)
{
    va_list rest;
    va_start(rest, flags);
    const mode_t mode = creation_mode(flags, rest);
    va_end(rest);
    HTRACE_NEXT(open64);
    Call call(Op::posix_open, HTRACE_CALL_SITE);
    return record_open(call, next(path, flags, mode), path, open_mode(flags));
}

int openat(int directory_fd, const char* path, int flags, ...)
{
    va_list rest;
    va_start(rest, flags);
    const mode_t mode = creation_mode(flags, rest);
    va_end(rest);
    HTRACE_NEXT(openat);
    Call call(Op::posix_openat, HTRACE_CALL_SITE);
    return record_open(call, next(directory_fd, path, flags, mode), path, open_mode(flags), directory_fd);
}

int openat64(int directory_fd, const char* path, int flags, ...)
{
    va_list rest;
    va_start(rest, flags);
    const mode_t mode = creation_mode(flags, rest);
    va_end(rest);
    HTRACE_NEXT(openat64);
    Call call(Op::posix_openat, HTRACE_CALL_SITE);
    return record_open(call, next(directory_fd, path, flags, mode), path, open_mode(flags), directory_fd);
}

int creat(const char* path, mode_t mode)
{
    HTRACE_NEXT(creat);
    Call call(Op::posix_creat, HTRACE_CALL_SITE);
    return record_open(call, next(path, mode), path, open_mode(O_WRONLY | O_CREAT | O_TRUNC));
}

int creat64(const char* path, mode_t mode)
{
    HTRACE_NEXT(creat64);
    Call call(Op::posix_creat, HTRACE_CALL_SITE);
    return record_open(call, next(path, mode), path, open_mode(O_WRONLY | O_CREAT | O_TRUNC));
}

int close(int fd)
{
    HTRACE_NEXT(close);
    Call call(Op::posix_close, HTRACE_CALL_SITE);
    return record_on(call, fd, next(fd));
}

ssize_t read(int fd, void* buffer, size_t bytes)
{
    HTRACE_NEXT(read);
    Call call(Op::posix_read, HTRACE_CALL_SITE);
    const ssize_t done = next(fd, buffer, bytes);
    return record_on(call, fd, done, done);
}

ssize_t write(int fd, const void* buffer, size_t bytes)
{
    HTRACE_NEXT(write);
    Call call(Op::posix_write, HTRACE_CALL_SITE);
    const ssize_t done = next(fd, buffer, bytes);
    return record_on(call, fd, done, done);
}

ssize_t pread(int fd, void* buffer, size_t bytes, off_t offset)
{
    HTRACE_NEXT(pread);
    Call call(Op::posix_pread, HTRACE_CALL_SITE);
    const ssize_t done = next(fd, buffer, bytes, offset);
    return record_on(call, fd, done, done, offset);
}

ssize_t pread64(int fd, void* buffer, size_t bytes, off64_t offset)
{
    HTRACE_NEXT(pread64);
    Call call(Op::posix_pread, HTRACE_CALL_SITE);
    const ssize_t done = next(fd, buffer, bytes, offset);
    return record_on(call, fd, done, done, offset);
}

ssize_t pwrite(int fd, const void* buffer, size_t bytes, off_t offset)
{
    HTRACE_NEXT(pwrite);
    Call call(Op::posix_pwrite, HTRACE_CALL_SITE);
    const ssize_t done = next(fd, buffer, bytes, offset);
    return record_on(call, fd, done, done, offset);
}

ssize_t pwrite64(int fd, const void* buffer, size_t bytes, off64_t offset)
{
    HTRACE_NEXT(pwrite64);
    Call call(Op::posix_pwrite, HTRACE_CALL_SITE);
    const ssize_t done = next(fd, buffer, bytes, offset);
    return record_on(call, fd, done, done, offset);
}

off_t lseek(int fd, off_t offset, int whence)
{
    HTRACE_NEXT(lseek);
    Call call(Op::posix_lseek, HTRACE_CALL_SITE);
    return record_seek(call, fd, next(fd, offset, whence), offset, whence);
}

off64_t lseek64(int fd, off64_t offset, int whence)
{
    HTRACE_NEXT(lseek64);
    Call call(Op::posix_lseek, HTRACE_CALL_SITE);
    return record_seek(call, fd, next(fd, offset, whence), offset, whence);
}

int fsync(int fd)
{
    HTRACE_NEXT(fsync);
    Call call(Op::posix_fsync, HTRACE_CALL_SITE);
    return record_on(call, fd, next(fd));
}

int fdatasync(int fd)
{
    HTRACE_NEXT(fdatasync);
    Call call(Op::posix_fdatasync, HTRACE_CALL_SITE);
    return record_on(call, fd, next(fd));
}

int ftruncate(int fd, off_t size)
{
    HTRACE_NEXT(ftruncate);
    Call call(Op::posix_ftruncate, HTRACE_CALL_SITE);
    if (call.recording()) call.args().file_size = size;
    return record_on(call, fd, next(fd, size));
}

int ftruncate64(int fd, off64_t size)
{
    HTRACE_NEXT(ftruncate64);
    Call call(Op::posix_ftruncate, HTRACE_CALL_SITE);
    if (call.recording()) call.args().file_size = size;
    return record_on(call, fd, next(fd, size));
}

FILE* fopen(const char* path, const char* mode)
{
    HTRACE_NEXT(fopen);
    Call call(Op::posix_fopen, HTRACE_CALL_SITE);
    return record_fopen(call, next(path, mode), path, mode);
}

FILE* fopen64(const char* path, const char* mode)
{
    HTRACE_NEXT(fopen64);
    Call call(Op::posix_fopen, HTRACE_CALL_SITE);
    return record_fopen(call, next(path, mode), path, mode);
}

int fclose(FILE* stream)
{
    HTRACE_NEXT(fclose);
    Call call(Op::posix_fclose, HTRACE_CALL_SITE);
    const int fd = stream_fd(stream);  // before the stream is gone
    return record_on(call, fd, next(stream) == EOF ? -1 : 0);
}

size_t fread(void* buffer, size_t size, size_t items, FILE* stream)
{
    HTRACE_NEXT(fread);
    Call call(Op::posix_fread, HTRACE_CALL_SITE);
    const size_t done = next(buffer, size, items, stream);
    record_on(call, stream_fd(stream), 0, static_cast<int64_t>(done * size));
    return done;
}

size_t fwrite(const void* buffer, size_t size, size_t items, FILE* stream)
{
    HTRACE_NEXT(fwrite);
    Call call(Op::posix_fwrite, HTRACE_CALL_SITE);
    const size_t done = next(buffer, size, items, stream);
    record_on(call, stream_fd(stream), 0, static_cast<int64_t>(done * size));
    return done;
}

int fseek(FILE* stream, long offset, int whence)
{
    HTRACE_NEXT(fseek);
    Call call(Op::posix_fseek, HTRACE_CALL_SITE);
    return static_cast<int>(record_seek(call, stream_fd(stream), next(stream, offset, whence), offset, whence));
}

int fseeko(FILE* stream, off_t offset, int whence)
{
    HTRACE_NEXT(fseeko);
    Call call(Op::posix_fseek, HTRACE_CALL_SITE);
    return static_cast<int>(record_seek(call, stream_fd(stream), next(stream, offset, whence), offset, whence));
}

int fseeko64(FILE* stream, off64_t offset, int whence)
{
    HTRACE_NEXT(fseeko64);
    Call call(Op::posix_fseek, HTRACE_CALL_SITE);
    return static_cast<int>(record_seek(call, stream_fd(stream), next(stream, offset, whence), offset, whence));
}

int fflush(FILE* stream)
{
    HTRACE_NEXT(fflush);
    Call call(Op::posix_fflush, HTRACE_CALL_SITE);
    return record_on(call, stream_fd(stream), next(stream));
}

}  // extern "C"
