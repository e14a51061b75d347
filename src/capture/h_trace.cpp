// h-trace: runs an unmodified MPI program with the tracer preloaded.
//   mpirun -np 64 h-trace ./app args...
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

constexpr const char* kUsage =
    "usage: h-trace PROGRAM [ARGS...]\n"
    "  Runs PROGRAM with the MPI tracer preloaded; rank 0 writes the trace at MPI_Finalize.\n"
    "  MERGE_PRECISION  0..100, how much may be merged (default 100: lossless)\n"
    "  HTRACE_FILE      the trace file (default trace.h)\n"
    "  HTRACE_BINS      histogram bins; HTRACE_REBALANCE  values between bin rebalances\n"
    "  HTRACE_FLUSH_SECONDS  every N seconds each rank also writes its calls so far to HTRACE_FILE.part.RANK\n"
    "                   (it does on SIGTERM, SIGINT, MPI_Abort and exit anyway; h-merge joins the parts)\n"
    "  HTRACE_IO_EXCLUDE  colon-separated paths whose POSIX I/O is not recorded (besides /proc, /sys,\n"
    "                   /dev and the trace file)\n"
    "  HTRACE_PYTHON_IMPORTS  1: keep the POSIX I/O of Python's import system (left out by default)\n"
    "  HTRACE_LIBRARY   the tracer library to preload (default: the one installed with h-trace)\n";

std::string own_directory()
{
    char path[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0) return ".";
    std::string self(path, static_cast<size_t>(n));
    return self.substr(0, self.rfind('/'));
}

bool readable(const std::string& path) { return access(path.c_str(), R_OK) == 0; }

// Beside the launcher in a build tree, or where it was installed.
std::string find_library()
{
    if (const char* chosen = std::getenv("HTRACE_LIBRARY")) return chosen;
    for (const std::string& candidate : {own_directory() + "/libhtrace.so", std::string(HTRACE_INSTALLED_LIBRARY)}) {
        if (readable(candidate)) return candidate;
    }
    return {};
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 2 || std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0) {
        std::fputs(kUsage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const std::string library = find_library();
    if (library.empty() || !readable(library)) {
        std::fprintf(stderr, "h-trace: cannot find libhtrace.so%s%s\n", library.empty() ? "" : " at ",
                     library.c_str());
        return 127;
    }
    std::string preload = library;
    if (const char* existing = std::getenv("LD_PRELOAD"); existing && *existing) preload += std::string(":") + existing;
    setenv("LD_PRELOAD", preload.c_str(), 1);
    execvp(argv[1], argv + 1);
    std::fprintf(stderr, "h-trace: cannot run %s: %s\n", argv[1], std::strerror(errno));
    return 127;
}
