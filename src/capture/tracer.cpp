#include "capture/tracer.hpp"

#include "capture/clock.hpp"
#include "capture/communicators.hpp"
#include "capture/config.hpp"
#include "capture/early_end.hpp"
#include "capture/job_summary.hpp"
#include "capture/file_view.hpp"
#include "capture/own_code.hpp"
#include "capture/fortran.hpp"
#include "capture/posix_files.hpp"
#include "capture/python_frames.hpp"
#include "capture/recording_gate.hpp"
#include "capture/signature.hpp"
#include "capture/simulation.hpp"
#include "merge/loop_folding.hpp"
#include "merge/radix_reduce.hpp"
#include "merge/rank_merge.hpp"
#include "trace/completion_set.hpp"
#include "trace/file_names.hpp"
#include "trace/hot_path.hpp"
#include "trace/limits.hpp"
#include "trace/rank_times.hpp"
#include "trace/trace_file.hpp"
#include "trace/utf8.hpp"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace htrace::capture {

HTRACE_HOT uint64_t operation_args(Op op)
{
    switch (op) {
#define HTRACE_OPERATION_ARGS(name, roles) \
    case Op::name:                         \
        return roles;
#include "operation_args.inc"
#undef HTRACE_OPERATION_ARGS
    default:
        return 0;
    }
}

std::atomic<bool> tracing{false};

namespace {

// POSIX I/O is recorded from the thread that started MPI: other threads' are the MPI library's own
// (progress, process management) or interleave with the rank's calls in no order a trace can keep.
HTRACE_RANK_LOCAL bool started_mpi = false;
// Under MPI_THREAD_MULTIPLE, which of the rank's threads calls: 1, 2 ... in the order they first called
// MPI (0: not known yet; the thread that started MPI has none).
HTRACE_RANK_LOCAL int64_t thread_number = 0;

constexpr size_t kOpaqueCount = 0
#define HTRACE_OPAQUE(name) +1
#include "opaque_list.inc"
#undef HTRACE_OPAQUE
    ;

HTRACE_HOT int64_t type_size(MPI_Datatype type)
{
    if (type == MPI_DATATYPE_NULL) return 0;
    int size = 0;
    PMPI_Type_size(type, &size);
    return size;
}

// Loops send the same type over and over: the size of the last one asked about is kept until an
// unmodelled call (MPI_Type_free, MPI_Type_create_..., anything) could have made the handle stand
// for another type.
class TypeSizes {
public:
    int64_t of(MPI_Datatype type)
    {
        if (type != last_type_) {
            last_size_ = type_size(type);
            last_type_ = type;
        }
        return last_size_;
    }
    void forget()
    {
        last_type_ = MPI_DATATYPE_NULL;
        last_size_ = 0;  // what type_size(MPI_DATATYPE_NULL) gives
    }

private:
    MPI_Datatype last_type_ = MPI_DATATYPE_NULL;
    int64_t last_size_ = 0;
};

// A receive posted with a wildcard, waiting for the completion call that says what it matched.
struct WildcardReceive {
    CommInfo comm;
    bool any_source;
    bool any_tag;
};

// A persistent request as its init made it: what each MPI_Start of it sends or receives.
struct PersistentRequest {
    Op init;
    CommInfo comm;
    int peer;
    int tag;
    int64_t bytes;
};

// Where a pending send goes, so that the completion that finds it cancelled can say which message
// never went.
struct SentTo {
    bool send = false;
    int64_t peer = 0;  // relative, as the send's event has it
    int64_t tag = 0;
    int64_t comm = 0;
};

// A message MPI_Mprobe or MPI_Improbe matched, until MPI_Mrecv or MPI_Imrecv receives it.
struct MatchedMessage {
    CommInfo comm;
    int source;
    int tag;
};

// How long the merge at MPI_Finalize took: on the host, and in the traced run's own clock (the
// simulation's, under SimGrid; otherwise the same as the host's).
struct MergeTime {
    double host_seconds;
    double run_seconds;
};

class Tracer {
public:
    bool active() const { return tracing.load(std::memory_order_relaxed); }
    void record(Op op, const CallArgs& args, int rc, double entered, double returned, CallSite site);
    // The job ends here without MPI_Finalize (MPI_Abort, exit): this rank writes its part, and says
    // so where `every_rank` (a cause of its own) or where it is rank 0.
    void end_early(const std::string& why, bool every_rank);

private:
    void start(double entered);
    void stop(double entered, uint64_t signature);
    // This rank's part of what the job's trace says beside its events.
    RankSummary rank_summary(const Sequence& mine, double traced_ticks, double per_tick);
    void print_signature_stats();
    void fail_at_start(const std::string& message, bool print);
    void refuse_shared_copy();
    double seconds_per_tick() const;
    std::string part_path() const { return config_.file + ".part." + std::to_string(world_rank_); }
    void write_part(const std::string& reason);
    // What becomes of the trace file the user finds, said after "no trace written".
    std::string existing_trace_note() const;
    void describe(RecordedCall& call, const CallArgs& args, int rc);
    void describe_on_communicator(RecordedCall& call, const CallArgs& args, int rc, uint64_t present, OperationKind kind);
    void add_point_to_point(RecordedCall& call, const CallArgs& args, const CommInfo& comm, uint64_t present);
    void add_completion(RecordedCall& call, const CallArgs& args);
    void find_completed(Op op, const CallArgs& args, int count);
    void take_completed(const CallArgs& args, int count, int request_index, const MPI_Status* status);
    void add_wildcard_matches(RecordedCall& call);
    void add_cancelled(RecordedCall& call);
    void add_collective(RecordedCall& call, const CallArgs& args, const CommInfo& comm, uint64_t present);
    void add_creation(RecordedCall& call, const CallArgs& args, const CommInfo& comm, int rc);
    void add_idup(RecordedCall& call, const CallArgs& args, const CommInfo& comm, int rc);
    void bind_idups(const std::vector<MPI_Request>& completed);
    void add_window_collective(RecordedCall& call, const CallArgs& args, int rc);
    void add_one_sided(RecordedCall& call, const CallArgs& args, uint64_t present);
    void add_matched(RecordedCall& call, const CommInfo& comm, bool any_source, bool any_tag, const MPI_Status& status);
    void record_starts(RecordedCall& first, const CallArgs& args);
    void add_request_free(RecordedCall& call, const CallArgs& args);
    void add_matched_receive(RecordedCall& call, const CallArgs& args, uint64_t present);
    void add_io(RecordedCall& call, const CallArgs& args, uint64_t present, int rc);
    // The job's file names, topologies, slowest time, ranks' times and call sites' locations come
    // from rank 0's `job`.
    bool write_trace(Sequence merged, const JobSummary& job, MergeTime merge_time);

    // Application threads that call MPI at once (MPI_THREAD_MULTIPLE) take turns with it; the partial
    // writer takes it too, then closes the gate that every recording passes.
    std::mutex mutex_;
    RecordingGate gate_;
    Config config_;
    int world_rank_ = 0;
    int world_size_ = 1;
    MPI_Comm own_comm_ = MPI_COMM_NULL;
    MergeTree merge_tree_;  // over own_comm_
    Communicators comms_;
    LoopFolder folder_;
    std::unordered_map<MPI_Request, std::vector<WildcardReceive>> wildcard_receives_;
    PendingRequests<MPI_Request, SentTo> pending_requests_;
    // Handles are the library's to reuse once freed or received: entries leave with the object.
    std::unordered_map<MPI_Request, PersistentRequest> persistent_;
    std::unordered_map<MPI_Message, MatchedMessage> messages_;
    // Comm_idup calls whose request has not completed: the new handle is read from the application's
    // variable once it has.
    struct PendingIdup {
        MPI_Request request;
        MPI_Comm* slot;
        MPI_Fint* fortran_slot;
        int64_t id;
    };
    std::vector<PendingIdup> pending_idups_;
    // Windows, like communicators: ids the same on every rank for the same creation (the lowest
    // free one), and the communicator their ranks are ranks of.
    struct Window {
        MPI_Win win;
        int64_t id;
        CommInfo comm;
    };
    std::vector<Window> windows_;
    const Window* window(MPI_Win win) const;
    // Open files, like windows, and the size of their view's etype (offsets are in etypes).
    struct File {
        MPI_File fh;
        int64_t id;
        CommInfo comm;
        int64_t etype_bytes;
    };
    std::vector<File> files_;
    File* file(MPI_File fh);
    std::unordered_set<MPI_Request> io_requests_;  // pending requests of non-blocking MPI-IO
    PosixFiles posix_files_;
    uint64_t posix_calls_ = 0;
    // The names this rank opened or deleted, by their key, as it stored them: its own patterns, which
    // stand only where the job confirms them at MPI_Finalize (trace/file_names.hpp).
    std::map<int64_t, std::string> file_names_;
    // The topologies of the communicators this rank made with one, by their key (trace/topology.hpp).
    std::map<int64_t, std::string> topologies_;
    // Scratch of add_completion.
    std::vector<MPI_Request> completed_requests_;
    std::vector<uint32_t> completed_positions_;
    std::vector<SentTo> completed_sends_;
    std::vector<size_t> cancelled_;  // indices in completed_requests_
    std::vector<uint32_t> cancelled_positions_;
    std::vector<int64_t> set_values_;
    struct WildcardMatch {
        size_t completed;  // index in completed_requests_
        WildcardReceive receive;
        MPI_Status status;
    };
    std::vector<WildcardMatch> wildcard_matches_;
    std::vector<uint64_t> opaque_calls_ = std::vector<uint64_t>(kOpaqueCount, 0);
    TypeSizes type_sizes_;
    uint64_t calls_ = 0;
    double started_ = 0;  // ticks
    double calibration_ticks_ = 0;  // read together with calibration_seconds_
    double calibration_seconds_ = 0;
    double last_exit_ = 0;  // ticks
    // From each call's return to last_exit_, summed after MPI_Init: in neither the computation nor the
    // call, so the rank times report it apart (RankTimes::tracer).
    double recording_ticks_ = 0;
    bool threads_ = false;  // the application may call MPI from several threads at once
    int64_t threads_seen_ = 0;  // threads other than the one that started MPI that called it
    void mark_thread(RecordedCall& call);
    int64_t start_time_ = 0;
    uint64_t run_id_ = 0;  // rank 0's, the same on every rank
    std::string host_;
    std::string mpi_library_;
};

// Rank 0 could not write the trace: its process exits non-zero, though the application did not.
std::atomic<bool> trace_lost{false};
// The process that called MPI_Init (a child forked without exec inherits the tracer's state, not its job).
std::atomic<pid_t> tracing_process{0};

HTRACE_INLINE Tracer& tracer()
{
    static Tracer* instance = new Tracer;  // never destroyed: wrappers may run during exit
    return *instance;
}

HTRACE_INLINE int64_t relative_peer(int peer, const CommInfo& comm)
{
    if (peer == MPI_ANY_SOURCE) return kAnySource;
    if (peer == MPI_PROC_NULL) return kProcNull;
    // MPI_ROOT only means something on an intercommunicator (SimGrid's is 0, an ordinary rank).
    if (comm.inter && peer == MPI_ROOT) return kRootSelf;
    if (comm.inter) {
        // A rank of the remote group, relative to the caller's rank in its own group, which may be
        // larger than the remote group.
        if (comm.remote_size <= 0) return peer;
        return ((int64_t(peer) - comm.rank) % comm.remote_size + comm.remote_size) % comm.remote_size;
    }
    if (comm.size <= 0) return peer;
    // Both ranks lie in [0, size): one comparison instead of two divisions on the hot path.
    const int64_t offset = int64_t(peer) - comm.rank;
    return offset < 0 ? offset + comm.size : offset;
}

HTRACE_INLINE int64_t tag_value(int tag) { return tag == MPI_ANY_TAG ? kAnyTag : tag; }

HTRACE_INLINE SentTo sent_to(int peer, int tag, const CommInfo& comm) { return {true, relative_peer(peer, comm), tag_value(tag), comm.id}; }

// How many peers a collective's per-peer arrays cover on one side.
HTRACE_HOT int peer_count(Op op, MPI_Comm comm, bool send_side)
{
    if (comm == MPI_COMM_NULL) return 0;
    if (is_neighbor_collective(op)) {
        int topology = MPI_UNDEFINED;
        PMPI_Topo_test(comm, &topology);
        if (topology == MPI_CART) {
            int dims = 0;
            PMPI_Cartdim_get(comm, &dims);
            return 2 * dims;
        }
        if (topology == MPI_GRAPH) {
            int rank = 0;
            int neighbors = 0;
            PMPI_Comm_rank(comm, &rank);
            PMPI_Graph_neighbors_count(comm, rank, &neighbors);
            return neighbors;
        }
        if (topology == MPI_DIST_GRAPH) {
            int in = 0;
            int out = 0;
            int weighted = 0;
            PMPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted);
            return send_side ? out : in;
        }
        return 0;
    }
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    int size = 0;
    // On an intercommunicator counts go per rank of the other group, but a reduce-scatter's receive
    // counts are per rank of the caller's own group, which receives the other group's results.
    if (inter && !is_one_of(op, {Op::Reduce_scatter, Op::Ireduce_scatter})) {
        PMPI_Comm_remote_size(comm, &size);
    } else {
        PMPI_Comm_size(comm, &size);
    }
    return size;
}

HTRACE_HOT int64_t side_bytes(int count, MPI_Datatype type, const int* counts, const MPI_Datatype* types, int peers)
{
    if (counts == nullptr) return int64_t(count) * type_size(type);
    int64_t total = 0;
    for (int i = 0; i < peers; ++i) total += int64_t(counts[i]) * type_size(types ? types[i] : type);
    return total;
}

std::string command_line()
{
    std::ifstream file("/proc/self/cmdline", std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    for (char& c : all) {
        if (c == '\0') c = ' ';
    }
    while (!all.empty() && all.back() == ' ') all.pop_back();
    return as_valid_utf8(all, limits::kMostHeaderTextBytes);  // what the trace reader takes
}

std::string library_version()
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int length = 0;
    PMPI_Get_library_version(version, &length);
    std::string text(version, static_cast<size_t>(std::max(length, 0)));
    if (auto end = text.find_first_of("\n,"); end != std::string::npos) text.resize(end);
    return as_valid_utf8(text, limits::kMostHeaderTextBytes);
}

// Gives every event its participant and turns clock ticks into seconds.
void finish_events(Sequence& seq, const RankList& ranks, double seconds_per_tick)
{
    for (auto& node : seq) {
        if (node.is_loop()) {
            finish_events(node.loop().body, ranks, seconds_per_tick);
            continue;
        }
        Event& e = node.event();
        e.ranks = ranks;
        e.compute.mean *= seconds_per_tick;
        e.compute.min *= seconds_per_tick;
        e.compute.max *= seconds_per_tick;
        e.compute.m2 *= seconds_per_tick * seconds_per_tick;
        e.in_call.mean *= seconds_per_tick;
        e.in_call.min *= seconds_per_tick;
        e.in_call.max *= seconds_per_tick;
        e.in_call.m2 *= seconds_per_tick * seconds_per_tick;
    }
}

// The handles this MPI library gives every request it completes when made: whatever two requests
// on MPI_PROC_NULL of one kind share (PendingRequests says why that matters).
std::vector<MPI_Request> shared_request_handles(MPI_Comm comm)
{
    std::vector<MPI_Request> shared;
    MPI_Request first[2];
    MPI_Request second[2];
    for (MPI_Request* requests : {first, second}) {
        PMPI_Isend(nullptr, 0, MPI_BYTE, MPI_PROC_NULL, 0, comm, &requests[0]);
        PMPI_Irecv(nullptr, 0, MPI_BYTE, MPI_PROC_NULL, 0, comm, &requests[1]);
    }
    for (int kind = 0; kind < 2; ++kind) {
        if (first[kind] == second[kind] && first[kind] != MPI_REQUEST_NULL) shared.push_back(first[kind]);
    }
    PMPI_Waitall(2, first, MPI_STATUSES_IGNORE);
    PMPI_Waitall(2, second, MPI_STATUSES_IGNORE);
    return shared;
}

}  // namespace



void before_abort(int errorcode) noexcept
{
    try {
        tracer().end_early("called MPI_Abort (error code " + std::to_string(errorcode) + ")", true);
    } catch (...) {
        // The job is ending anyway: MPI_Abort goes ahead.
    }
}

namespace {

// At exit (registered before the application's own handlers, so it runs after them): a rank that
// never called MPI_Finalize writes its part, and rank 0 says so; a process whose trace could not be
// written exits with status 1, stdio flushed.
void at_process_exit()
{
    if (tracing_process.load() != getpid()) return;  // never traced here: nothing to say
    try {
        if (tracer_active()) tracer().end_early("exited without calling MPI_Finalize", false);
    } catch (...) {
    }
    if (trace_lost.load()) {
        std::fflush(nullptr);
        _exit(1);
    }
}

__attribute__((constructor)) void register_exit_handler() { std::atexit(at_process_exit); }

}  // namespace

HTRACE_HOT void record_call(Op op, const CallArgs& args, int rc, double entered, double returned, CallSite site) noexcept
{
    try {
        tracer().record(op, args, rc, entered, returned, site);
    } catch (...) {
        // Out of memory while recording: the application must go on unaffected.
    }
}

// ---- The life of the tracer -----------------------------------------------------------------------

// Under SimGrid every simulated rank needs a tracer of its own, which SMPI's privatization gives it.
// With -no-privatize the ranks would share one and their calls mix: none is traced, before the
// tracer makes a call of its own.
HTRACE_COLD void Tracer::refuse_shared_copy()
{
    static std::atomic<bool> said{false};
    tracing.store(false);
    if (said.exchange(true)) return;
    std::fprintf(stderr, "h-trace: no trace written: the simulated ranks share one copy of the tracer; run smpirun "
                         "with SMPI's privatization (without -no-privatize)\n");
    std::fflush(stderr);
}

HTRACE_COLD void Tracer::fail_at_start(const std::string& message, bool print)
{
    if (print) std::fprintf(stderr, "h-trace: %s\n", message.c_str());
    std::fflush(stderr);
    PMPI_Finalize();
    std::exit(1);
}

HTRACE_COLD void Tracer::start(double entered)
{
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank_);
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size_);
    PMPI_Comm_dup(MPI_COMM_WORLD, &own_comm_);
    // Made here, where the ranks meet anyway: at MPI_Finalize the ranks arrive one by one and wait
    // politely, which a split's blocking collectives cannot.
    merge_tree_ = make_merge_tree(own_comm_);

    // Every rank reads the same environment, so every rank stops on the same error; only rank 0
    // says so. The output directory is checked where the file will be written, on rank 0.
    ConfigResult config = read_config([](const char* name) -> const char* { return std::getenv(name); });
    if (!config.error.empty()) fail_at_start(config.error, world_rank_ == 0);
    config_ = config.config;
    folder_ = LoopFolder(MergeRule{config_.precision, config_.histogram}, world_rank_);
    // Rank 0 says whether the trace can be written, and draws the run's id.
    uint64_t verdict[2] = {1, 0};  // path fine, run id
    std::string path_error;
    if (world_rank_ == 0) {
        path_error = check_output_path(config_.file);
        verdict[0] = path_error.empty() ? 1 : 0;
        std::random_device entropy;
        verdict[1] = (uint64_t(entropy()) << 32 | entropy()) ^ static_cast<uint64_t>(getpid());
    }
    PMPI_Bcast(verdict, 2, MPI_UINT64_T, 0, own_comm_);
    if (verdict[0] == 0) fail_at_start(path_error, world_rank_ == 0);
    run_id_ = verdict[1];
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    host_ = host;
    mpi_library_ = library_version();

    gate_.prepare();
    comms_.start();
    pending_requests_.set_shared_handles(shared_request_handles(own_comm_));
    int level = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&level);
    threads_ = level == MPI_THREAD_MULTIPLE;
    calibration_seconds_ = steady_seconds();
    calibration_ticks_ = now_ticks();
    started_ = calibration_ticks_;  // the traced time runs from MPI_Init's return
    last_exit_ = entered;
    start_time_ = static_cast<int64_t>(std::time(nullptr));
    std::vector<std::string> io_excluded = config_.io_excluded;
    io_excluded.push_back(config_.file);
    posix_files_ = PosixFiles(io_excluded);
    started_mpi = true;
    tracing_process.store(getpid());
    tracing.store(true);

    // Under SimGrid every simulated rank is a context of one process, and SimGrid reports a crash
    // itself: a writer thread and signal handlers per rank would only get in each other's way.
    if (kSimulatedRun) return;
    map_own_code();
    // SIGTERM and SIGINT go to every rank: rank 0 alone says so. A crash is the rank's own.
    EarlyEndHooks hooks;
    hooks.write_part = [this](const std::string& reason) { write_part(reason); };
    hooks.signalled = [this](int signal) {
        if (world_rank_ != 0) return;
        std::fprintf(stderr, "h-trace: no trace written: rank 0 got %s before MPI_Finalize; each rank wrote its calls "
                     "so far to %s.part.RANK (h-merge them)%s\n",
                     signal_name(signal).c_str(), config_.file.c_str(), existing_trace_note().c_str());
        std::fflush(stderr);
    };
    start_early_end(config_.flush_seconds, std::move(hooks),
                    "h-trace: no trace written: rank " + std::to_string(world_rank_) + " got ");
}

double Tracer::seconds_per_tick() const
{
    if (kSimulatedRun) return 1.0;  // the clock is MPI_Wtime already
    return (steady_seconds() - calibration_seconds_) / std::max(1.0, now_ticks() - calibration_ticks_);
}

std::string Tracer::existing_trace_note() const
{
    struct stat st {};
    if (stat(config_.file.c_str(), &st) != 0) return "";
    return "; the " + config_.file + " there is an earlier run's (this run's id is " + format_run_id(run_id_) + ")";
}

// On the partial writer's thread: this rank's calls so far, as a trace of its own whose header says
// where it stopped; h-merge joins the ranks' parts.
HTRACE_COLD void Tracer::write_part(const std::string& reason)
{
    Trace part;
    double traced_ticks = 0;
    double recording_ticks = 0;
    {
        std::lock_guard lock(mutex_);
        ClosedGate closed(gate_);
        if (!active()) return;
        part.body = folder_.snapshot();
        // A rank's own patterns stand only where others confirm them: alone, its names are literal.
        const FileNameDecision alone;
        FileNameCensus census;
        for (const auto& [key, stored] : file_names_) census.add(stored, world_rank_);
        rename_file_names(part.body, renamed_file_name_keys(file_names_, world_rank_, alone));
        part.header.file_names = census.decided_names(alone);
        part.header.topologies = topologies_;
        part.header.stops.push_back({world_rank_, calls_, reason});
        traced_ticks = now_ticks() - started_;
        recording_ticks = recording_ticks_;
    }
    const double per_tick = seconds_per_tick();
    finish_events(part.body, RankList(world_rank_), per_tick);
    part.header.ranks = world_size_;
    part.header.precision = config_.precision;
    part.header.histogram = config_.histogram;
    part.header.mpi_library = mpi_library_;
    part.header.command_line = command_line();
    part.header.start_time = start_time_;
    part.header.traced_seconds = traced_ticks * per_tick;
    part.header.rank_times = own_rank_times(part.body, world_rank_, recording_ticks * per_tick);
    part.locations = site_locations();
    part.header.run_id = run_id_;
    part.header.host = host_;
    const std::string error = write_trace_file(part_path(), part);
    if (!error.empty()) std::fprintf(stderr, "h-trace: rank %d: cannot write %s: %s\n", world_rank_, part_path().c_str(), error.c_str());
}

HTRACE_COLD void Tracer::end_early(const std::string& why, bool every_rank)
{
    if (!active() || getpid() != tracing_process.load()) return;
    // The launcher answers a rank's exit by sending SIGTERM to the others: here it waits until this
    // rank has written its part and said why it ended, then takes the signal as it would have.
    sigset_t stops;
    sigset_t before;
    sigemptyset(&stops);
    sigaddset(&stops, SIGTERM);
    sigaddset(&stops, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stops, &before);
    struct RestoreMask {
        sigset_t mask;
        ~RestoreMask() { pthread_sigmask(SIG_SETMASK, &mask, nullptr); }
    } restore{before};
    write_part_now(why);
    stop_early_end();
    tracing.store(false);  // nothing after this is this run's trace (and exit must not end it again)
    if (!every_rank && world_rank_ != 0) return;
    const std::string where = every_rank ? "its calls so far are in " + part_path()
                                         : "each rank's calls so far are in " + config_.file + ".part.RANK (h-merge them)";
    std::fprintf(stderr, "h-trace: no trace written: rank %d %s; %s%s\n", world_rank_, why.c_str(), where.c_str(),
                 existing_trace_note().c_str());
    std::fflush(stderr);
}

HTRACE_INLINE void Tracer::record(Op op, const CallArgs& args, int rc, double entered, double returned, CallSite site)
{
    if (is_posix_io(op) && !started_mpi) return;
    // Before the lock: Python frames are read under the GIL, and a thread holding the GIL may be
    // waiting for the lock. The standard streams' calls (print, a traceback) are never recorded.
    PythonCallSite python;
    if (python_possible() && !(is_posix_io(op) && !is_posix_open(op) && args.fd <= STDERR_FILENO)) {
        python = python_call_site();
    }
    if (op == Op::Init || op == Op::Init_thread) {
        if (rc != MPI_SUCCESS) return;
        if (ranks_share_globals()) {
            refuse_shared_copy();
            return;
        }
        std::lock_guard lock(mutex_);
        start(entered);
    }
    if (op == Op::Finalize) {
        if (!active()) return;
        // Before the lock: a partial write in progress needs it to finish.
        stop_early_end();
        std::lock_guard lock(mutex_);
        if (!active()) return;
        stop(entered, call_signature(python, site));
        return;
    }
    // Held while the call is added: the partial writer copies the rank's state only outside it.
    std::unique_lock<std::mutex> serialized;
    if (threads_) serialized = std::unique_lock(mutex_);
    InsideGate inside(gate_);
    if (!active()) return;
    RecordedCall call;
    call.op = op;
    if (is_posix_io(op)) {
        std::vector<int64_t> mpi_file_ids;  // only an open needs them: no allocation on every read or write
        if (is_posix_open(op)) {
            for (const auto& f : files_) mpi_file_ids.push_back(f.id);
        }
        const bool importing = python.importing && !config_.python_imports;
        if (!posix_files_.describe(call, args, rc, mpi_file_ids, file_names_, world_rank_, importing)) return;
    }
    call.signature = call_signature(python, site);
    call.compute_seconds = std::max(0.0, entered - last_exit_);
    call.in_call_seconds = std::max(0.0, returned - entered);
    if (is_posix_io(op)) {
        folder_.append(call);
        ++posix_calls_;
    } else if (operation_kind(op) == OperationKind::start && rc == MPI_SUCCESS) {
        record_starts(call, args);
        ++calls_;
    } else {
        describe(call, args, rc);
        mark_thread(call);
        folder_.append(call);
        ++calls_;
    }
    if (static_cast<size_t>(op) >= static_cast<size_t>(Op::first_opaque)) {
        type_sizes_.forget();
        const auto index = static_cast<size_t>(op) - static_cast<size_t>(Op::first_opaque);
        if (index < opaque_calls_.size()) ++opaque_calls_[index];
    }
    const double exit = now_ticks();
    if (op != Op::Init && op != Op::Init_thread) recording_ticks_ += exit - returned;
    last_exit_ = exit;
}

namespace {

// Rank 0 says how many calls the job recorded, of which kinds, and which it left out. `totals` as
// RankSummary::counts has them: the opaque operations', then POSIX calls of imports, unseen POSIX
// calls, POSIX calls and MPI calls.
HTRACE_COLD void report_recorded_calls(const std::vector<uint64_t>& totals)
{
    std::fprintf(stderr, "h-trace: %llu MPI calls recorded", static_cast<unsigned long long>(totals.back()));
    const uint64_t posix = totals[totals.size() - 2];
    const uint64_t unseen = totals[totals.size() - 3];
    const uint64_t imports = totals[totals.size() - 4];
    const size_t opaque_kinds = totals.size() - 4;
    uint64_t opaque = 0;
    for (size_t i = 0; i < opaque_kinds; ++i) opaque += totals[i];
    if (opaque > 0) {
        std::fprintf(stderr, ", %llu of them by name only:", static_cast<unsigned long long>(opaque));
        for (size_t i = 0; i < opaque_kinds; ++i) {
            if (totals[i] == 0) continue;
            const auto name = operation_name(opaque_operation(static_cast<uint32_t>(i)));
            std::fprintf(stderr, " %.*s x%llu", static_cast<int>(name.size()), name.data(),
                         static_cast<unsigned long long>(totals[i]));
        }
    }
    std::fprintf(stderr, "\n");
    if (posix > 0) std::fprintf(stderr, "h-trace: %llu POSIX I/O calls recorded\n", static_cast<unsigned long long>(posix));
    if (imports > 0) {
        std::fprintf(stderr, "h-trace: %llu POSIX I/O calls of Python's imports left out (HTRACE_PYTHON_IMPORTS=1 keeps them)\n",
                     static_cast<unsigned long long>(imports));
    }
    if (unseen > 0) {
        std::fprintf(stderr,
                     "h-trace: %llu POSIX I/O calls on files opened before MPI_Init (or not by open, creat or "
                     "fopen) not recorded\n",
                     static_cast<unsigned long long>(unseen));
    }
}

}  // namespace

HTRACE_COLD RankSummary Tracer::rank_summary(const Sequence& mine, double traced_ticks, double per_tick)
{
    RankSummary summary;
    summary.traced_seconds = traced_ticks * per_tick;
    summary.cancels_requests = cancels_requests(mine);
    summary.counts = opaque_calls_;
    summary.counts.push_back(posix_files_.import_calls());
    summary.counts.push_back(posix_files_.unseen_calls());
    summary.counts.push_back(posix_calls_);
    summary.counts.push_back(calls_);
    summary.file_names = file_names_;
    summary.topologies = topologies_;
    summary.rank_times = own_rank_times(mine, world_rank_, recording_ticks_ * per_tick);
    summary.locations = site_locations();
    return summary;
}

HTRACE_COLD void Tracer::stop(double entered, uint64_t signature)
{
    RecordedCall finalize;
    finalize.op = Op::Finalize;
    finalize.signature = signature;
    finalize.compute_seconds = std::max(0.0, entered - last_exit_);
    folder_.append(finalize);
    ++calls_;
    tracing.store(false);

    const double per_tick = seconds_per_tick();
    Sequence mine = folder_.finish();
    finish_events(mine, RankList(world_rank_), per_tick);
    JobSummary job = summarize_job(rank_summary(mine, entered - started_, per_tick), world_rank_, merge_tree_);
    const double slowest = job.slowest_seconds;
    // Patterns only one rank derived give way to its literal names, in its events too, before the
    // merge compares them (trace/file_names.hpp).
    rename_file_names(mine, job.file_names.renamed);

    const double merge_start = steady_seconds();
    const double merge_start_ticks = now_ticks();
    MergeRule rule{config_.precision, config_.histogram};
    rule.significant_compute_seconds = significant_compute_seconds(slowest);
    ReduceResult reduced = reduce_over_tree(std::move(mine), merge_tree_, rule, job.cancels_requests);
    const MergeTime merge_time{steady_seconds() - merge_start, (now_ticks() - merge_start_ticks) * seconds_per_tick()};
    int written = 0;
    if (world_rank_ == 0) {
        if (!reduced.error.empty()) std::fprintf(stderr, "h-trace: merge: %s\n", reduced.error.c_str());
        if (reduced.merged) {
            written = write_trace(std::move(*reduced.merged), job, merge_time) ? 1 : 0;
        }
        trace_lost.store(written == 0);
        report_recorded_calls(job.counts);
    }
    if (config_.stats) print_signature_stats();
    // Partial files (HTRACE_FLUSH_SECONDS) go once the trace stands in their place. Meanwhile the
    // other ranks sleep rather than spin in MPI_Finalize: rank 0 is still writing.
    broadcast_politely(&written, 1, MPI_INT, own_comm_);
    if (written) unlink(part_path().c_str());
    free_merge_tree(merge_tree_);
    PMPI_Comm_free(&own_comm_);
}

// HTRACE_STATS=1: how often the call-path cache spared an unwind, over all ranks (each rank's
// thread that calls MPI_Finalize).
HTRACE_COLD void Tracer::print_signature_stats()
{
    const SignatureStats mine = signature_stats();
    uint64_t counts[2] = {mine.hits, mine.misses};
    uint64_t totals[2] = {0, 0};
    PMPI_Reduce(counts, totals, 2, MPI_UINT64_T, MPI_SUM, 0, own_comm_);
    if (world_rank_ != 0) return;
    const double lookups = double(totals[0] + totals[1]);
    std::fprintf(stderr, "h-trace: call-path cache: %llu hits, %llu misses (each an unwind), hit rate %.4f%%\n",
                 static_cast<unsigned long long>(totals[0]), static_cast<unsigned long long>(totals[1]),
                 lookups > 0 ? 100.0 * double(totals[0]) / lookups : 0.0);
}

HTRACE_COLD bool Tracer::write_trace(Sequence merged, const JobSummary& job, MergeTime merge_time)
{
    Trace trace;
    trace.header.ranks = world_size_;
    trace.header.precision = config_.precision;
    trace.header.histogram = config_.histogram;
    // One seed for the replay of this trace; replay can override it.
    trace.header.seed = static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()) *
                        0x9E3779B97F4A7C15ull;
    trace.header.mpi_library = mpi_library_;
    trace.header.command_line = command_line();
    trace.header.start_time = start_time_;
    trace.header.traced_seconds = job.slowest_seconds;
    trace.header.file_names = job.file_names.job_names;
    trace.header.topologies = job.topologies;
    trace.header.rank_times = job.rank_times;
    trace.locations = job.locations;
    trace.header.run_id = run_id_;
    trace.header.host = host_;
    trace.body = std::move(merged);
    const double write_start = steady_seconds();
    const std::string error = write_trace_file(config_.file, trace);
    if (!error.empty()) {
        struct stat st {};
        const bool previous = stat(config_.file.c_str(), &st) == 0;
        std::fprintf(stderr, "h-trace: no trace written: %s: %s; %s\n", config_.file.c_str(), error.c_str(),
                     previous ? "the previous one is kept" : "there is none");
        return false;
    }
    const double write_seconds = steady_seconds() - write_start;
    std::error_code size_error;
    const auto bytes = std::filesystem::file_size(config_.file, size_error);
    // Under SimGrid the merge also takes simulated time: what it would take on the simulated platform.
    const std::string simulated = kSimulatedRun ? " (simulated " + std::to_string(merge_time.run_seconds) + " s)" : "";
    std::fprintf(stderr, "h-trace: wrote %s (%d ranks, %ju bytes; merge %.3f s%s, write %.3f s)\n", config_.file.c_str(),
                 world_size_, static_cast<uintmax_t>(size_error ? 0 : bytes), merge_time.host_seconds, simulated.c_str(),
                 write_seconds);
    return true;
}

// ---- From a call to an event ----------------------------------------------------------------------

HTRACE_INLINE void Tracer::describe(RecordedCall& call, const CallArgs& args, int rc)
{
    const Op op = call.op;
    const uint64_t present = operation_args(op);
    const auto kind = operation_kind(op);
    if (kind == OperationKind::opaque || kind == OperationKind::init) return;

    if (kind == OperationKind::completion) {
        add_completion(call, args);
        return;
    }
    if (kind == OperationKind::comm_free) {
        call.add(Role::comm, comms_.remove(args.comm));
        return;
    }
    if (kind == OperationKind::buffer) {
        if (op == Op::Buffer_attach) call.add(Role::bytes, args.buffer_size);
        return;
    }
    if (kind == OperationKind::request_free) {
        add_request_free(call, args);
        return;
    }
    // Whether a cancel did shows where the request completes; a start that failed started nothing.
    if (kind == OperationKind::cancel || kind == OperationKind::start) return;
    if (present & arg::matched_message) {
        if (rc == MPI_SUCCESS && (present & arg::request)) pending_requests_.created(args.request);
        add_matched_receive(call, args, present);
        return;
    }
    if (kind == OperationKind::io) {
        if (rc == MPI_SUCCESS && (present & arg::request)) {
            pending_requests_.created(args.request);
            io_requests_.insert(args.request);
        }
        add_io(call, args, present, rc);
        return;
    }
    if (present & (arg::win | arg::freewin)) {  // on a window: its communicator is the window's
        if (rc == MPI_SUCCESS && (present & arg::request)) pending_requests_.created(args.request);
        if (kind == OperationKind::one_sided) add_one_sided(call, args, present);
        if (kind == OperationKind::collective) add_window_collective(call, args, rc);
        return;
    }
    describe_on_communicator(call, args, rc, present, kind);
}

// A call whose communicator is its own argument, not a window's or file's.
HTRACE_INLINE void Tracer::describe_on_communicator(RecordedCall& call, const CallArgs& args, int rc, uint64_t present,
                                                    OperationKind kind)
{
    const Op op = call.op;
    const CommInfo comm = comms_.lookup(args.comm);
    if (rc == MPI_SUCCESS && (present & arg::request)) {
        pending_requests_.created(args.request,
                                  kind == OperationKind::send ? sent_to(args.peer, args.tag, comm) : SentTo{});
    }
    switch (kind) {
    case OperationKind::send:
    case OperationKind::recv:
    case OperationKind::sendrecv:
    case OperationKind::probe:
        add_point_to_point(call, args, comm, present);
        if (rc == MPI_SUCCESS && op == Op::Irecv && (args.peer == MPI_ANY_SOURCE || args.tag == MPI_ANY_TAG)) {
            wildcard_receives_[args.request].push_back(
                {comm, args.peer == MPI_ANY_SOURCE, args.tag == MPI_ANY_TAG});
        }
        if (rc == MPI_SUCCESS && (present & arg::status) && args.status && (!(present & arg::flag) || args.flag)) {
            const bool any_source = (present & arg::source) ? args.source == MPI_ANY_SOURCE : args.peer == MPI_ANY_SOURCE;
            const int wanted_tag = (present & arg::recvtag) ? args.recvtag : args.tag;
            add_matched(call, comm, any_source, wanted_tag == MPI_ANY_TAG, *args.status);
            if (present & arg::message) {
                messages_[args.message] = {comm, args.status->MPI_SOURCE, args.status->MPI_TAG};
            }
        }
        break;
    case OperationKind::persistent_init:
        add_point_to_point(call, args, comm, present);
        if (rc == MPI_SUCCESS) {
            persistent_[args.request] = {call.op, comm, args.peer, args.tag,
                                         (present & arg::count) ? int64_t(args.count) * type_sizes_.of(args.datatype)
                                                                : int64_t(args.recvcount) * type_sizes_.of(args.recvtype)};
        }
        break;
    case OperationKind::collective:
        if (is_window_collective(op)) {
            add_window_collective(call, args, rc);
        } else {
            add_collective(call, args, comm, present);
        }
        break;
    case OperationKind::comm_create:
        if (op == Op::Comm_idup) {
            add_idup(call, args, comm, rc);
        } else {
            add_creation(call, args, comm, rc);
        }
        break;
    default:
        break;
    }
}

namespace {

// The kind of topology a communicator just made has. SMPI has no MPI_Topo_test (it aborts the
// simulation): under SimGrid the kind follows from the call that made the communicator, a duplicate
// keeping its parent's.
int made_topology_kind(Op op, MPI_Comm made, int parent_kind)
{
    if (!kSimulatedRun) return Communicators::topology_kind(made);
    switch (op) {
    case Op::Cart_create:
    case Op::Cart_sub: return MPI_CART;
    case Op::Graph_create: return MPI_GRAPH;
    case Op::Dist_graph_create:
    case Op::Dist_graph_create_adjacent: return MPI_DIST_GRAPH;
    default: return parent_kind;
    }
}

}  // namespace

HTRACE_COLD void Tracer::add_creation(RecordedCall& call, const CallArgs& args, const CommInfo& comm, int rc)
{
    call.add(Role::comm, comm.id);
    const int parent_topology_kind = comm.topology_kind;  // `comm` may move as communicators are added
    const bool made = rc == MPI_SUCCESS && args.newcomm != MPI_COMM_NULL;
    if (made) {
        const CommInfo& created = comms_.add(args.newcomm);
        call.add(Role::new_comm, created.id);
        call.add(Role::color, comms_.leader_world_rank(args.newcomm));
        call.add(Role::key, created.rank);
    } else {
        call.add(Role::new_comm, kNoComm);
        call.add(Role::color, kNoComm);
        call.add(Role::key, kNoComm);
    }
    // Only the members of a group call MPI_Comm_create_group: they name it by its members, so that the
    // merge knows one creation whatever others each took part in before.
    if (call.op == Op::Comm_create_group) call.add(Role::group, comms_.group_key(args.group));
    // A communicator with a topology (made so, or a duplicate of one) keeps it, for replay's
    // neighbourhood collectives.
    if (is_one_of(call.op, {Op::Cart_create, Op::Cart_sub, Op::Graph_create, Op::Dist_graph_create,
                            Op::Dist_graph_create_adjacent, Op::Comm_dup, Op::Comm_dup_with_info})) {
        const int kind = made ? made_topology_kind(call.op, args.newcomm, parent_topology_kind) : MPI_UNDEFINED;
        if (made) comms_.set_topology_kind(args.newcomm, kind);
        const auto topology = made ? Communicators::topology(args.newcomm, kind) : std::nullopt;
        int64_t key = kNoComm;
        if (topology) {
            const std::string text = topology_text(*topology);
            key = topology_key(text);
            topologies_.emplace(key, text);
        }
        call.add(Role::topology, key);
    }
    // Both groups of an intercommunicator name each other's first rank, so the walk can pair them:
    // one made by MPI_Intercomm_create, or from another (dup, split, create), whose groups MPI pairs
    // the same way.
    if (call.op == Op::Intercomm_create || (comm.inter && call.op != Op::Intercomm_merge)) {
        call.add(Role::remote_leader, made ? comms_.remote_leader_world_rank(args.newcomm) : kNoComm);
    }
}

// A duplicate has its parent's members in its parent's order, known at the call; its handle may
// only be filled in when the request completes, so its id is reserved until then (bind_idups).
HTRACE_COLD void Tracer::add_idup(RecordedCall& call, const CallArgs& args, const CommInfo& comm, int rc)
{
    call.add(Role::comm, comm.id);
    if (rc != MPI_SUCCESS) {
        call.add(Role::new_comm, kNoComm);
        call.add(Role::color, kNoComm);
        call.add(Role::key, kNoComm);
        if (comm.inter) call.add(Role::remote_leader, kNoComm);
        return;
    }
    const int64_t id = comms_.reserve();
    call.add(Role::new_comm, id);
    call.add(Role::color, comms_.leader_world_rank(args.comm));
    call.add(Role::key, comm.rank);
    if (comm.inter) call.add(Role::remote_leader, comms_.remote_leader_world_rank(args.comm));
    pending_idups_.push_back({args.request, args.newcomm_slot, args.newcomm_fortran_slot, id});
}

HTRACE_OUT_OF_LINE void Tracer::bind_idups(const std::vector<MPI_Request>& completed)
{
    for (MPI_Request request : completed) {
        auto found = std::find_if(pending_idups_.begin(), pending_idups_.end(),
                                  [request](const PendingIdup& p) { return p.request == request; });
        if (found == pending_idups_.end()) continue;
        MPI_Comm made = MPI_COMM_NULL;
        if (found->slot != nullptr) made = *found->slot;
        if (found->fortran_slot != nullptr) made = PMPI_Comm_f2c(*found->fortran_slot);
        comms_.bind(found->id, made);
        pending_idups_.erase(found);
    }
}

const Tracer::Window* Tracer::window(MPI_Win win) const
{
    for (const auto& w : windows_) {
        if (w.win == win) return &w;
    }
    return nullptr;
}

// Creating, freeing or fencing a window: the window's communicator (as collectives are merged by
// it), the window id, and the size or the assert argument.
HTRACE_OUT_OF_LINE void Tracer::add_window_collective(RecordedCall& call, const CallArgs& args, int rc)
{
    if (call.op == Op::Win_fence || call.op == Op::Win_free) {
        const Window* w = window(args.win);
        call.add(Role::comm, w ? w->comm.id : kNoComm);
        call.add(Role::window, w ? w->id : kNoComm);
        if (call.op == Op::Win_fence) call.add(Role::assertion, args.assertion);
        if (call.op == Op::Win_free && rc == MPI_SUCCESS && w != nullptr) {
            windows_.erase(windows_.begin() + (w - windows_.data()));
        }
        return;
    }
    const CommInfo comm = comms_.lookup(args.comm);
    call.add(Role::comm, comm.id);
    int64_t id = kNoComm;
    if (rc == MPI_SUCCESS) {
        std::erase_if(windows_, [&](const Window& w) { return w.win == args.newwin; });  // a handle used again
        std::vector<int64_t> used;
        for (const auto& w : windows_) used.push_back(w.id);
        id = lowest_unused(std::move(used), 0);
        windows_.push_back({args.newwin, id, comm});
    }
    call.add(Role::window, id);
    call.add(Role::bytes, call.op == Op::Win_create_dynamic ? 0 : int64_t(args.win_size));
}

// A one-sided call: the target relative to the caller in the window's communicator, like a peer;
// bytes at the origin, at the target, and of a result.
HTRACE_OUT_OF_LINE void Tracer::add_one_sided(RecordedCall& call, const CallArgs& args, uint64_t present)
{
    const Op op = call.op;
    const Window* w = window(args.win);
    const CommInfo comm = w ? w->comm : CommInfo{kNoComm, 0, 0, false, 0};
    if (present & arg::peer) call.add(Role::peer, relative_peer(args.peer, comm));
    if (present & arg::group) {
        // The ranks of the group, as ranks of the window's communicator, each a peer.
        MPI_Group comm_group = MPI_GROUP_NULL;
        PMPI_Win_get_group(args.win, &comm_group);
        int n = 0;
        PMPI_Group_size(args.group, &n);
        std::vector<int> ranks(static_cast<size_t>(std::max(n, 0)));
        std::vector<int> in_comm(ranks.size());
        for (int i = 0; i < n; ++i) ranks[size_t(i)] = i;
        PMPI_Group_translate_ranks(args.group, n, ranks.data(), comm_group, in_comm.data());
        PMPI_Group_free(&comm_group);
        for (int r : in_comm) call.add(Role::peer, relative_peer(r, comm));
    }
    if (present & arg::win_size) call.add(Role::bytes, int64_t(args.win_size));  // MPI_Win_attach
    if (present & arg::datatype) {
        const int64_t element = type_sizes_.of(args.datatype);
        // Fetch_and_op and Compare_and_swap move one element each way.
        const bool single = op == Op::Fetch_and_op || op == Op::Compare_and_swap;
        call.add(Role::bytes, single ? element : int64_t(args.count) * element);
        if (single) call.add(Role::target_bytes, element);
    }
    if (present & arg::target_count) call.add(Role::target_bytes, int64_t(args.target_count) * type_sizes_.of(args.target_type));
    if (present & arg::recvcount) call.add(Role::recv_bytes, int64_t(args.recvcount) * type_sizes_.of(args.recvtype));
    if (present & arg::lock_type) call.add(Role::lock_type, args.lock_type == MPI_LOCK_EXCLUSIVE ? kLockExclusive : kLockShared);
    if (present & arg::assertion) call.add(Role::assertion, args.assertion);
    call.add(Role::comm, comm.id);
    call.add(Role::window, w ? w->id : kNoComm);
}

HTRACE_HOT Tracer::File* Tracer::file(MPI_File fh)
{
    for (auto& f : files_) {
        if (f.fh == fh) return &f;
    }
    return nullptr;
}

namespace {

int64_t portable_amode(int amode)
{
    int64_t out = 0;
    const std::pair<int, int64_t> bits[] = {
        {MPI_MODE_RDONLY, kFileModeReadOnly},   {MPI_MODE_RDWR, kFileModeReadWrite},
        {MPI_MODE_WRONLY, kFileModeWriteOnly},  {MPI_MODE_CREATE, kFileModeCreate},
        {MPI_MODE_EXCL, kFileModeExcl},         {MPI_MODE_DELETE_ON_CLOSE, kFileModeDeleteOnClose},
        {MPI_MODE_UNIQUE_OPEN, kFileModeUniqueOpen}, {MPI_MODE_SEQUENTIAL, kFileModeSequential},
        {MPI_MODE_APPEND, kFileModeAppend},
    };
    for (const auto& [mpi, portable] : bits) {
        if (amode & mpi) out |= portable;
    }
    return out;
}

int64_t portable_whence(int whence)
{
    if (whence == MPI_SEEK_CUR) return kSeekCur;
    if (whence == MPI_SEEK_END) return kSeekEnd;
    return kSeekSet;
}

// A C name as given, or a Fortran one (its length given, trailing blanks not part of it).
std::string file_name_argument(const CallArgs& args)
{
    if (args.filename == nullptr) return {};
    if (args.filename_length < 0) return args.filename;
    std::string name(args.filename, static_cast<size_t>(args.filename_length));
    name.erase(name.find_last_not_of(' ') + 1);
    return name;
}

}  // namespace

// MPI-IO: the file by id (with its communicator: opening, closing and collective reads and writes
// are collective over it), its name as a pattern, and bytes and offsets in bytes.
HTRACE_INLINE void Tracer::add_io(RecordedCall& call, const CallArgs& args, uint64_t present, int rc)
{
    const auto name_key = [&] {
        const std::string pattern = file_name_pattern(file_name_argument(args), world_rank_);
        const int64_t key = file_name_key(pattern);
        file_names_.emplace(key, pattern);
        return key;
    };
    if (call.op == Op::File_open) {
        const CommInfo comm = comms_.lookup(args.comm);
        call.add(Role::comm, comm.id);
        call.add(Role::file_name, name_key());
        call.add(Role::amode, portable_amode(args.amode));
        int64_t id = kNoComm;
        if (rc == MPI_SUCCESS) {
            std::erase_if(files_, [&](const File& f) { return f.fh == args.file; });  // a handle used again
            std::vector<int64_t> used = posix_files_.ids();  // both kinds of file share the ids
            for (const auto& f : files_) used.push_back(f.id);
            id = lowest_unused(std::move(used), 0);
            files_.push_back({args.file, id, comm, 1});
        }
        call.add(Role::file, id);
        return;
    }
    if (call.op == Op::File_delete) {
        call.add(Role::file_name, name_key());
        return;
    }
    File* f = file(args.file);
    call.add(Role::comm, f ? f->comm.id : kNoComm);
    call.add(Role::file, f ? f->id : kNoComm);
    const int64_t etype = f ? f->etype_bytes : 1;
    if (call.op == Op::File_close) {
        if (rc == MPI_SUCCESS && f != nullptr) files_.erase(files_.begin() + (f - files_.data()));
        return;
    }
    if (call.op == Op::File_set_view) {
        call.add(Role::view_disp, int64_t(args.disp));
        const FileViewLayout layout = file_view_layout(args.filetype);
        if (!layout.contiguous) {
            call.add(Role::view_lb, layout.lb);
            call.add(Role::view_block, layout.block);
            call.add(Role::view_blocks, layout.strided ? layout.blocks : -1);
            call.add(Role::view_stride, layout.stride);
            call.add(Role::view_extent, layout.extent);
        }
        if (rc == MPI_SUCCESS && f != nullptr) f->etype_bytes = std::max<int64_t>(type_sizes_.of(args.etype), 1);
        return;
    }
    if (present & (arg::file_size | arg::file_size_out)) call.add(Role::file_size, int64_t(args.file_size));
    if (present & arg::offset) call.add(Role::offset, int64_t(args.offset) * etype);
    if (present & arg::whence) call.add(Role::whence, portable_whence(args.whence));
    if (present & arg::count) call.add(Role::bytes, int64_t(args.count) * type_sizes_.of(args.datatype));
    if (present & arg::recvcount) call.add(Role::recv_bytes, int64_t(args.recvcount) * type_sizes_.of(args.recvtype));
}

HTRACE_INLINE void Tracer::add_point_to_point(RecordedCall& call, const CallArgs& args, const CommInfo& comm, uint64_t present)
{
    call.add(Role::peer, relative_peer(args.peer, comm));
    call.add(Role::tag, tag_value(args.tag));
    if (present & arg::count) call.add(Role::bytes, int64_t(args.count) * type_sizes_.of(args.datatype));
    if (present & arg::source) {
        call.add(Role::source, relative_peer(args.source, comm));
        call.add(Role::recv_tag, tag_value(args.recvtag));
    }
    if (present & arg::recvcount) call.add(Role::recv_bytes, int64_t(args.recvcount) * type_sizes_.of(args.recvtype));
    // Sendrecv_replace receives as many bytes as it sends, into the same buffer.
    if (call.op == Op::Sendrecv_replace) call.add(Role::recv_bytes, int64_t(args.count) * type_sizes_.of(args.datatype));
    if (present & arg::flag) call.add(Role::completed, args.flag);
    call.add(Role::comm, comm.id);
}

HTRACE_HOT void Tracer::add_matched(RecordedCall& call, const CommInfo& comm, bool any_source, bool any_tag,
                         const MPI_Status& status)
{
    if (any_source) call.add(Role::matched_peer, relative_peer(status.MPI_SOURCE, comm));
    if (any_tag) call.add(Role::matched_tag, status.MPI_TAG);
}

// Under MPI_THREAD_MULTIPLE, a call of another thread than the one that started MPI says which: the
// threads' calls interleave in an order of the moment, which a replay in one thread cannot keep.
HTRACE_INLINE void Tracer::mark_thread(RecordedCall& call)
{
    // Calls known by name only move nothing replay re-enacts: other threads may make those freely.
    if (!threads_ || started_mpi || operation_kind(call.op) == OperationKind::opaque) return;
    if (thread_number == 0) thread_number = ++threads_seen_;
    call.add(Role::thread, thread_number);
}

// Each request an MPI_Start or MPI_Startall starts is one MPI_Start event: the send or receive its
// init described, from then on a pending request like an MPI_Isend's or MPI_Irecv's. The first
// event carries the computation before the call.
HTRACE_OUT_OF_LINE void Tracer::record_starts(RecordedCall& first, const CallArgs& args)
{
    const int count = first.op == Op::Start ? 1 : args.request_count;
    for (int i = 0; i < count && args.requests != nullptr; ++i) {
        RecordedCall call;
        call.op = Op::Start;
        call.signature = first.signature;
        call.compute_seconds = i == 0 ? first.compute_seconds : 0;
        call.in_call_seconds = i == 0 ? first.in_call_seconds : 0;
        MPI_Request request = args.requests[i];
        auto found = persistent_.find(request);
        // Open MPI hands a started request back under a new handle where the message it last sent is
        // still in the buffer of buffered sends: the request is known by that one from now on.
        if (args.started != nullptr && args.started[i] != request && args.started[i] != MPI_REQUEST_NULL) {
            if (found != persistent_.end()) {
                PersistentRequest made = found->second;
                persistent_.erase(found);
                found = persistent_.insert_or_assign(args.started[i], made).first;
            }
            request = args.started[i];
        }
        if (found == persistent_.end()) {
            pending_requests_.created(request);
        } else {
            const PersistentRequest& made = found->second;
            pending_requests_.created(request,
                                      made.init == Op::Recv_init ? SentTo{} : sent_to(made.peer, made.tag, made.comm));
            call.add(Role::peer, relative_peer(made.peer, made.comm));
            call.add(Role::tag, tag_value(made.tag));
            call.add(made.init == Op::Recv_init ? Role::recv_bytes : Role::bytes, made.bytes);
            call.add(Role::comm, made.comm.id);
            if (made.init == Op::Ssend_init) call.add(Role::synchronous, 1);
            if (made.init == Op::Bsend_init) call.add(Role::buffered, 1);
            if (made.init == Op::Recv_init && (made.peer == MPI_ANY_SOURCE || made.tag == MPI_ANY_TAG)) {
                wildcard_receives_[request].push_back(
                    {made.comm, made.peer == MPI_ANY_SOURCE, made.tag == MPI_ANY_TAG});
            }
        }
        mark_thread(call);
        folder_.append(call);
    }
}

// A freed request leaves the pending list where it is freed (positions as a completion's), so that
// a later request with the same handle is not taken for it; one still active completes unseen.
HTRACE_COLD void Tracer::add_request_free(RecordedCall& call, const CallArgs& args)
{
    if (args.requests == nullptr) return;
    const MPI_Request request = args.requests[0];
    persistent_.erase(request);
    wildcard_receives_.erase(request);
    completed_requests_.assign(1, request);
    const size_t pending = pending_requests_.size();
    encode_completed_set(pending_requests_.complete(completed_requests_), set_values_, pending);
    for (int64_t value : set_values_) call.add(Role::completed_set, value);
}

// MPI_Mrecv and MPI_Imrecv receive the message their probe matched: its source and tag, exactly.
HTRACE_OUT_OF_LINE void Tracer::add_matched_receive(RecordedCall& call, const CallArgs& args, uint64_t present)
{
    auto found = messages_.find(args.matched_message);
    if (found == messages_.end()) {  // a message probed before tracing began: its size alone is known
        call.add(Role::recv_bytes, int64_t(args.recvcount) * type_sizes_.of(args.recvtype));
        return;
    }
    CallArgs from_message = args;
    from_message.peer = found->second.source;
    from_message.tag = found->second.tag;
    const CommInfo comm = found->second.comm;
    messages_.erase(found);
    add_point_to_point(call, from_message, comm, present);
}

HTRACE_INLINE void Tracer::add_completion(RecordedCall& call, const CallArgs& args)
{
    const Op op = call.op;
    const bool single = op == Op::Wait || op == Op::Test;
    const int count = single ? 1 : args.request_count;
    call.add(Role::requests, count);
    const bool tests = op == Op::Test || op == Op::Testall || op == Op::Testany;
    if (tests) call.add(Role::completed, args.flag);
    if (op == Op::Waitsome || op == Op::Testsome) call.add(Role::completed, args.outcount);

    find_completed(op, args, count);
    if (!pending_idups_.empty()) bind_idups(completed_requests_);
    // Where each request was, and where sends were going, matter only for wildcard matches and
    // cancels: the usual completion copies neither.
    const bool unusual = !wildcard_matches_.empty() || !cancelled_.empty();
    const size_t pending = pending_requests_.size();
    const auto positions = pending_requests_.complete(completed_requests_, unusual ? &completed_positions_ : nullptr,
                                                      cancelled_.empty() ? nullptr : &completed_sends_);
    add_wildcard_matches(call);
    encode_completed_set(positions, set_values_, pending);
    for (int64_t value : set_values_) call.add(Role::completed_set, value);
    if (!cancelled_.empty()) add_cancelled(call);
}

// Which of the given requests completed, and where their statuses are.
HTRACE_INLINE void Tracer::find_completed(Op op, const CallArgs& args, int count)
{
    completed_requests_.clear();
    wildcard_matches_.clear();
    cancelled_.clear();
    if (op == Op::Wait || (op == Op::Test && args.flag)) {
        take_completed(args, count, 0, args.status);
    } else if (op == Op::Waitall || (op == Op::Testall && args.flag)) {
        for (int i = 0; i < count; ++i) take_completed(args, count, i, args.statuses ? &args.statuses[i] : nullptr);
    } else if ((op == Op::Waitany || (op == Op::Testany && args.flag)) && args.index != MPI_UNDEFINED) {
        take_completed(args, count, args.index, args.status);
    } else if ((op == Op::Waitsome || op == Op::Testsome) && args.outcount != MPI_UNDEFINED && args.indices) {
        for (int k = 0; k < args.outcount; ++k) {
            take_completed(args, count, args.indices[k], args.statuses ? &args.statuses[k] : nullptr);
        }
    }
}

// One completed request into completed_requests_, and from its status whether it was cancelled and,
// for a receive posted with a wildcard, what it matched.
inline void Tracer::take_completed(const CallArgs& args, int count, int request_index, const MPI_Status* status)
{
    if (args.requests == nullptr || request_index < 0 || request_index >= count) return;
    const MPI_Request request = args.requests[request_index];
    if (request == MPI_REQUEST_NULL) return;  // inactive before the call: nothing completed
    completed_requests_.push_back(request);
    // A file request's status says nothing of cancels (MPI-IO may leave that field as it was).
    // (Empty unless the program does non-blocking MPI-IO: no hashing on every completion.)
    if (!io_requests_.empty() && io_requests_.erase(request) > 0) return;
    if (status == nullptr) return;
    int cancelled = 0;
    PMPI_Test_cancelled(status, &cancelled);
    if (cancelled) cancelled_.push_back(completed_requests_.size() - 1);
    if (wildcard_receives_.empty()) return;
    auto found = wildcard_receives_.find(request);
    if (found == wildcard_receives_.end()) return;
    const WildcardReceive receive = found->second.back();
    found->second.pop_back();
    if (found->second.empty()) wildcard_receives_.erase(found);
    if (!cancelled) wildcard_matches_.push_back({completed_requests_.size() - 1, receive, *status});
}

// What wildcard receives matched, oldest request first, so replay can tell whose match is whose.
HTRACE_INLINE void Tracer::add_wildcard_matches(RecordedCall& call)
{
    if (wildcard_matches_.size() > 1) {
        std::sort(wildcard_matches_.begin(), wildcard_matches_.end(), [&](const auto& a, const auto& b) {
            return completed_positions_[a.completed] > completed_positions_[b.completed];
        });
    }
    for (const auto& match : wildcard_matches_) {
        add_matched(call, match.receive.comm, match.receive.any_source, match.receive.any_tag, match.status);
    }
}

// Which of the completed requests were cancelled (those still pending before the call), and the
// sends among them, oldest request first: their messages never went.
HTRACE_INLINE void Tracer::add_cancelled(RecordedCall& call)
{
    cancelled_positions_.clear();
    for (size_t k : cancelled_) {
        if (completed_positions_[k] != PendingRequests<MPI_Request>::kNotPending) {
            cancelled_positions_.push_back(completed_positions_[k]);
        }
    }
    std::sort(cancelled_positions_.begin(), cancelled_positions_.end());
    if (cancelled_positions_.empty()) return;
    encode_completed_set(cancelled_positions_, set_values_);
    for (int64_t value : set_values_) call.add(Role::cancelled_set, value);
    std::sort(cancelled_.begin(), cancelled_.end(),
              [&](size_t a, size_t b) { return completed_positions_[a] > completed_positions_[b]; });
    for (size_t k : cancelled_) {
        const SentTo& sent = completed_sends_[k];
        if (!sent.send) continue;
        call.add(Role::cancelled_peer, sent.peer);
        call.add(Role::cancelled_tag, sent.tag);
        call.add(Role::cancelled_comm, sent.comm);
    }
}

HTRACE_INLINE void Tracer::add_collective(RecordedCall& call, const CallArgs& args, const CommInfo& comm, uint64_t present)
{
    const Op op = call.op;
    const bool rooted = (present & arg::root) != 0;
    const bool at_root = rooted && (comm.inter ? args.root == MPI_ROOT : args.root == comm.rank);
    const bool has_send = (present & (arg::count | arg::sendcounts)) != 0;
    const bool has_recv = (present & (arg::recvcount | arg::recvcounts)) != 0;
    bool send_counts = has_send;
    bool recv_counts = has_recv;
    if (is_one_of(op, {Op::Scatter, Op::Scatterv, Op::Iscatter, Op::Iscatterv}) && !at_root) send_counts = false;
    if (is_one_of(op, {Op::Gather, Op::Gatherv, Op::Igather, Op::Igatherv}) && !at_root) recv_counts = false;
    if (has_send && has_recv && args.sendbuf == MPI_IN_PLACE) send_counts = false;
    // The root of a scatter keeps its own part where it is (its receive count is not significant).
    if (at_root && (present & arg::recvbuf) && args.recvbuf == MPI_IN_PLACE) recv_counts = false;

    if (has_send) {
        call.add(Role::bytes,
                  send_counts ? side_bytes(args.count, args.datatype, args.sendcounts, args.sendtypes,
                                           args.sendcounts ? peer_count(op, args.comm, true) : 0)
                              : 0);
    }
    if (has_recv) {
        call.add(Role::recv_bytes,
                  recv_counts ? side_bytes(args.recvcount, args.recvtype, args.recvcounts, args.recvtypes,
                                           args.recvcounts ? peer_count(op, args.comm, false) : 0)
                              : 0);
    }
    // The root is the same rank for every member, so it is kept as it is, not relative.
    if (rooted) {
        call.add(Role::root, comm.inter && args.root == MPI_ROOT ? kRootSelf
                             : args.root == MPI_PROC_NULL         ? kProcNull
                                                                  : args.root);
    }
    call.add(Role::comm, comm.id);
}

}  // namespace htrace::capture

// ---- Fortran helpers that need the tracer's knowledge ---------------------------------------------

namespace htrace::capture {

extern "C" {
// Open MPI's, MPICH's and SimGrid's Fortran MPI_IN_PLACE; weak so that any library (or none) links.
extern int mpi_fortran_in_place_ __attribute__((weak));
extern void* MPIR_F_MPI_IN_PLACE __attribute__((weak));
extern int mpi_in_place_ __attribute__((weak));
}

const void* fortran_buffer(const void* buffer)
{
    if (&mpi_fortran_in_place_ != nullptr && buffer == &mpi_fortran_in_place_) return MPI_IN_PLACE;
    if (&MPIR_F_MPI_IN_PLACE != nullptr && buffer == MPIR_F_MPI_IN_PLACE) return MPI_IN_PLACE;
    if (&mpi_in_place_ != nullptr && buffer == &mpi_in_place_) return MPI_IN_PLACE;
    return buffer;
}

void* library_entry(const char* name)
{
    Dl_info info{};
    void* library = nullptr;
    if (dladdr(reinterpret_cast<void*>(&PMPI_Init), &info) != 0 && info.dli_fname != nullptr) {
        library = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    }
    void* entry = library != nullptr ? dlsym(library, name) : nullptr;
    if (entry == nullptr) {
        std::fprintf(stderr, "h-trace: the MPI library has no %s\n", name);
        std::abort();
    }
    return entry;
}

int send_peer_count(const Call& call) { return peer_count(call.op(), call.args().comm, true); }
int recv_peer_count(const Call& call) { return peer_count(call.op(), call.args().comm, false); }

}  // namespace htrace::capture
