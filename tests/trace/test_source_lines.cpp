// Call sites' source lines: addr2line's answers parsed, and the child process held to its bounds
// whatever the addr2line on PATH does. A fake addr2line stands in where a test needs one to answer, hang
// or flood; the real one is checked against a program's own source line in tests/mpi (check_profile.py).
#include "trace/source_lines.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

using namespace htrace;

namespace {

// A directory holding an executable `addr2line` script, put first on PATH while it lives.
class FakeAddr2line {
public:
    explicit FakeAddr2line(const std::string& script)
    {
        char pattern[] = "/tmp/htrace-addr2line-XXXXXX";
        REQUIRE(::mkdtemp(pattern) != nullptr);
        dir_ = pattern;
        const std::filesystem::path program = dir_ / "addr2line";
        std::ofstream(program) << "#!/bin/sh\n" << script << "\n";
        std::filesystem::permissions(program, std::filesystem::perms::owner_all);
        const char* path = std::getenv("PATH");
        saved_path_ = path ? path : "";
        ::setenv("PATH", (dir_.string() + ":" + saved_path_).c_str(), 1);
    }
    ~FakeAddr2line()
    {
        ::setenv("PATH", saved_path_.c_str(), 1);
        std::filesystem::remove_all(dir_);
    }

private:
    std::filesystem::path dir_;
    std::string saved_path_;
};

// Any regular file serves as the module: the fake addr2line does not read it.
const std::map<uint64_t, SiteLocation> kTwoSites{{0x11, {"/bin/sh", 0x10a0}}, {0x22, {"/bin/sh", 0x20b0}}};

double seconds_since(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TEST_CASE("addr2line's answers: a file and line, a discriminator, and the unknowns")
{
    SourceLine line;
    REQUIRE(parse_addr2line_answer("main", "/src/app/solver.c:43", line));
    CHECK(line == SourceLine{"/src/app/solver.c", 43, "main"});
    REQUIRE(parse_addr2line_answer("ns::f<int>(int)", "/src/a:b.cpp:7 (discriminator 2)", line));
    CHECK(line == SourceLine{"/src/a:b.cpp", 7, "ns::f<int>(int)"});
    REQUIRE(parse_addr2line_answer("??", "/src/x.f90:12", line));
    CHECK(line.function.empty());
    CHECK_FALSE(parse_addr2line_answer("??", "??:0", line));
    CHECK_FALSE(parse_addr2line_answer("main", "??:?", line));
    CHECK_FALSE(parse_addr2line_answer("main", "/src/x.c:?", line));
    CHECK_FALSE(parse_addr2line_answer("main", "/src/x.c:0", line));
    CHECK_FALSE(parse_addr2line_answer("main", "no colon", line));
}

TEST_CASE("each site gets the answer to its own address")
{
    // Answers in the order of the addresses given, as addr2line does, naming each address.
    FakeAddr2line fake("shift 4; for a in \"$@\"; do echo \"f$a\"; echo \"/src/$a.c:9\"; done");
    const SourceLines lines = resolve_source_lines(kTwoSites);
    REQUIRE(lines.size() == 2);
    CHECK(lines.at(0x11) == SourceLine{"/src/0x10a0.c", 9, "f0x10a0"});
    CHECK(lines.at(0x22) == SourceLine{"/src/0x20b0.c", 9, "f0x20b0"});
}

TEST_CASE("a module that is not a regular file, or is missing, is not handed to addr2line")
{
    FakeAddr2line fake("echo main; echo /src/x.c:1; echo main; echo /src/x.c:1");
    CHECK(resolve_source_lines({{1, {"/dev/zero", 0x10}}}).empty());
    CHECK(resolve_source_lines({{1, {"/tmp", 0x10}}}).empty());
    CHECK(resolve_source_lines({{1, {"/no/such/binary", 0x10}}}).empty());
    CHECK(resolve_source_lines({{1, {"", 0x10}}}).empty());
}

TEST_CASE("an addr2line that fails, answers too little, hangs or floods resolves nothing, within its time limit")
{
    SUBCASE("fails")
    {
        FakeAddr2line fake("echo main; echo /src/x.c:1; echo main; echo /src/x.c:1; exit 1");
        CHECK(resolve_source_lines(kTwoSites).empty());
    }
    SUBCASE("answers one address of two")
    {
        FakeAddr2line fake("echo main; echo /src/x.c:1");
        CHECK(resolve_source_lines(kTwoSites).empty());
    }
    SUBCASE("hangs")
    {
        FakeAddr2line fake("exec sleep 60");
        const auto start = std::chrono::steady_clock::now();
        CHECK(resolve_source_lines(kTwoSites, std::chrono::milliseconds(200)).empty());
        CHECK(seconds_since(start) < 30);  // killed at its limit, not waited for
    }
    SUBCASE("floods")
    {
        FakeAddr2line fake("exec yes main");
        const auto start = std::chrono::steady_clock::now();
        CHECK(resolve_source_lines(kTwoSites, std::chrono::seconds(30)).empty());
        CHECK(seconds_since(start) < 30);  // stopped by the bound on its output, long before the limit
    }
    SUBCASE("is missing")
    {
        const char* path = std::getenv("PATH");
        const std::string saved = path ? path : "";
        ::setenv("PATH", "/nonexistent", 1);
        CHECK(resolve_source_lines(kTwoSites).empty());
        ::setenv("PATH", saved.c_str(), 1);
    }
}
