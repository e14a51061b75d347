#include "replay/sandbox.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using htrace::replay::sandboxed_path;
namespace fs = std::filesystem;

namespace {

// A fresh directory under the system's temporary one, removed at the end.
struct TempDir {
    fs::path path;
    TempDir()
    {
        std::string name = (fs::temp_directory_path() / "htrace-sandbox-XXXXXX").string();
        REQUIRE(::mkdtemp(name.data()) != nullptr);
        path = name;
    }
    ~TempDir() { fs::remove_all(path); }
};

// Whether `path`, resolved (links followed), is inside `dir`.
bool inside(const fs::path& dir, const std::string& path)
{
    const fs::path resolved = fs::weakly_canonical(path);
    const fs::path base = fs::canonical(dir);
    const auto [end, _] = std::mismatch(base.begin(), base.end(), resolved.begin(), resolved.end());
    return end == base.end() && resolved != base;
}

}  // namespace

TEST_CASE("every name the trace may hold lands inside the sandbox")
{
    TempDir outside;
    TempDir sandbox_dir;
    const std::string sandbox = sandbox_dir.path.string();
    const std::vector<std::string> names{"out.17", "data/ckpt_0017.dat", "../escape.dat", "../../../../etc/passwd",
                                         "/etc/passwd", outside.path.string() + "/abs.dat", "a/../../b/./c.dat", "",
                                         ".", "..", "///", "dir/"};
    for (const std::string& name : names) {
        CAPTURE(name);
        const std::string path = sandboxed_path(sandbox, name);
        CHECK(inside(sandbox_dir.path, path));
        std::ofstream(path) << "x";  // the path can be written: its directories were made
        CHECK(fs::exists(path));
    }
    CHECK(fs::is_empty(outside.path));  // nothing went to the absolute name's directory
    // Names keep their directories inside the sandbox.
    CHECK(sandboxed_path(sandbox, "data/ckpt_0017.dat") == sandbox + "/data/ckpt_0017.dat");
    CHECK(sandboxed_path(sandbox, "/abs/path.dat") == sandbox + "/abs/path.dat");
}

TEST_CASE("symbolic links in the sandbox do not lead out of it")
{
    TempDir outside;
    TempDir sandbox_dir;
    const std::string sandbox = sandbox_dir.path.string();
    fs::create_directory_symlink(outside.path, sandbox_dir.path / "link");
    fs::create_symlink(outside.path / "target.dat", sandbox_dir.path / "file.dat");
    for (const std::string name : {"link/x.dat", "link/deeper/y.dat", "file.dat"}) {
        CAPTURE(name);
        const std::string path = sandboxed_path(sandbox, name);
        CHECK(inside(sandbox_dir.path, path));
        std::ofstream(path) << "x";
    }
    CHECK(fs::is_empty(outside.path));
}
