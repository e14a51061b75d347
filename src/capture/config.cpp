#include "capture/config.hpp"

#include "trace/limits.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <string_view>
#include <utility>
#include <sys/stat.h>

namespace htrace::capture {
namespace {

// A whole decimal integer in [low, high], nothing else around it.
bool parse_bounded(std::string_view text, long low, long high, long& out)
{
    if (text.empty()) return false;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && ptr == text.data() + text.size() && out >= low && out <= high;
}

}  // namespace

ConfigResult read_config(const char* (*lookup)(const char*))
{
    ConfigResult result;
    long value = 0;
    if (const char* p = lookup("MERGE_PRECISION")) {
        if (!parse_bounded(p, 0, 100, value)) {
            result.error = std::string("MERGE_PRECISION='") + p + "' is not an integer from 0 to 100";
            return result;
        }
        result.config.precision = static_cast<int>(value);
    }
    if (const char* p = lookup("HTRACE_FILE")) {
        if (*p == '\0') {
            result.error = "HTRACE_FILE is empty";
            return result;
        }
        result.config.file = p;
    }
    if (const char* p = lookup("HTRACE_BINS")) {
        if (!parse_bounded(p, 1, limits::kMostBins, value)) {
            result.error = std::string("HTRACE_BINS='") + p + "' is not an integer from 1 to " +
                           std::to_string(limits::kMostBins);
            return result;
        }
        result.config.histogram.bins = static_cast<uint32_t>(value);
    }
    if (const char* p = lookup("HTRACE_REBALANCE")) {
        if (!parse_bounded(p, 1, limits::kMostRebalanceInterval, value)) {
            result.error = std::string("HTRACE_REBALANCE='") + p + "' is not a positive integer";
            return result;
        }
        result.config.histogram.rebalance_interval = static_cast<uint32_t>(value);
    }
    if (const char* p = lookup("HTRACE_FLUSH_SECONDS")) {
        if (!parse_bounded(p, 0, 1L << 20, value)) {
            result.error = std::string("HTRACE_FLUSH_SECONDS='") + p + "' is not an integer from 0 to 1048576";
            return result;
        }
        result.config.flush_seconds = static_cast<int>(value);
    }
    for (auto [name, on] : {std::pair{"HTRACE_STATS", &result.config.stats},
                            std::pair{"HTRACE_PYTHON_IMPORTS", &result.config.python_imports}}) {
        if (const char* p = lookup(name)) {
            if (!parse_bounded(p, 0, 1, value)) {
                result.error = std::string(name) + "='" + p + "' is not 0 or 1";
                return result;
            }
            *on = value == 1;
        }
    }
    if (const char* p = lookup("HTRACE_IO_EXCLUDE")) {
        std::string_view rest = p;
        while (!rest.empty()) {
            const size_t colon = std::min(rest.find(':'), rest.size());
            if (colon > 0) result.config.io_excluded.emplace_back(rest.substr(0, colon));
            rest.remove_prefix(std::min(colon + 1, rest.size()));
        }
    }
    return result;
}

std::string check_output_path(const std::string& file)
{
    const std::string named = "HTRACE_FILE=" + file;
    struct stat st {};
    if (stat(file.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode)) return named + " is a directory";
        // A device or pipe (/dev/full, /dev/null) cannot take a trace written aside and renamed over it.
        if (!S_ISREG(st.st_mode)) return named + " is not a regular file";
    }
    const auto slash = file.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : file.substr(0, slash));
    if (stat(dir.c_str(), &st) != 0) return named + ": directory " + dir + ": " + std::strerror(errno);
    if (!S_ISDIR(st.st_mode)) return named + ": " + dir + " is not a directory";
    // What the trace's write will do: make a file beside it (access() says yes to root everywhere,
    // and knows nothing of read-only mounts).
    const std::string probe = file + ".probe." + std::to_string(getpid());
    const int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return named + ": cannot create a file in " + dir + " (" + std::strerror(errno) + ")";
    close(fd);
    unlink(probe.c_str());
    return {};
}

}  // namespace htrace::capture
