#include "trace/source_lines.hpp"

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace htrace {

namespace {

using Clock = std::chrono::steady_clock;

// addr2line prints two short lines per address; far more than that is not addr2line's answer.
constexpr size_t kMostOutputPerAddress = 8192;
// Addresses per child: keeps the command line well under the system's limit.
constexpr size_t kAddressesPerChild = 256;

bool is_regular_file(const std::string& path)
{
    struct stat status {};
    return !path.empty() && ::stat(path.c_str(), &status) == 0 && S_ISREG(status.st_mode);
}

std::string hex_address(uint64_t address)
{
    char text[24];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(address));
    return text;
}

// addr2line's standard output for `addresses` in `module`, or nothing when it did not run, failed,
// printed too much or ran past `deadline` (then it is killed).
std::string run_addr2line(const std::string& module, const std::vector<uint64_t>& addresses, Clock::time_point deadline)
{
    std::vector<std::string> args{"addr2line", "-f", "-C", "-e", module};
    for (uint64_t address : addresses) args.push_back(hex_address(address));
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);

    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return {};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    pid_t child = 0;
    const int spawned = ::posix_spawnp(&child, "addr2line", &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    if (spawned != 0) {
        ::close(out[0]);
        return {};
    }

    std::string output;
    const size_t most = kMostOutputPerAddress * addresses.size();
    bool complete = false;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) break;
        pollfd readable{out[0], POLLIN, 0};
        const int ready = ::poll(&readable, 1, static_cast<int>(std::min<long long>(left, 1000)));
        if (ready < 0 && errno != EINTR) break;
        if (ready <= 0) continue;
        char buffer[4096];
        const ssize_t got = ::read(out[0], buffer, sizeof buffer);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            complete = got == 0;
            break;
        }
        output.append(buffer, static_cast<size_t>(got));
        if (output.size() > most) break;
    }
    ::close(out[0]);
    if (!complete) ::kill(child, SIGKILL);
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (!complete || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return {};
    return output;
}

std::vector<std::string> lines_of(const std::string& text)
{
    std::vector<std::string> lines;
    size_t start = 0;
    for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
        lines.push_back(text.substr(start, end - start));
    return lines;
}

}  // namespace

bool parse_addr2line_answer(const std::string& function_line, const std::string& place_line, SourceLine& out)
{
    std::string place = place_line;
    if (const size_t note = place.find(" ("); note != std::string::npos) place.resize(note);
    const size_t colon = place.rfind(':');
    if (colon == std::string::npos || colon == 0) return false;
    const std::string file = place.substr(0, colon);
    unsigned line = 0;
    const char* digits = place.data() + colon + 1;
    const char* end = place.data() + place.size();
    const auto [stop, error] = std::from_chars(digits, end, line);
    if (file == "??" || error != std::errc() || stop != end || line == 0) return false;
    out.file = file;
    out.line = line;
    out.function = function_line == "??" ? std::string() : function_line;
    return true;
}

SourceLines resolve_source_lines(const std::map<uint64_t, SiteLocation>& locations, std::chrono::milliseconds time_limit)
{
    const Clock::time_point deadline = Clock::now() + time_limit;
    std::map<std::string, std::vector<std::pair<uint64_t, uint64_t>>> by_module;  // (signature, address)
    for (const auto& [signature, location] : locations) by_module[location.module].emplace_back(signature, location.address);

    SourceLines resolved;
    for (const auto& [module, sites] : by_module) {
        if (!is_regular_file(module)) continue;
        for (size_t first = 0; first < sites.size() && Clock::now() < deadline; first += kAddressesPerChild) {
            const size_t count = std::min(kAddressesPerChild, sites.size() - first);
            std::vector<uint64_t> addresses;
            for (size_t i = first; i < first + count; ++i) addresses.push_back(sites[i].second);
            const std::vector<std::string> lines = lines_of(run_addr2line(module, addresses, deadline));
            if (lines.size() != 2 * count) continue;  // not an answer to these addresses
            for (size_t i = 0; i < count; ++i) {
                SourceLine line;
                if (parse_addr2line_answer(lines[2 * i], lines[2 * i + 1], line))
                    resolved.emplace(sites[first + i].first, std::move(line));
            }
        }
    }
    return resolved;
}

}  // namespace htrace
