#include "replay/io_executor.hpp"

#include "trace/event.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <functional>
#include <stdexcept>
#include <vector>

namespace htrace::replay {
namespace {

int mpi_amode(int64_t amode)
{
    int out = 0;
    const std::pair<int64_t, int> bits[] = {
        {kFileModeReadOnly, MPI_MODE_RDONLY},   {kFileModeReadWrite, MPI_MODE_RDWR},
        {kFileModeWriteOnly, MPI_MODE_WRONLY},  {kFileModeCreate, MPI_MODE_CREATE},
        {kFileModeExcl, MPI_MODE_EXCL},         {kFileModeDeleteOnClose, MPI_MODE_DELETE_ON_CLOSE},
        {kFileModeUniqueOpen, MPI_MODE_UNIQUE_OPEN}, {kFileModeSequential, MPI_MODE_SEQUENTIAL},
        {kFileModeAppend, MPI_MODE_APPEND},
    };
    for (const auto& [portable, mpi] : bits) {
        if (amode & portable) out |= mpi;
    }
    // Exclusive creation would fail where a rank of an earlier replay left the file: replay
    // creates, whatever the file's past.
    return out & ~MPI_MODE_EXCL;
}

int mpi_whence(int64_t whence)
{
    if (whence == kSeekCur) return MPI_SEEK_CUR;
    if (whence == kSeekEnd) return MPI_SEEK_END;
    return MPI_SEEK_SET;
}

int posix_whence(int64_t whence)
{
    if (whence == kSeekCur) return SEEK_CUR;
    if (whence == kSeekEnd) return SEEK_END;
    return SEEK_SET;
}

const char* stream_mode(int64_t amode)
{
    const bool both = (amode & kFileModeReadWrite) != 0;
    if (amode & kFileModeAppend) return both ? "a+" : "a";
    if (amode & kFileModeTruncate) return both ? "w+" : "w";
    return both ? "r+" : "r";
}

// The view's filetype: the recorded strided blocks, placed in a tile of the recorded extent; bytes
// where the trace holds no layout (a contiguous view, or one that is not strided blocks).
MPI_Datatype strided_filetype(const ScheduledCall::ViewLayout& view)
{
    if (view.blocks <= 0 || view.block <= 0 || view.extent <= 0) return MPI_BYTE;
    MPI_Datatype blocks = MPI_DATATYPE_NULL, placed = MPI_DATATYPE_NULL, tile = MPI_DATATYPE_NULL;
    MPI_Type_create_hvector(static_cast<int>(view.blocks), static_cast<int>(view.block), view.stride, MPI_BYTE, &blocks);
    const int one = 1;
    const MPI_Aint lb = view.lb;
    MPI_Type_create_hindexed(1, &one, &lb, blocks, &placed);
    MPI_Type_create_resized(placed, 0, view.extent, &tile);
    MPI_Type_commit(&tile);
    MPI_Type_free(&blocks);
    MPI_Type_free(&placed);
    return tile;
}

int as_count(int64_t bytes)
{
    if (bytes > INT_MAX) throw std::runtime_error("an I/O call of " + std::to_string(bytes) + " bytes exceeds MPI's int count");
    return static_cast<int>(std::max<int64_t>(0, bytes));
}

}  // namespace

Files::~Files()
{
    // MPI files left open stay so: closing one is collective, and the other ranks may not.
    for (auto& [id, file] : files_) close(file);
}

void Files::close(Open& file)
{
    if (file.stream != nullptr) {
        std::fclose(file.stream);
    } else if (file.fd >= 0) {
        ::close(file.fd);
    }
    file.stream = nullptr;
    file.fd = -1;
}

void Files::extend_to(int fd, int64_t bytes)
{
    ::flock(fd, LOCK_EX);  // ranks extending at once: the longest wins
    struct stat st;
    if (::fstat(fd, &st) == 0 && st.st_size < bytes) {
        if (::ftruncate(fd, bytes) != 0) { /* read-only, or full: the read then reads less, as replay's own */ }
    }
    ::flock(fd, LOCK_UN);
}

void Files::refuse(const std::string& why)
{
    if (refused_++ == 0) first_refusal_ = why;
}

// Every rank of the communicator must hand MPI_File_open the same file, or none may open it: a rank
// left out of the collective open would leave the others waiting in it. The ranks' checks agree
// unless the sandbox changed between them; they compare a hash of their path, an int MPI can reduce.
void Files::open_mpi(const ScheduledCall& call, MPI_Comm comm)
{
    // A file the application only read is made empty: reads extend it as far as they reach.
    SandboxFile file = sandbox_.open(call.path);
    const int mine = file.is_open() ? static_cast<int>(std::hash<std::string>{}(file.path()) & 0x3fffffff) : -1;
    int highest[2] = {mine, -mine};  // the highest and the lowest, negated
    PMPI_Allreduce(MPI_IN_PLACE, highest, 2, MPI_INT, MPI_MAX, comm);
    if (!file.is_open()) {
        refuse(file.refusal());
        return;
    }
    if (highest[0] != -highest[1]) {
        refuse(file.path() + ": not replayed, another rank found another file, or none, in the sandbox");
        return;
    }
    Open open;
    if (MPI_File_open(comm, file.path().c_str(), mpi_amode(call.amode), MPI_INFO_NULL, &open.fh) != MPI_SUCCESS) return;
    open.fd = file.release();
    files_[call.file] = open;
}

void Files::issue(const ScheduledCall& call, MPI_Comm comm, char* buffer, MPI_Request* request)
{
    if (request != nullptr) *request = MPI_REQUEST_NULL;  // a call not issued: its completion finds none
    const Op op = call.op;
    if (is_posix_io(op)) {
        posix(call, buffer);
        return;
    }
    if (op == Op::File_open) {
        open_mpi(call, comm);
        return;
    }
    if (op == Op::File_delete) {
        MPI_File_delete(sandbox_.path_of(call.path).c_str(), MPI_INFO_NULL);
        return;
    }
    const auto found = files_.find(call.file);
    if (found == files_.end()) return;  // its open failed: a request stays empty
    Open& file = found->second;
    switch (op) {
    case Op::File_close:
        MPI_File_close(&file.fh);
        close(file);
        files_.erase(found);
        return;
    case Op::File_set_size:
        MPI_File_set_size(file.fh, call.file_size);
        return;
    case Op::File_preallocate:
        MPI_File_preallocate(file.fh, call.file_size);
        return;
    case Op::File_get_size: {
        MPI_Offset size = 0;
        MPI_File_get_size(file.fh, &size);
        return;
    }
    case Op::File_set_view: {
        MPI_Datatype filetype = strided_filetype(call.view);
        MPI_File_set_view(file.fh, call.view_disp, MPI_BYTE, filetype, "native", MPI_INFO_NULL);
        if (filetype != MPI_BYTE) MPI_Type_free(&filetype);
        return;
    }
    case Op::File_seek:
        MPI_File_seek(file.fh, call.offset, mpi_whence(call.whence));
        return;
    case Op::File_seek_shared:
        MPI_File_seek_shared(file.fh, call.offset, mpi_whence(call.whence));
        return;
    case Op::File_sync:
        MPI_File_sync(file.fh);
        return;
    default:
        break;
    }
    if (operation_name(op).find("read") != std::string_view::npos) {  // read, iread; no write has it
        read(call, file, buffer, request);
    } else {
        write(call, file, buffer, request);
    }
}

// The sandbox's descriptor is open for reading and writing; what the application could not do on its
// own (read a file it opened write-only, write one it opened read-only) replay does not do either.
void Files::open_posix(const ScheduledCall& call)
{
    // A file the application only read is made empty: reads extend it as far as they reach.
    SandboxFile file = sandbox_.open(call.path);
    if (!file.is_open()) {
        refuse(file.refusal());
        return;
    }
    Open open;
    open.reads = !(call.amode & kFileModeWriteOnly);
    open.writes = (call.amode & (kFileModeWriteOnly | kFileModeReadWrite)) != 0;
    if (open.writes && !file.writable()) return;  // a read-only file of a given --io-dir: as the open would fail
    if ((call.amode & kFileModeTruncate) && open.writes) {
        if (::ftruncate(file.fd(), 0) != 0) return;
    }
    if (call.amode & kFileModeAppend) ::fcntl(file.fd(), F_SETFL, ::fcntl(file.fd(), F_GETFL) | O_APPEND);
    if (call.op == Op::posix_fopen) {
        open.stream = ::fdopen(file.fd(), stream_mode(call.amode));
        if (open.stream == nullptr) return;
        file.release();
    } else {
        open.fd = file.release();
    }
    files_[call.file] = open;
}

// A stream's reads extend the file from where the stream stands; its buffer may hold an end of
// file met before, which a file grown since must not hide.
void Files::posix(const ScheduledCall& call, char* buffer)
{
    const Op op = call.op;
    if (is_posix_open(op)) {
        open_posix(call);
        return;
    }
    const auto found = files_.find(call.file);
    if (found == files_.end()) return;  // its open failed
    Open& file = found->second;
    const bool on_stream = is_one_of(op, {Op::posix_fread, Op::posix_fwrite, Op::posix_fseek, Op::posix_fflush});
    if (on_stream && file.stream == nullptr) return;  // a damaged trace: a stream call on a descriptor
    const int fd = file.stream ? fileno(file.stream) : file.fd;
    const auto bytes = static_cast<size_t>(std::max<int64_t>(0, call.bytes));
    const auto recv_bytes = static_cast<size_t>(std::max<int64_t>(0, call.recv_bytes));
    const int64_t offset = std::max<int64_t>(0, call.offset);
    auto done = [](auto result) { return result > 0 ? static_cast<uint64_t>(result) : 0; };
    switch (op) {
    case Op::posix_close:
    case Op::posix_fclose:
        close(file);
        files_.erase(found);
        return;
    default:
        break;
    }
    const bool reading = is_one_of(op, {Op::posix_read, Op::posix_pread, Op::posix_fread});
    const bool writing = is_one_of(op, {Op::posix_write, Op::posix_pwrite, Op::posix_fwrite, Op::posix_ftruncate});
    if ((reading && !file.reads) || (writing && !file.writes)) return;  // the application's failed
    switch (op) {
    case Op::posix_read:
        extend_to(fd, ::lseek(fd, 0, SEEK_CUR) + static_cast<int64_t>(recv_bytes));
        read_ += done(::read(fd, buffer, recv_bytes));
        return;
    case Op::posix_pread:
        extend_to(fd, offset + static_cast<int64_t>(recv_bytes));
        read_ += done(::pread(fd, buffer, recv_bytes, offset));
        return;
    case Op::posix_fread:
        extend_to(fd, std::ftell(file.stream) + static_cast<int64_t>(recv_bytes));
        std::clearerr(file.stream);
        read_ += std::fread(buffer, 1, recv_bytes, file.stream);
        return;
    case Op::posix_write: written_ += done(::write(fd, buffer, bytes)); return;
    case Op::posix_pwrite: written_ += done(::pwrite(fd, buffer, bytes, offset)); return;
    case Op::posix_fwrite: written_ += std::fwrite(buffer, 1, bytes, file.stream); return;
    case Op::posix_lseek: ::lseek(fd, call.offset, posix_whence(call.whence)); return;
    case Op::posix_fseek: ::fseeko(file.stream, call.offset, posix_whence(call.whence)); return;
    case Op::posix_fsync: ::fsync(fd); return;
    case Op::posix_fdatasync: ::fdatasync(fd); return;
    case Op::posix_fflush: std::fflush(file.stream); return;
    case Op::posix_ftruncate:
        if (::ftruncate(fd, call.file_size) != 0) { /* as the application's: its outcome is not replay's */ }
        return;
    default: return;
    }
}

void Files::read(const ScheduledCall& call, Open& file, char* buffer, MPI_Request* request)
{
    const Op op = call.op;
    const int count = as_count(call.recv_bytes);
    const int64_t offset = std::max<int64_t>(0, call.offset);
    // How far this read reaches, where the rank alone says: the file byte after the last one it reads,
    // as the view maps positions in its data to the file.
    int64_t end = -1;
    MPI_Offset position = -1;
    if (is_one_of(op, {Op::File_read_at, Op::File_read_at_all, Op::File_read_at_all_begin, Op::File_iread_at,
                       Op::File_iread_at_all})) {
        position = offset;
    } else if (is_one_of(op, {Op::File_read, Op::File_read_all, Op::File_read_all_begin, Op::File_iread,
                              Op::File_iread_all})) {
        MPI_File_get_position(file.fh, &position);
    } else if (op == Op::File_read_shared || op == Op::File_iread_shared) {
        MPI_File_get_position_shared(file.fh, &position);
    }
    MPI_Offset last = 0;
    if (position >= 0 && count > 0 && MPI_File_get_byte_offset(file.fh, position + count - 1, &last) == MPI_SUCCESS) {
        end = last + 1;
    }
    if (end > 0) extend_to(file.fd, end);
    switch (op) {
    case Op::File_read_at: MPI_File_read_at(file.fh, offset, buffer, count, MPI_BYTE, MPI_STATUS_IGNORE); break;
    case Op::File_read_at_all: MPI_File_read_at_all(file.fh, offset, buffer, count, MPI_BYTE, MPI_STATUS_IGNORE); break;
    case Op::File_read: MPI_File_read(file.fh, buffer, count, MPI_BYTE, MPI_STATUS_IGNORE); break;
    case Op::File_read_all: MPI_File_read_all(file.fh, buffer, count, MPI_BYTE, MPI_STATUS_IGNORE); break;
    case Op::File_read_shared: MPI_File_read_shared(file.fh, buffer, count, MPI_BYTE, MPI_STATUS_IGNORE); break;
    case Op::File_read_ordered: MPI_File_read_ordered(file.fh, buffer, count, MPI_BYTE, MPI_STATUS_IGNORE); break;
    case Op::File_read_at_all_begin: MPI_File_read_at_all_begin(file.fh, offset, buffer, count, MPI_BYTE); break;
    case Op::File_read_all_begin: MPI_File_read_all_begin(file.fh, buffer, count, MPI_BYTE); break;
    case Op::File_read_ordered_begin: MPI_File_read_ordered_begin(file.fh, buffer, count, MPI_BYTE); break;
    case Op::File_read_at_all_end: MPI_File_read_at_all_end(file.fh, buffer, MPI_STATUS_IGNORE); break;
    case Op::File_read_all_end: MPI_File_read_all_end(file.fh, buffer, MPI_STATUS_IGNORE); break;
    case Op::File_read_ordered_end: MPI_File_read_ordered_end(file.fh, buffer, MPI_STATUS_IGNORE); break;
    case Op::File_iread_at: MPI_File_iread_at(file.fh, offset, buffer, count, MPI_BYTE, request); break;
    case Op::File_iread_at_all: MPI_File_iread_at_all(file.fh, offset, buffer, count, MPI_BYTE, request); break;
    case Op::File_iread: MPI_File_iread(file.fh, buffer, count, MPI_BYTE, request); break;
    case Op::File_iread_all: MPI_File_iread_all(file.fh, buffer, count, MPI_BYTE, request); break;
    case Op::File_iread_shared: MPI_File_iread_shared(file.fh, buffer, count, MPI_BYTE, request); break;
    default: return;
    }
    read_ += static_cast<uint64_t>(count);
}

void Files::write(const ScheduledCall& call, Open& file, char* buffer, MPI_Request* request)
{
    const int count = as_count(call.bytes);
    const int64_t offset = std::max<int64_t>(0, call.offset);
    switch (call.op) {
    case Op::File_write_at: MPI_File_write_at(file.fh, offset, buffer, count, MPI_BYTE, MPI_STATUS_IGNORE); break;
    case Op::File_write_at_all: MPI_File_write_at_all(file.fh, offset, buffer, count, MPI_BYTE, MPI_STATUS_IGNORE); break;
    case Op::File_write: MPI_File_write(file.fh, buffer, count, MPI_BYTE, MPI_STATUS_IGNORE); break;
    case Op::File_write_all: MPI_File_write_all(file.fh, buffer, count, MPI_BYTE, MPI_STATUS_IGNORE); break;
    case Op::File_write_shared: MPI_File_write_shared(file.fh, buffer, count, MPI_BYTE, MPI_STATUS_IGNORE); break;
    case Op::File_write_ordered: MPI_File_write_ordered(file.fh, buffer, count, MPI_BYTE, MPI_STATUS_IGNORE); break;
    case Op::File_write_at_all_begin: MPI_File_write_at_all_begin(file.fh, offset, buffer, count, MPI_BYTE); break;
    case Op::File_write_all_begin: MPI_File_write_all_begin(file.fh, buffer, count, MPI_BYTE); break;
    case Op::File_write_ordered_begin: MPI_File_write_ordered_begin(file.fh, buffer, count, MPI_BYTE); break;
    case Op::File_write_at_all_end: MPI_File_write_at_all_end(file.fh, buffer, MPI_STATUS_IGNORE); break;
    case Op::File_write_all_end: MPI_File_write_all_end(file.fh, buffer, MPI_STATUS_IGNORE); break;
    case Op::File_write_ordered_end: MPI_File_write_ordered_end(file.fh, buffer, MPI_STATUS_IGNORE); break;
    case Op::File_iwrite_at: MPI_File_iwrite_at(file.fh, offset, buffer, count, MPI_BYTE, request); break;
    case Op::File_iwrite_at_all: MPI_File_iwrite_at_all(file.fh, offset, buffer, count, MPI_BYTE, request); break;
    case Op::File_iwrite: MPI_File_iwrite(file.fh, buffer, count, MPI_BYTE, request); break;
    case Op::File_iwrite_all: MPI_File_iwrite_all(file.fh, buffer, count, MPI_BYTE, request); break;
    case Op::File_iwrite_shared: MPI_File_iwrite_shared(file.fh, buffer, count, MPI_BYTE, request); break;
    default: return;
    }
    written_ += static_cast<uint64_t>(count);
}

}  // namespace htrace::replay
