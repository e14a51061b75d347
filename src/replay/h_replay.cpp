// h-replay: re-enacts a trace as an MPI job. Every rank has the whole trace (its own copy, or under
// SimGrid the simulation's one: replay/trace_source.hpp) and issues its own schedule
// (replay/schedule.hpp); rank 0 reports replay time against traced time.
//
// Its own coordination (agreeing on errors, timing, the report) goes through PMPI_ entry points:
// h-trace on h-replay then sees only the replayed communication, which is how tests check it.
#include "replay/compute.hpp"
#include "replay/executor.hpp"
#include "replay/schedule.hpp"
#include "replay/simulated_main.hpp"
#include "replay/timeline_output.hpp"
#include "replay/trace_source.hpp"
#include "replay/watchdog.hpp"
#include "trace/trace_file.hpp"

#include <mpi.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace htrace;

constexpr const char* kUsage =
    "usage: mpirun -np N h-replay [--seed N] [--no-compute] [--max-compute S] [--paired] [--stall-limit S]\n"
    "                             [--report-json FILE] [--io-dir DIR] [--keep-io] [--partial]\n"
    "                             [--chrome-trace FILE] [--otf2 DIR] [TRACE]\n"
    "  TRACE             the trace to replay (default trace.h); N must be its rank count\n"
    "  --seed N          draw histogram values from seed N instead of the one the trace holds\n"
    "  --no-compute      skip the recorded computation between calls: communication only\n"
    "  --max-compute S   spend at most S seconds on any one computation gap; the trace's longer\n"
    "                    ones are cut to it and counted (default 60 s or the traced time, whichever\n"
    "                    is longer; inf: no limit)\n"
    "  --paired          pair messages with receives by the walk even where causal replay is possible\n"
    "  --stall-limit S   stop the job when one call of a rank has not returned for S seconds\n"
    "                    (default 60 s, ten times the traced time or twice --max-compute, whichever\n"
    "                    is longest; 0: never)\n"
    "  --report-json FILE  write replay time, traced time, calls and bytes per operation, bytes read\n"
    "                    and written per rank, and the time calls waited for late partners (late\n"
    "                    senders, late receivers, collectives; per rank and by call site) to F\n"
    "  --io-dir DIR      do the trace's file I/O inside DIR (made if missing; default: a new\n"
    "                    h-replay-io.XXXXXX here); no file outside it is read or written, and\n"
    "                    links planted in it are not followed\n"
    "  --keep-io         keep the files replay wrote (a DIR replay made is removed otherwise)\n"
    "  --chrome-trace FILE  write the replay's timeline (each rank's calls as issued, with their times)\n"
    "                    to F as a Chrome trace, which Perfetto and chrome://tracing open\n"
    "  --otf2 DIR        write the same timeline as an OTF2 archive in DIR (DIR/traces.otf2) for\n"
    "                    Vampir and other OTF2 tools; DIR must not hold one yet\n"
    "  --partial         replay an incomplete trace (h-merge's, of a job that ended before MPI_Finalize):\n"
    "                    ranks it lacks make no calls, and a call whose partner stopped first may wait\n"
    "                    until the stall limit\n";

struct Options {
    std::string trace = "trace.h";
    std::optional<uint64_t> seed;
    bool compute = true;
    std::optional<double> max_compute;
    bool paired = false;
    std::optional<double> stall_limit;
    std::string report_json;
    std::string chrome_trace;
    std::string otf2_dir;
    std::string io_dir;
    bool keep_io = false;
    bool partial = false;
    bool help = false;
};

// Returns an error message, empty on success.
std::string parse_options(int argc, char** argv, Options& options)
{
    bool trace_given = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        auto next = [&](std::string_view name, std::string& out) -> std::string {
            if (i + 1 >= argc) return std::string(name) + " needs a value";
            out = argv[++i];
            return {};
        };
        std::string text;
        if (arg == "-h" || arg == "--help") {
            options.help = true;
        } else if (arg == "--no-compute") {
            options.compute = false;
        } else if (arg == "--paired") {
            options.paired = true;
        } else if (arg == "--stall-limit" || arg == "--max-compute") {
            if (auto error = next(arg, text); !error.empty()) return error;
            char* end = nullptr;
            const double seconds = std::strtod(text.c_str(), &end);
            if (end == text.c_str() || *end != '\0' || !(seconds >= 0)) {
                return std::string(arg) + ": not a number of seconds: " + text;
            }
            (arg == "--stall-limit" ? options.stall_limit : options.max_compute) = seconds;
        } else if (arg == "--seed") {
            if (auto error = next(arg, text); !error.empty()) return error;
            uint64_t seed = 0;
            auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seed);
            if (ec != std::errc() || end != text.data() + text.size()) return "--seed: not a number: " + text;
            options.seed = seed;
        } else if (arg == "--report-json") {
            if (auto error = next(arg, options.report_json); !error.empty()) return error;
        } else if (arg == "--chrome-trace") {
            if (auto error = next(arg, options.chrome_trace); !error.empty()) return error;
        } else if (arg == "--otf2") {
            if (auto error = next(arg, options.otf2_dir); !error.empty()) return error;
#ifndef HTRACE_OTF2
            return "--otf2: this h-replay was built without OTF2 (libotf2-trace-dev)";
#endif
        } else if (arg == "--io-dir") {
            if (auto error = next(arg, options.io_dir); !error.empty()) return error;
        } else if (arg == "--keep-io") {
            options.keep_io = true;
        } else if (arg == "--partial") {
            options.partial = true;
        } else if (!arg.empty() && arg[0] == '-') {
            return "unknown option " + std::string(arg);
        } else if (trace_given) {
            return "more than one trace given";
        } else {
            options.trace = arg;
            trace_given = true;
        }
    }
    return {};
}

// Every rank checks its own input; the lowest rank with a problem says what it is, and every rank
// learns that the job must stop, so none is left waiting in a collective.
bool all_ranks_ok(const std::string& error, int rank, int size)
{
    int first_failing = error.empty() ? size : rank;
    PMPI_Allreduce(MPI_IN_PLACE, &first_failing, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first_failing == size) return true;
    if (rank == first_failing) {
        std::fprintf(stderr, "h-replay: %s\n", error.c_str());
        std::fflush(stderr);
    }
    return false;
}

std::string json_string(std::string_view text)
{
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
            continue;
        }
        out += c;
    }
    return out + "\"";
}

// JSON has no infinity (--max-compute inf) nor NaN: null.
std::string json_number(double value)
{
    if (!std::isfinite(value)) return "null";
    std::ostringstream out;
    out.precision(9);
    out << value;
    return out.str();
}

struct Report {
    int ranks = 0;
    uint64_t seed = 0;
    bool compute = true;
    double replay_seconds = 0;
    double traced_seconds = 0;
    double compute_seconds = 0;  // all ranks together
    double max_compute = 0;
    uint64_t gaps_cut = 0;        // computation gaps longer than max_compute, all ranks together
    double longest_gap_cut = 0;
    std::vector<uint64_t> calls;  // per Op
    std::vector<uint64_t> bytes;
    std::vector<uint64_t> not_replayed;
    std::vector<double> seconds_in_calls;         // per Op, all ranks together
    std::vector<double> traced_seconds_in_calls;  //   and as the trace has them (empty: not measured)
    uint64_t by_name_only = 0;
    std::string mode;
    std::string mode_reason;  // why not causal
    uint64_t unpaired_receives = 0;
    uint64_t fallback_messages = 0;
    std::string io_dir;                  // empty: the trace does no file I/O
    std::vector<uint64_t> bytes_read;    // per rank
    std::vector<uint64_t> bytes_written;
    uint64_t refused_files = 0;          // opens the sandbox refused, all ranks together
    std::string first_refusal;
    std::string wait_states = "null";    // JSON: timeline::WaitStates::json

    double relative_difference() const
    {
        return traced_seconds > 0 ? (replay_seconds - traced_seconds) / traced_seconds : 0.0;
    }

    std::string json() const
    {
        std::ostringstream out;
        out.precision(9);
        out << "{\n  \"ranks\": " << ranks << ",\n  \"seed\": " << seed
            << ",\n  \"compute\": " << (compute ? "true" : "false") << ",\n  \"mode\": " << json_string(mode)
            << ",\n  \"mode_reason\": " << json_string(mode_reason)
            << ",\n  \"unpaired_receives\": " << unpaired_receives
            << ",\n  \"fallback_messages\": " << fallback_messages << ",\n  \"replay_seconds\": " << replay_seconds
            << ",\n  \"traced_seconds\": " << traced_seconds
            << ",\n  \"relative_difference\": " << relative_difference()
            << ",\n  \"compute_seconds\": " << compute_seconds << ",\n  \"max_compute\": " << json_number(max_compute)
            << ",\n  \"computation_gaps_cut\": {\"gaps\": " << gaps_cut
            << ", \"longest\": " << json_number(longest_gap_cut) << "},\n  \"operations\": {";
        const char* separator = "\n    ";
        for (size_t op = 0; op < calls.size(); ++op) {
            // Where replay issued the operation, or the trace spent time in it (replay issues some
            // as others: MPI_Ibsend without a buffer as MPI_Isend).
            if (calls[op] == 0 && (traced_seconds_in_calls.empty() || traced_seconds_in_calls[op] == 0)) continue;
            out << separator << json_string(operation_name(static_cast<Op>(op))) << ": {\"calls\": " << calls[op]
                << ", \"bytes\": " << bytes[op] << ", \"seconds_in_calls\": " << json_number(seconds_in_calls[op])
                << ", \"traced_seconds_in_calls\": "
                << (traced_seconds_in_calls.empty() ? "null" : json_number(traced_seconds_in_calls[op])) << "}";
            separator = ",\n    ";
        }
        out << "\n  },\n  \"not_replayed\": {";
        separator = "\n    ";
        for (size_t op = 0; op < not_replayed.size(); ++op) {
            if (not_replayed[op] == 0) continue;
            out << separator << json_string(operation_name(static_cast<Op>(op))) << ": " << not_replayed[op];
            separator = ",\n    ";
        }
        out << "\n  },\n  \"by_name_only\": " << by_name_only << ",\n  \"wait_states\": " << wait_states;
        const auto list = [&](const std::vector<uint64_t>& values) {
            std::string text = "[";
            for (size_t r = 0; r < values.size(); ++r) text += (r ? ", " : "") + std::to_string(values[r]);
            return text + "]";
        };
        out << ",\n  \"io\": {\"directory\": " << json_string(io_dir) << ", \"bytes_read\": " << list(bytes_read)
            << ", \"bytes_written\": " << list(bytes_written) << ", \"refused\": " << refused_files
            << ", \"first_refusal\": " << json_string(first_refusal) << "}\n}\n";
        return out.str();
    }
};

// The time the traced ranks spent in each operation's calls, all ranks together: none where the trace
// did not measure it (a format older than 18).
std::vector<double> traced_seconds_in_calls(const Sequence& body, size_t ops)
{
    std::vector<double> seconds(ops, 0.0);
    bool measured = false;
    for_each_event(body, [&](const Event& e) {
        if (e.in_call.count == 0 || static_cast<size_t>(e.op) >= ops) return;
        seconds[static_cast<size_t>(e.op)] += e.in_call.total();  // its count is the calls, loops included
        measured = true;
    });
    return measured ? seconds : std::vector<double>{};
}

// Under MPI_THREAD_MULTIPLE the threads of a rank made their calls in an order of the moment, which
// differs between ranks: replayed one after another in one thread, a blocking call would wait for a
// message another of the rank's threads is yet to receive. Replay does not re-enact threads; it says so.
std::string threads_obstacle(const Trace& trace, const std::string& path)
{
    int64_t most = 0;
    any_event(trace.body, [&](const Event& e) {
        if (const Value* thread = e.find(Role::thread)) {
            if (thread->is_exact()) most = std::max(most, thread->exact());
            if (thread->is_per_rank()) most = std::max(most, thread->per_rank_range().second);
            if (thread->is_histogram()) most = std::max<int64_t>(most, 1);
        }
        return false;
    });
    if (most == 0) return {};
    return path + ": a rank's calls come from " + std::to_string(most + 1) +
           " threads (MPI_THREAD_MULTIPLE); replay re-enacts one thread per rank and cannot keep their order";
}

// The text of the lowest rank whose `text` is not empty, on every rank (empty where no rank has one).
std::string lowest_ranks_text(const std::string& text, int rank, int size)
{
    int first = text.empty() ? size : rank;
    PMPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == size) return {};
    int length = rank == first ? static_cast<int>(text.size()) : 0;
    PMPI_Bcast(&length, 1, MPI_INT, first, MPI_COMM_WORLD);
    std::string out = rank == first ? text : std::string(static_cast<size_t>(length), ' ');
    PMPI_Bcast(out.data(), length, MPI_CHAR, first, MPI_COMM_WORLD);
    return out;
}

struct Mode {
    replay::ReplayMode mode = replay::ReplayMode::paired;
    std::string reason;  // why not causal
};

// Causal replay needs every rank to be able to take part in it: each rank checks its own side, and
// the lowest rank that cannot says why, on every rank's behalf.
Mode choose_mode(const Trace& trace, uint64_t seed, int rank, int size, bool paired)
{
    if (paired) return {replay::ReplayMode::paired, "--paired"};
    const std::string reason = lowest_ranks_text(replay::causal_replay_obstacle(trace, seed, rank), rank, size);
    if (reason.empty()) return {replay::ReplayMode::causal, ""};
    return {replay::ReplayMode::paired, reason};
}

// Where replay does the trace's file I/O: none where the trace does none.
struct IoSandbox {
    std::string directory;
    bool made = false;  // by this replay: removed at the end unless --keep-io
};

bool has_io(const Sequence& seq)
{
    return any_event(seq, [](const Event& e) { return operation_kind(e.op) == OperationKind::io; });
}

// Rank 0 makes the directory and tells the others its name (through PMPI: replay's own coordination).
// Returns an error message, empty on success.
std::string make_sandbox(const Trace& trace, const Options& options, int rank, IoSandbox& sandbox)
{
#ifdef HTRACE_SIMULATED
    // SimGrid's MPI-IO needs hosts with disks; the trace's file I/O is left out (and counted).
    return {};
#endif
    if (!has_io(trace.body)) return {};
    std::string error;
    if (rank == 0) {
        if (options.io_dir.empty()) {
            std::string name = "h-replay-io.XXXXXX";
            if (::mkdtemp(name.data()) == nullptr) {
                error = "cannot make a directory for the trace's file I/O here: " + std::string(std::strerror(errno));
            }
            sandbox = {name, true};
        } else {
            struct stat st;
            const bool existed = ::stat(options.io_dir.c_str(), &st) == 0;
            if (!existed && ::mkdir(options.io_dir.c_str(), 0755) != 0) {
                error = "--io-dir " + options.io_dir + ": " + std::strerror(errno);
            } else if (existed && !S_ISDIR(st.st_mode)) {
                error = "--io-dir " + options.io_dir + ": not a directory";
            }
            sandbox = {options.io_dir, !existed};
        }
    }
    int length = static_cast<int>(sandbox.directory.size());
    PMPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
    sandbox.directory.resize(static_cast<size_t>(length));
    PMPI_Bcast(sandbox.directory.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);
    return error;
}

void remove_sandbox(const IoSandbox& sandbox, const Options& options, int rank)
{
    PMPI_Barrier(MPI_COMM_WORLD);  // every rank's files closed
    if (rank != 0 || sandbox.directory.empty()) return;
    if (sandbox.made && !options.keep_io) {
        std::error_code ignored;
        std::filesystem::remove_all(sandbox.directory, ignored);
    } else {
        std::fprintf(stderr, "h-replay: the files of the trace's I/O are in %s\n", sandbox.directory.c_str());
    }
}

// Why this job cannot replay what was read; empty where it can.
std::string trace_obstacle(const DecodeResult& read, const Options& options, int size)
{
    if (!read.trace) return options.trace + ": " + read.error;
    if (read.trace->header.ranks != size) {
        return options.trace + ": recorded with " + std::to_string(read.trace->header.ranks) +
               " ranks, this job has " + std::to_string(size) + " (run it with mpirun -np " +
               std::to_string(read.trace->header.ranks) + ")";
    }
    if (read.trace->header.incomplete() && !options.partial) {
        return options.trace + ": an incomplete trace (" + std::to_string(read.trace->header.stops.size()) + " of " +
               std::to_string(size) + " ranks, stopped before MPI_Finalize): give --partial to replay what it holds";
    }
    return threads_obstacle(*read.trace, options.trace);
}

double stall_limit_for(const Options& options, const Trace& trace, double max_compute)
{
#ifdef HTRACE_SIMULATED
    return 0;  // a simulation finds its own deadlocks
#endif
    return options.stall_limit.value_or(replay::default_stall_limit(trace.header.traced_seconds, max_compute));
}

// What this rank counted, laid out for one sum over the ranks: calls, bytes and calls not replayed
// per operation, then the five counts the report gives whole.
std::vector<uint64_t> local_counts(const replay::Executor& executor, const replay::ScheduleSummary& summary,
                                   const replay::Files* files)
{
    const size_t ops = static_cast<size_t>(Op::first_opaque);
    std::vector<uint64_t> local(3 * ops + 5, 0);
    for (size_t op = 0; op < ops; ++op) {
        local[op] = executor.totals()[op].calls;
        local[ops + op] = executor.totals()[op].bytes;
    }
    for (const auto& [name, count] : summary.not_replayed) {
        const auto op = static_cast<size_t>(operation_by_name(name));
        if (op < ops) local[2 * ops + op] += count;
    }
    for (size_t op = 0; op < ops; ++op) local[2 * ops + op] += executor.left_out()[op];
    local[3 * ops] = summary.by_name_only;
    local[3 * ops + 1] = summary.unpaired_receives;
    local[3 * ops + 2] = summary.fallback_messages;
    local[3 * ops + 3] = executor.compute_bound().gaps_cut();
    local[3 * ops + 4] = files ? files->refused() : 0;
    return local;
}

// Every rank takes part; rank 0's report gets the job's sums, maxima and per-rank I/O.
void sum_over_ranks(const replay::Executor& executor, const replay::ScheduleSummary& summary,
                    const replay::Files* files, double seconds, int rank, int size, Report& report)
{
    const size_t ops = static_cast<size_t>(Op::first_opaque);
    // Only rank 0 reports, but these are all-reductions: under SMPI 3.32 a reduction to one rank is
    // linear, and ranks that are not its root leave it at once for the next one, so their messages
    // of several reductions pile up at rank 0, where each message that arrives costs time in
    // proportion to the pile (4 reductions in a row took 66 s of host time at 2048 ranks; as
    // all-reductions, whose second half makes every rank wait for rank 0, 3 s).
    std::vector<uint64_t> total = local_counts(executor, summary, files);
    PMPI_Allreduce(MPI_IN_PLACE, total.data(), static_cast<int>(total.size()), MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    double maxima[2] = {seconds, executor.compute_bound().longest_cut()};
    PMPI_Allreduce(MPI_IN_PLACE, maxima, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    // The computation, then the time in calls per operation, all ranks together.
    std::vector<double> seconds_total(1 + ops);
    seconds_total[0] = executor.compute_seconds();
    for (size_t op = 0; op < ops; ++op) seconds_total[1 + op] = executor.totals()[op].seconds;
    PMPI_Allreduce(MPI_IN_PLACE, seconds_total.data(), static_cast<int>(seconds_total.size()), MPI_DOUBLE, MPI_SUM,
                   MPI_COMM_WORLD);
    const std::string first_refusal = lowest_ranks_text(files ? files->first_refusal() : "", rank, size);
    const uint64_t io_local[2] = {files ? files->bytes_read() : 0, files ? files->bytes_written() : 0};
    // Room for every rank's only where they arrive: under SimGrid all ranks hold theirs at once.
    std::vector<uint64_t> io_all(rank == 0 ? 2 * static_cast<size_t>(size) : 0, 0);
    PMPI_Gather(io_local, 2, MPI_UINT64_T, io_all.data(), 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (rank != 0) return;
    report.replay_seconds = maxima[0];
    report.compute_seconds = seconds_total[0];
    report.seconds_in_calls.assign(seconds_total.begin() + 1, seconds_total.end());
    report.calls.assign(total.begin(), total.begin() + static_cast<long>(ops));
    report.bytes.assign(total.begin() + static_cast<long>(ops), total.begin() + static_cast<long>(2 * ops));
    report.not_replayed.assign(total.begin() + static_cast<long>(2 * ops), total.begin() + static_cast<long>(3 * ops));
    report.by_name_only = total[3 * ops];
    report.unpaired_receives = total[3 * ops + 1];
    report.fallback_messages = total[3 * ops + 2];
    report.gaps_cut = total[3 * ops + 3];
    report.longest_gap_cut = maxima[1];
    report.refused_files = total[3 * ops + 4];
    report.first_refusal = first_refusal;
    for (int r = 0; r < size; ++r) {
        report.bytes_read.push_back(io_all[2 * static_cast<size_t>(r)]);
        report.bytes_written.push_back(io_all[2 * static_cast<size_t>(r) + 1]);
    }
}

// Rank 0's lines on stderr: the times, the mode, and what replay left out or cut.
void print_summary(const Report& report)
{
    const size_t ops = static_cast<size_t>(Op::first_opaque);
    std::fprintf(stderr, "h-replay: replay %.6f s, traced %.6f s, difference %+.1f%%%s\n", report.replay_seconds,
                 report.traced_seconds, 100.0 * report.relative_difference(),
                 report.compute ? "" : " (--no-compute)");
    if (report.mode == "causal") {
        std::fprintf(stderr, "h-replay: causal replay: every receive and completion where the rank made it\n");
    } else {
        std::fprintf(stderr, "h-replay: paired replay (%s): %llu receives without a message, %llu messages "
                     "received where their send was\n", report.mode_reason.c_str(),
                     static_cast<unsigned long long>(report.unpaired_receives),
                     static_cast<unsigned long long>(report.fallback_messages));
    }
    uint64_t skipped = 0;
    std::string names;
    for (size_t op = 0; op < ops; ++op) {
        if (report.not_replayed[op] == 0) continue;
        skipped += report.not_replayed[op];
        names += " " + std::string(operation_name(static_cast<Op>(op))) + " " +
                 std::to_string(report.not_replayed[op]);
    }
    if (skipped > 0) {
        std::fprintf(stderr, "h-replay: %llu calls not replayed (no topology, unknown communicator, or file "
                     "I/O in a simulation):%s\n",
                     static_cast<unsigned long long>(skipped), names.c_str());
    }
    if (report.gaps_cut > 0) {
        std::fprintf(stderr, "h-replay: %llu computation gaps longer than --max-compute %g s were cut to it "
                     "(longest %g s)\n", static_cast<unsigned long long>(report.gaps_cut), report.max_compute,
                     report.longest_gap_cut);
    }
    if (report.refused_files > 0) {
        std::fprintf(stderr, "h-replay: %llu file opens refused, as something was planted in %s where "
                     "replay would write (%s)\n", static_cast<unsigned long long>(report.refused_files),
                     report.io_dir.c_str(), report.first_refusal.c_str());
    }
}

// Rank 0's exit status: 1 where the timeline or the JSON report could not be written.
int write_outputs(const Report& report, const std::string& timeline_error, const Options& options)
{
    int status = 0;
    if (!timeline_error.empty()) {
        std::fprintf(stderr, "h-replay: %s\n", timeline_error.c_str());
        status = 1;
    }
    if (!options.report_json.empty()) {
        std::ofstream file(options.report_json);
        file << report.json();
        if (!file) {
            std::fprintf(stderr, "h-replay: cannot write %s\n", options.report_json.c_str());
            status = 1;
        }
    }
    return status;
}

int run(int argc, char** argv, int rank, int size)
{
    Options options;
    const std::string usage_error = parse_options(argc, argv, options);
    if (options.help) {
        if (rank == 0) std::fputs(kUsage, stdout);
        return 0;
    }
    if (!all_ranks_ok(usage_error.empty() ? "" : usage_error + "\n" + kUsage, rank, size)) return 2;

    const std::shared_ptr<const DecodeResult> read = replay::load_trace(options.trace);
    if (!all_ranks_ok(trace_obstacle(*read, options, size), rank, size)) return 1;
    const Trace& trace = *read->trace;
    const uint64_t seed = options.seed.value_or(trace.header.seed);
    const Mode mode = choose_mode(trace, seed, rank, size, options.paired);

    const double max_compute = options.max_compute.value_or(replay::default_max_compute(trace.header.traced_seconds));
    replay::TimelineOutput timeline(options.chrome_trace, options.otf2_dir, !options.report_json.empty(),
                                    "h-replay: " + trace.header.command_line, rank, size);
    if (!all_ranks_ok(timeline.open_error(), rank, size)) return 1;
    replay::Watchdog watchdog(rank, stall_limit_for(options, trace, max_compute));
    IoSandbox sandbox;
    if (!all_ranks_ok(make_sandbox(trace, options, rank, sandbox), rank, size)) return 1;
    // Every rank opens the directory rank 0 made; its files are reached from that descriptor.
    std::optional<replay::Sandbox> io_dir;
    if (!sandbox.directory.empty()) io_dir.emplace(sandbox.directory);
    if (!all_ranks_ok(io_dir ? io_dir->error() : "", rank, size)) return 1;
    std::optional<replay::Files> files;
    if (io_dir) files.emplace(*io_dir);
    replay::Executor executor(&watchdog, files ? &*files : nullptr, max_compute);
    PMPI_Barrier(MPI_COMM_WORLD);
    executor.record_into(timeline.timeline(), replay::clock_seconds());
    const double start = MPI_Wtime();
    replay::call_returned();  // the computation before the first call counts from here
    const replay::ScheduleSummary summary = replay::generate_schedule(
        trace, seed, rank, [&](const replay::ScheduledCall& call) { executor.issue(call); },
        replay::ScheduleOptions{mode.mode, options.compute});
    const double seconds = MPI_Wtime() - start;
    const std::string timeline_error = timeline.write(rank, size);

    Report report;  // rank 0's; the other ranks take part in its sums
    sum_over_ranks(executor, summary, files ? &*files : nullptr, seconds, rank, size, report);
    files.reset();
    remove_sandbox(sandbox, options, rank);

    int status = 0;
    if (rank == 0) {
        report.ranks = size;
        report.seed = seed;
        report.compute = options.compute;
        report.traced_seconds = trace.header.traced_seconds;
        report.traced_seconds_in_calls = traced_seconds_in_calls(trace.body, static_cast<size_t>(Op::first_opaque));
        report.max_compute = max_compute;
        report.mode = mode.mode == replay::ReplayMode::causal ? "causal" : "paired";
        report.mode_reason = mode.reason;
        report.io_dir = sandbox.directory;
        report.wait_states = timeline.wait_states_json();
        print_summary(report);
        status = write_outputs(report, timeline_error, options);
    }
    PMPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return status;
}

}  // namespace

#ifdef HTRACE_SIMULATED
// h-replay-smpi's program calls it (smpi_main.cpp): this code is in a library all simulated ranks share.
int htrace::replay::simulated_main(int argc, char** argv)
#else
int main(int argc, char** argv)
#endif
{
    MPI_Init(&argc, &argv);
    int rank = 0;
    int size = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    int status = 1;
    try {
        status = run(argc, argv, rank, size);
    } catch (const std::exception& e) {
        // Only a broken schedule gets here, on some ranks: the others may wait for it, so stop the job.
        std::fprintf(stderr, "h-replay: rank %d: %s\n", rank, e.what());
        std::fflush(stderr);
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Finalize();
    return status;
}
