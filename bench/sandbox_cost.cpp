// Cost of opening a file through replay's sandbox (src/replay/sandbox.hpp) against a plain open of
// its path, per open, for a file at the sandbox's top and one two directories down: the file
// created (the first open of a replay), then opened again where it exists (every later open).
// Prints the median microseconds per open over several runs. Files go to a new directory under the
// system's temporary one, removed at the end.
//
//     sandbox-cost [FILES [RUNS]]    (defaults 2000 and 5)
#include "replay/sandbox.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

using Opener = std::function<int(const std::string&)>;

// Median seconds per open of `files` names, over `runs` runs, each in an emptied directory, by the
// opener `make` gives for it; `again`: each file is opened once before the timed opens.
double per_open(const fs::path& dir, int files, int runs, const std::string& prefix, bool again,
                const std::function<Opener()>& make)
{
    std::vector<double> seconds;
    for (int run = 0; run < runs; ++run) {
        fs::remove_all(dir);
        fs::create_directory(dir);
        const Opener open = make();
        std::vector<std::string> names;
        for (int k = 0; k < files; ++k) names.push_back(prefix + "file." + std::to_string(k));
        if (again) {
            for (const auto& name : names) ::close(open(name));
        }
        const auto start = std::chrono::steady_clock::now();
        for (const auto& name : names) ::close(open(name));
        seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / files);
    }
    std::sort(seconds.begin(), seconds.end());
    return seconds[seconds.size() / 2];
}

}  // namespace

int main(int argc, char** argv)
{
    const int files = argc > 1 ? std::atoi(argv[1]) : 2000;
    const int runs = argc > 2 ? std::atoi(argv[2]) : 5;
    std::string base = (fs::temp_directory_path() / "sandbox-cost-XXXXXX").string();
    if (::mkdtemp(base.data()) == nullptr) return 1;
    const fs::path dir = fs::path(base) / "box";
    std::printf("%-28s %14s %14s\n", "file", "plain open us", "sandbox us");
    for (const std::string prefix : {"", "a/b/"}) {
        for (const bool again : {false, true}) {
            // What replay did before: make the directories, open the path.
            const double plain = per_open(dir, files, runs, prefix, again, [&] {
                return [&](const std::string& name) {
                    fs::create_directories((dir / name).parent_path());
                    return ::open((dir / name).c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
                };
            });
            std::shared_ptr<htrace::replay::Sandbox> sandbox;
            const double boxed = per_open(dir, files, runs, prefix, again, [&] {
                sandbox = std::make_shared<htrace::replay::Sandbox>(dir.string());
                return [&](const std::string& name) { return sandbox->open(name).release(); };
            });
            std::printf("%-28s %14.2f %14.2f\n", (prefix + "file.N, " + (again ? "existing" : "created")).c_str(),
                        plain * 1e6, boxed * 1e6);
        }
    }
    fs::remove_all(base);
    return 0;
}
