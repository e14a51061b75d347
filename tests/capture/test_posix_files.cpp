#include "capture/posix_files.hpp"

#include "trace/file_names.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>

using htrace::Op;
using htrace::RecordedCall;
using htrace::Role;
using htrace::capture::absolute_path;
using htrace::capture::CallArgs;
using htrace::capture::PosixFiles;

namespace {

constexpr int kRank = 3;

// A table of the rank's files, as the tracer keeps it, and what it makes of calls.
struct Rank {
    PosixFiles files;
    std::map<int64_t, std::string> names;
    std::vector<int64_t> mpi_file_ids;

    explicit Rank(std::vector<std::string> excluded = {}) : files(excluded) {}

    std::optional<RecordedCall> call(Op op, CallArgs args, int rc = 0)
    {
        RecordedCall call;
        call.op = op;
        if (!files.describe(call, args, rc, mpi_file_ids, names, kRank)) return std::nullopt;
        return call;
    }
    std::optional<RecordedCall> open(const char* path, int fd, bool importing = false)
    {
        CallArgs args;
        args.filename = path;
        args.fd = fd;
        args.access_mode = htrace::kFileModeWriteOnly | htrace::kFileModeCreate;
        RecordedCall call;
        call.op = Op::posix_open;
        if (!files.describe(call, args, 0, mpi_file_ids, names, kRank, importing)) return std::nullopt;
        return call;
    }
    std::optional<RecordedCall> on(Op op, int fd, int64_t transferred = 0)
    {
        CallArgs args;
        args.fd = fd;
        args.transferred = transferred;
        return call(op, args);
    }
};

std::optional<int64_t> param(const RecordedCall& call, Role role)
{
    for (size_t i = 0; i < call.size(); ++i) {
        if (call.param(i).role == role) return call.param(i).value;
    }
    return std::nullopt;
}

}  // namespace

TEST_CASE("a path becomes absolute without '.' parts or repeated slashes")
{
    CHECK(absolute_path("out.3", "/work/run") == "/work/run/out.3");
    CHECK(absolute_path("./a//b/./c", "/work") == "/work/a/b/c");
    CHECK(absolute_path("/proc/self/maps", "/anywhere") == "/proc/self/maps");
    CHECK(absolute_path("../up", "/work/run") == "/work/run/../up");
    CHECK(absolute_path(".", "/") == "/");
}

TEST_CASE("files opened while tracing are numbered, named as patterns of the rank, and their calls recorded")
{
    Rank rank;
    const auto opened = rank.open("out.3", 7);
    REQUIRE(opened);
    CHECK(param(*opened, Role::file) == 0);
    const auto key = param(*opened, Role::file_name);
    REQUIRE(key);
    CHECK(rank.names.at(*key) == htrace::file_name_pattern("out.3", kRank));
    CHECK(param(*opened, Role::amode) == (htrace::kFileModeWriteOnly | htrace::kFileModeCreate));

    const auto written = rank.on(Op::posix_write, 7, 4096);
    REQUIRE(written);
    CHECK(param(*written, Role::file) == 0);
    CHECK(param(*written, Role::bytes) == 4096);
    const auto read = rank.on(Op::posix_read, 7, 100);
    REQUIRE(read);
    CHECK(param(*read, Role::recv_bytes) == 100);

    // A second file while the first is open takes the next id; after a close the id is free again.
    const auto second = rank.open("other", 8);
    REQUIRE(second);
    CHECK(param(*second, Role::file) == 1);
    CHECK(rank.on(Op::posix_close, 7));
    CHECK_FALSE(rank.on(Op::posix_write, 7, 1));  // closed: no longer the application's file
    const auto third = rank.open("third", 9);
    REQUIRE(third);
    CHECK(param(*third, Role::file) == 0);
}

TEST_CASE("POSIX files and MPI-IO files of a rank never share an id")
{
    Rank rank;
    rank.mpi_file_ids = {0, 1};
    const auto opened = rank.open("out.3", 5);
    REQUIRE(opened);
    CHECK(param(*opened, Role::file) == 2);
    CHECK(rank.files.ids() == std::vector<int64_t>{2});
}

TEST_CASE("the system's files, excluded paths and descriptors never seen opened are not recorded")
{
    char directory_template[] = "/tmp/htrace-posix-files-XXXXXX";
    REQUIRE(mkdtemp(directory_template) != nullptr);
    const std::string directory = directory_template;
    Rank rank({directory + "/logs"});

    CHECK_FALSE(rank.open("/proc/self/status", 10));
    CHECK_FALSE(rank.on(Op::posix_read, 10, 50));
    CHECK_FALSE(rank.open("/dev/null", 11));
    CHECK_FALSE(rank.open((directory + "/logs/rank.3").c_str(), 12));
    CHECK_FALSE(rank.on(Op::posix_write, 12, 80));
    CHECK(rank.open((directory + "/logs-not/rank.3").c_str(), 13));  // a name that only starts alike

    // Calls on descriptors whose open was not seen: counted only where they are regular files.
    CHECK_FALSE(rank.on(Op::posix_write, STDOUT_FILENO, 10));
    CHECK(rank.files.unseen_calls() == 0);
    const std::string path = directory + "/before-init";
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT, 0644);
    REQUIRE(fd >= 0);
    CHECK_FALSE(rank.on(Op::posix_write, fd, 10));
    CHECK(rank.files.unseen_calls() == 1);
    ::close(fd);
    ::unlink(path.c_str());
    ::rmdir(directory.c_str());
}

TEST_CASE("a failed open is recorded without a file, and takes no id")
{
    Rank rank;
    CallArgs args;
    args.filename = "missing.dat";
    args.fd = -1;
    args.access_mode = htrace::kFileModeReadOnly;
    const auto failed = rank.call(Op::posix_open, args, -1);
    REQUIRE(failed);
    CHECK(param(*failed, Role::file) == htrace::kNoComm);
    CHECK(rank.files.ids().empty());
}

TEST_CASE("an open of Python's import system is left out with every call on its descriptor, and counted")
{
    Rank rank;
    CHECK_FALSE(rank.open("/usr/lib/python3.11/__pycache__/json.cpython-311.pyc", 5, true));
    CHECK_FALSE(rank.on(Op::posix_lseek, 5));
    CHECK_FALSE(rank.on(Op::posix_read, 5, 4096));
    CHECK_FALSE(rank.on(Op::posix_close, 5));
    CHECK(rank.files.import_calls() == 4);
    CHECK(rank.names.empty());
    // The program's own file, even a .py one, on the descriptor number the import had: recorded, with
    // the first id (the import's open took none).
    const auto own = rank.open("notes.py", 5);
    REQUIRE(own);
    CHECK(param(*own, Role::file) == 0);
    CHECK(rank.on(Op::posix_write, 5, 10));
    CHECK(rank.files.import_calls() == 4);
    // An import's descriptor closed behind the tracer's back and reused by the program's open.
    CHECK_FALSE(rank.open("/usr/lib/python3.11/__pycache__/re.cpython-311.pyc", 6, true));
    const auto reused = rank.open("out.dat", 6);
    REQUIRE(reused);
    CHECK(rank.on(Op::posix_write, 6, 10));
}
