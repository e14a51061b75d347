// h-trace: runs an unmodified MPI program with the tracer preloaded.
//   mpirun -np 64 h-trace ./app args...
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

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
    "  HTRACE_LIBRARY   the tracer library to preload (default: the one installed with h-trace)\n"
    "  HTRACE_STATS     1: print at the end how often the call-path cache spared an unwind\n";

bool readable(const char* path) { return access(path, R_OK) == 0; }

// Beside the launcher in a build tree, or where it was installed. The launcher runs once per rank
// before the program; it uses only the C library, since loading libstdc++ cost each rank about a
// millisecond.
bool find_library(char (&library)[PATH_MAX])
{
    if (const char* chosen = std::getenv("HTRACE_LIBRARY")) {
        return std::snprintf(library, sizeof library, "%s", chosen) < int(sizeof library);
    }
    char self[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    char* slash = std::strrchr(self, '/');
    if (slash) *slash = '\0';
    if (std::snprintf(library, sizeof library, "%s/libhtrace.so", slash ? self : ".") < int(sizeof library) &&
        readable(library)) {
        return true;
    }
    return std::snprintf(library, sizeof library, "%s", HTRACE_INSTALLED_LIBRARY) < int(sizeof library) &&
           readable(library);
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 2 || std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0) {
        std::fputs(kUsage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    char library[PATH_MAX];
    if (!find_library(library) || !readable(library)) {
        std::fprintf(stderr, "h-trace: cannot find libhtrace.so%s%s\n", std::getenv("HTRACE_LIBRARY") ? " at " : "",
                     std::getenv("HTRACE_LIBRARY") ? library : "");
        return 127;
    }
    const char* existing = std::getenv("LD_PRELOAD");
    const size_t preload_size = std::strlen(library) + (existing ? std::strlen(existing) : 0) + 2;
    char* preload = static_cast<char*>(std::malloc(preload_size));
    if (!preload) return 127;
    std::snprintf(preload, preload_size, "%s%s%s", library, existing && *existing ? ":" : "",
                  existing && *existing ? existing : "");
    setenv("LD_PRELOAD", preload, 1);
    execvp(argv[1], argv + 1);
    std::fprintf(stderr, "h-trace: cannot run %s: %s\n", argv[1], std::strerror(errno));
    return 127;
}
