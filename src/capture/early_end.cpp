#include "capture/early_end.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

namespace htrace::capture {
namespace {

// Signals that end a batch job at its time limit, or a user's Ctrl-C: the rank writes its part.
constexpr std::array kStopSignals{SIGTERM, SIGINT};
// Signals of a rank that crashed: its memory may be damaged, so it only says so.
constexpr std::array kFatalSignals{SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

// What the pipe carries besides signal numbers (which are below 65).
constexpr char kQuit = 'q';
constexpr char kRequest = 'r';

struct Installed {
    int signal = 0;
    struct sigaction previous {};
    bool ours = false;
};

// Read by the signal handlers: set before they are installed, left alone while they are.
// `owner`: the process that started the writer. A child forked without exec inherits the handlers
// and the pipe but not the thread: there they stand aside.
pid_t owner = 0;
int wake_fd = -1;
int read_fd = -1;
std::array<Installed, kStopSignals.size() + kFatalSignals.size()> installed;
char fatal_line[256];
size_t fatal_line_length = 0;

// The writer thread and what it is asked to do; never destroyed (a joinable std::thread destroyed at
// exit would terminate the process).
struct Writer {
    std::thread thread;
    EarlyEndHooks hooks;
    int flush_seconds = 0;
    std::mutex mutex;
    std::condition_variable done;
    std::string reason;      // of the request being served
    uint64_t requested = 0;  // requests made, and served
    uint64_t served = 0;
};
Writer* writer = nullptr;

Installed* entry_of(int signal)
{
    for (auto& entry : installed) {
        if (entry.ours && entry.signal == signal) return &entry;
    }
    return nullptr;
}

void on_stop_signal(int signal);
void on_fatal_signal(int signal);

// Puts back what was there before our handler, if ours is still the one installed (the application
// may have installed its own since: then it stays).
void put_back(int signal)
{
    Installed* entry = entry_of(signal);
    if (entry == nullptr) return;
    entry->ours = false;
    struct sigaction current {};
    sigaction(signal, nullptr, &current);
    if (current.sa_handler != on_stop_signal && current.sa_handler != on_fatal_signal) return;
    sigaction(signal, &entry->previous, nullptr);
}

// Async-signal-safe: a literal.
const char* known_signal_name(int signal)
{
    switch (signal) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    default: return "a signal";
    }
}

void write_text(const char* text, size_t length)
{
    while (length > 0) {
        const ssize_t n = ::write(STDERR_FILENO, text, length);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        text += n;
        length -= static_cast<size_t>(n);
    }
}

// From a handler (async-signal-safe): the previous handler, or the default action, takes the signal,
// raised again (pending until the handler returns, or at once where a fault repeats). Once: our
// handler is gone for this signal.
void pass_on(int signal)
{
    Installed* entry = entry_of(signal);
    if (entry != nullptr) {
        entry->ours = false;
        sigaction(signal, &entry->previous, nullptr);
    }
    raise(signal);
}

// Async-signal-safe throughout.
void on_fatal_signal(int signal)
{
    const int saved = errno;
    if (fatal_line_length > 0 && getpid() == owner) {
        const char* name = known_signal_name(signal);
        write_text(fatal_line, fatal_line_length);
        write_text(name, std::strlen(name));
        write_text(" before MPI_Finalize\n", 21);
    }
    pass_on(signal);
    errno = saved;
}

void on_stop_signal(int signal)
{
    const int saved = errno;
    const char byte = static_cast<char>(signal);
    // A full pipe already holds a wake-up; any other failure: no writer to wake, and the signal
    // goes on as if we were not here.
    if (getpid() != owner || (::write(wake_fd, &byte, 1) != 1 && errno != EAGAIN)) pass_on(signal);
    errno = saved;
}

void install(size_t slot, int signal, void (*handler)(int))
{
    Installed& entry = installed[slot];
    entry.signal = signal;
    struct sigaction previous {};
    if (sigaction(signal, nullptr, &previous) != 0) return;
    // A signal the process ignores stays ignored (a job started with nohup goes on).
    if (!(previous.sa_flags & SA_SIGINFO) && previous.sa_handler == SIG_IGN) return;
    struct sigaction ours {};
    ours.sa_handler = handler;
    sigemptyset(&ours.sa_mask);
    // The application's interrupted system calls go on as they would without us.
    ours.sa_flags = SA_RESTART | SA_ONSTACK;
    entry.previous = previous;
    if (sigaction(signal, &ours, nullptr) == 0) entry.ours = true;
}

void serve()
{
    for (;;) {
        pollfd wake{read_fd, POLLIN, 0};
        const int ready = poll(&wake, 1, writer->flush_seconds > 0 ? writer->flush_seconds * 1000 : -1);
        if (ready < 0 && errno == EINTR) continue;
        if (ready < 0) return;
        if (ready == 0) {
            writer->hooks.write_part("still running at its last partial write (HTRACE_FLUSH_SECONDS=" +
                                     std::to_string(writer->flush_seconds) + ")");
            continue;
        }
        char byte = 0;
        if (::read(read_fd, &byte, 1) != 1) continue;
        if (byte == kQuit) return;
        if (byte == kRequest) {
            std::string reason;
            {
                std::lock_guard lock(writer->mutex);
                reason = writer->reason;
            }
            writer->hooks.write_part(reason);
            {
                std::lock_guard lock(writer->mutex);
                ++writer->served;
            }
            writer->done.notify_all();
            continue;
        }
        const int signal = byte;
        writer->hooks.write_part("got " + signal_name(signal));
        writer->hooks.signalled(signal);
        // The signal goes on to what was there before us, as a signal to the process: the writer
        // blocks every signal, so another thread takes it.
        put_back(signal);
        kill(getpid(), signal);
    }
}

}  // namespace

std::string signal_name(int signal)
{
    const std::string name = known_signal_name(signal);
    return name == "a signal" ? "signal " + std::to_string(signal) : name;
}

void start_early_end(int flush_seconds, EarlyEndHooks hooks, const std::string& fatal)
{
    if (writer != nullptr) return;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return;
    // A handler must never block: a full pipe already holds a wake-up.
    fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK);
    read_fd = fds[0];
    wake_fd = fds[1];
    owner = getpid();
    fatal_line_length = std::min(fatal.size(), sizeof fatal_line);
    std::memcpy(fatal_line, fatal.data(), fatal_line_length);

    writer = new Writer;
    writer->hooks = std::move(hooks);
    writer->flush_seconds = flush_seconds;
    // The thread blocks every signal, so that they reach the application's threads, as without us.
    sigset_t all;
    sigset_t before;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &before);
    try {
        writer->thread = std::thread(serve);
    } catch (...) {
        pthread_sigmask(SIG_SETMASK, &before, nullptr);
        delete writer;
        writer = nullptr;
        return;
    }
    pthread_sigmask(SIG_SETMASK, &before, nullptr);

    size_t slot = 0;
    for (int signal : kStopSignals) install(slot++, signal, on_stop_signal);
    for (int signal : kFatalSignals) install(slot++, signal, on_fatal_signal);
}

void write_part_now(const std::string& reason)
{
    if (writer == nullptr || getpid() != owner) return;
    std::unique_lock lock(writer->mutex);
    writer->reason = reason;
    const uint64_t ticket = ++writer->requested;
    const char byte = kRequest;
    if (::write(wake_fd, &byte, 1) != 1) return;
    writer->done.wait(lock, [&] { return writer->served >= ticket; });
}

void stop_early_end()
{
    if (writer == nullptr || getpid() != owner) return;
    for (auto& entry : installed) put_back(entry.signal);
    const char byte = kQuit;
    // A full pipe (wake-ups nobody read) is drained by the writer before it meets the quit.
    while (::write(wake_fd, &byte, 1) != 1 && errno == EAGAIN) std::this_thread::yield();
    writer->thread.join();
    delete writer;
    writer = nullptr;
    close(read_fd);
    close(wake_fd);
    read_fd = -1;
    wake_fd = -1;
}

}  // namespace htrace::capture
