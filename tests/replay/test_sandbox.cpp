#include "replay/sandbox.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using htrace::replay::Sandbox;
using htrace::replay::SandboxFile;
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

// Writes through the file as replay does (at the start, then at an offset), and closes it.
void write_through(const SandboxFile& file)
{
    const std::string data = "written by replay";
    REQUIRE(::pwrite(file.fd(), data.data(), data.size(), 0) == static_cast<ssize_t>(data.size()));
    REQUIRE(::pwrite(file.fd(), data.data(), data.size(), 4096) == static_cast<ssize_t>(data.size()));
    REQUIRE(::ftruncate(file.fd(), 10000) == 0);
}

// What a file outside the sandbox must keep: its content, size and modification time.
struct Snapshot {
    std::string content;
    off_t size = 0;
    struct timespec mtime {};

    explicit Snapshot(const fs::path& path)
    {
        std::ifstream in(path, std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        content = text.str();
        struct stat st;
        REQUIRE(::stat(path.c_str(), &st) == 0);
        size = st.st_size;
        mtime = st.st_mtim;
    }
    bool operator==(const Snapshot& other) const
    {
        return content == other.content && size == other.size && mtime.tv_sec == other.mtime.tv_sec &&
               mtime.tv_nsec == other.mtime.tv_nsec;
    }
};

void write_file(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

}  // namespace

TEST_CASE("every name the trace may hold lands inside the sandbox")
{
    TempDir outside;
    TempDir sandbox_dir;
    const Sandbox sandbox(sandbox_dir.path.string());
    REQUIRE(sandbox.error().empty());
    const std::vector<std::string> names{"out.17", "data/ckpt_0017.dat", "../escape.dat", "../../../../etc/passwd",
                                         "/etc/passwd", outside.path.string() + "/abs.dat", "a/../../b/./c.dat", "",
                                         ".", "..", "///", "dir/"};
    for (const std::string& name : names) {
        CAPTURE(name);
        const SandboxFile file = sandbox.open(name);
        REQUIRE(file.is_open());
        CHECK(inside(sandbox_dir.path, file.path()));
        write_through(file);
        CHECK(fs::file_size(file.path()) == 10000);  // the path names the file written
    }
    CHECK(fs::is_empty(outside.path));  // nothing went to the absolute name's directory
    // Names keep their directories inside the sandbox.
    CHECK(sandbox.open("data/ckpt_0017.dat").path() == sandbox_dir.path.string() + "/data/ckpt_0017.dat");
    CHECK(sandbox.open("/abs/path.dat").path() == sandbox_dir.path.string() + "/abs/path.dat");
}

TEST_CASE("a file replay made, opened again, is the same file")
{
    TempDir sandbox_dir;
    const Sandbox sandbox(sandbox_dir.path.string());
    write_through(sandbox.open("data/out.dat"));
    const SandboxFile again = sandbox.open("./data//out.dat");
    REQUIRE(again.is_open());
    CHECK(again.path() == sandbox_dir.path.string() + "/data/out.dat");
    struct stat st;
    REQUIRE(::fstat(again.fd(), &st) == 0);
    CHECK(st.st_size == 10000);
    CHECK(sandbox.path_of("data/out.dat") == again.path());
}

// Issue 26: a symbolic link planted at NAME.replayed was followed by MPI-IO's open, and hard links
// planted at the names replay writes were written through.
TEST_CASE("links planted in the sandbox do not lead out of it")
{
    TempDir outside;
    TempDir sandbox_dir;
    const fs::path& box = sandbox_dir.path;
    // Files outside, each the target of something planted inside.
    const std::vector<std::string> targets{"by_symlink", "by_symlink_replayed", "by_hardlink", "by_hardlink_replayed",
                                           "by_dir_link", "by_dotdot", "by_both"};
    for (const auto& target : targets) write_file(outside.path / target, "outside: " + target + "\n");
    std::map<std::string, Snapshot> before;
    for (const auto& target : targets) before.emplace(target, Snapshot(outside.path / target));

    // A symbolic link at the name and at NAME.replayed.
    fs::create_symlink(outside.path / "by_symlink", box / "sym.dat");
    fs::create_symlink(outside.path / "by_symlink_replayed", box / "sym.dat.replayed");
    // A hard link at the name, and one at NAME.replayed of another.
    fs::create_hard_link(outside.path / "by_hardlink", box / "hard.dat");
    fs::create_symlink(outside.path / "by_both", box / "mixed.dat");
    fs::create_hard_link(outside.path / "by_hardlink_replayed", box / "mixed.dat.replayed");
    // A directory link on the way, and links at the flattened name it leads to.
    fs::create_directory_symlink(outside.path, box / "dirlink");
    fs::create_symlink(outside.path / "by_dir_link", box / "dirlink_by_dir_link");
    // A FIFO: opening it would block.
    REQUIRE(::mkfifo((box / "fifo.dat").c_str(), 0644) == 0);

    const Sandbox sandbox(box.string());
    const std::vector<std::string> names{"sym.dat", "hard.dat", "mixed.dat", "dirlink/by_dir_link",
                                         "../" + outside.path.filename().string() + "/by_dotdot",
                                         outside.path.string() + "/by_dotdot", "fifo.dat"};
    std::vector<std::string> refused;
    for (const std::string& name : names) {
        CAPTURE(name);
        const SandboxFile file = sandbox.open(name);
        if (!file.is_open()) {
            CHECK(file.refusal().find(name) != std::string::npos);
            refused.push_back(name);
            continue;
        }
        CHECK(inside(box, file.path()));
        struct stat st;
        REQUIRE(::fstat(file.fd(), &st) == 0);
        CHECK(S_ISREG(st.st_mode));
        CHECK(st.st_nlink == 1);
        write_through(file);
        // The file replay got is what its path names, not followed: MPI-IO opens that path.
        struct stat named;
        REQUIRE(::lstat(file.path().c_str(), &named) == 0);
        CHECK(named.st_ino == st.st_ino);
    }
    // Where both NAME and NAME.replayed are taken, the file is refused; elsewhere NAME.replayed is used.
    CHECK(refused == std::vector<std::string>{"sym.dat", "mixed.dat"});
    CHECK(fs::is_regular_file(fs::symlink_status(box / "hard.dat.replayed")));
    CHECK(fs::is_regular_file(fs::symlink_status(box / "fifo.dat.replayed")));
    CHECK(fs::is_regular_file(fs::symlink_status(box / "dirlink_by_dir_link.replayed")));

    for (const auto& target : targets) {
        CAPTURE(target);
        CHECK(Snapshot(outside.path / target) == before.at(target));
    }
    // Nothing new outside either.
    size_t outside_files = 0;
    for ([[maybe_unused]] const auto& entry : fs::directory_iterator(outside.path)) ++outside_files;
    CHECK(outside_files == targets.size());
    // A delete goes where the open went: the planted hard link is left, the file replay made is named.
    CHECK(sandbox.path_of("hard.dat") == box.string() + "/hard.dat.replayed");
}

TEST_CASE("a refusal is one line of bounded length, whatever the name")
{
    TempDir outside;
    TempDir sandbox_dir;
    // A link at its first directory flattens the name into one too long for the file system.
    std::string name = "two\nlines";
    for (int k = 0; k < 30; ++k) name += "/" + std::string(200, 'x');
    fs::create_directory_symlink(outside.path, sandbox_dir.path / "two\nlines");
    const SandboxFile file = Sandbox(sandbox_dir.path.string()).open(name);
    REQUIRE_FALSE(file.is_open());
    CHECK(file.refusal().find('\n') == std::string::npos);
    CHECK(file.refusal().size() < 1000);
    CHECK(fs::is_empty(outside.path));
}

TEST_CASE("a sandbox directory that is not there is an error")
{
    TempDir dir;
    const Sandbox sandbox((dir.path / "missing").string());
    CHECK(sandbox.error().find("missing") != std::string::npos);
}
