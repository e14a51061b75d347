#pragma once
// When a job ends before MPI_Finalize: the tracer's own thread that writes a rank's partial file on
// SIGTERM or SIGINT, on request (MPI_Abort, exit without MPI_Finalize) and every HTRACE_FLUSH_SECONDS,
// and the handlers of fatal signals that say, in one line, that no trace was written.
//
// Signal handlers do only what is async-signal-safe: a SIGTERM or SIGINT handler writes the signal's
// number to a pipe and returns; the writer thread, woken by it, writes the part (closing the tracer's
// recording gate only to copy its state), then puts the handler that was there before back and
// raises the signal again, so the application's own handler, or the default action, follows. A fatal
// signal's handler writes a line prepared in advance, puts the previous handler back and raises the
// signal again. docs/design.md, "Error policy", says why.

#include <functional>
#include <string>

namespace htrace::capture {

struct EarlyEndHooks {
    // Writes this rank's partial file, saying why it stopped there; runs on the writer thread.
    std::function<void(const std::string& reason)> write_part;
    // After the part of a SIGTERM or SIGINT, before the signal goes on: the line to print, if any.
    std::function<void(int signal)> signalled;
};

// Starts the writer thread and installs the handlers (not over a signal the process ignores).
// `flush_seconds` > 0: a part every so many seconds besides. `fatal_line`: the start of the line a
// fatal signal prints ("h-trace: no trace written: rank 3 got "), empty for none.
void start_early_end(int flush_seconds, EarlyEndHooks hooks, const std::string& fatal_line);

// Has the writer thread write a part now, and waits until it has. Not from a signal handler.
void write_part_now(const std::string& reason);

// Puts back the handlers that were there before ours (where ours are still installed) and ends the
// writer thread. Not from a signal handler; waits for a part being written.
void stop_early_end();

// The name of a signal, as its macro spells it ("SIGTERM"), or "signal N".
std::string signal_name(int signal);

}  // namespace htrace::capture
