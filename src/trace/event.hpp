#pragma once
// The trace model: events (one MPI call site), loops over sequences of them, and the whole trace.

#include "trace/operation.hpp"
#include "trace/rank_list.hpp"
#include "trace/site_location.hpp"
#include "trace/value.hpp"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace htrace {

// What a parameter means. Point-to-point peers (peer, source, matched_peer) are stored relative to
// the caller in the communicator, `(peer - me) mod size`; a root as the communicator rank it is (the
// same on every member); both except the symbolic values below.
enum class Role : uint8_t {
    peer,          // destination of a send, requested source of a receive or probe
    tag,
    bytes,         // send side: count x type size (sums for v-variants)
    source,        // the receive side of Sendrecv
    recv_tag,
    recv_bytes,
    root,
    comm,          // communicator id (see capture/communicators.hpp)
    requests,      // how many requests a completion call was given
    completed,     // what a completion call reported: flag, or outcount
    matched_peer,  // the source a wildcard receive actually matched
    matched_tag,   // the tag a wildcard-tag receive actually matched
    new_comm,      // id of the communicator a creation made
    color,         // world rank of the new communicator's rank 0, or kNoComm when the call gave MPI_COMM_NULL
    key,           // the caller's rank in the new communicator
    completed_set, // which pending requests a completion call completed (trace/completion_set.hpp)
    cancelled_set, // which of those had been cancelled (same encoding; only where some had)
    synchronous,   // 1 on the MPI_Start of a request MPI_Ssend_init made (its send is synchronous)
    cancelled_peer, // a completion call that completed a send whose cancel won: its destination (relative),
    cancelled_tag,  //   tag and communicator, one triple per such send, oldest request first, so that
    cancelled_comm, //   replay leaves its message out on both sides
    remote_leader, // an intercommunicator's creation: world rank of the remote group's rank 0 (or kNoComm)
    window,        // one-sided: window id (like communicator ids; a creation's is the new window's)
    target_bytes,  // one-sided: bytes at the target (target count x type size)
    assertion,     // one-sided synchronization's assert argument
    lock_type,     // MPI_Win_lock: kLockExclusive or kLockShared
    file,          // MPI-IO and POSIX I/O: file id (like window ids: the lowest one the rank has not open)
    file_name,     // the file's name, by its key in the header's file names (a pattern where ranks' names show the rank)
    amode,         // MPI_File_open's access mode, or POSIX open's and fopen's (as kFileMode* below)
    offset,        // an explicit offset or a seek's, in bytes (MPI-IO: from the view's displacement)
    whence,        // a seek's origin: kSeekSet, kSeekCur or kSeekEnd
    file_size,     // MPI_File_set_size, _preallocate, _get_size, ftruncate: bytes
    view_disp,     // MPI_File_set_view: the displacement in bytes
    // A view whose filetype is not contiguous bytes, as strided blocks tiled every view_extent bytes:
    // view_blocks blocks of view_block bytes, view_stride bytes apart, the first view_lb bytes into
    // the tile; view_blocks is -1 for a layout that is not such blocks (replayed as contiguous).
    view_lb,
    view_block,
    view_blocks,
    view_stride,
    view_extent,
    buffered,      // 1 on the MPI_Start of a request MPI_Bsend_init made (its send goes through the buffer)
    topology,      // a creation of a communicator with a topology: its key in the header's topologies (or kNoComm)
    thread,        // under MPI_THREAD_MULTIPLE, a call of a thread other than the one that called MPI_Init:
                   // 1, 2 ... in the order the rank's threads first called MPI (the first thread's have none)
    group,         // MPI_Comm_create_group: a key of its group's members (world ranks), the same on each member
};
inline constexpr int kRoleCount = static_cast<int>(Role::group) + 1;

std::string_view role_name(Role role);
bool role_is_peer(Role role);      // a rank: symbolic values print as ANY_SOURCE, PROC_NULL ...
bool role_is_relative(Role role);  // stored as (peer - me) mod size
// Categorical values (communicators, roots, ...) are never turned into histograms.
bool role_is_categorical(Role role);

// Symbolic peers and tags keep their meaning across MPI libraries.
inline constexpr int64_t kAnySource = -1;
inline constexpr int64_t kProcNull = -2;
inline constexpr int64_t kRootSelf = -3;  // MPI_ROOT on an intercommunicator
inline constexpr int64_t kAnyTag = -1;
inline constexpr int64_t kNoComm = -1;
// Access modes and seek origins, kept the same across MPI libraries and systems: MPI-IO's modes, and
// POSIX's truncation, which MPI-IO has not.
inline constexpr int64_t kFileModeReadOnly = 1, kFileModeReadWrite = 2, kFileModeWriteOnly = 4, kFileModeCreate = 8,
                         kFileModeExcl = 16, kFileModeDeleteOnClose = 32, kFileModeUniqueOpen = 64,
                         kFileModeSequential = 128, kFileModeAppend = 256, kFileModeTruncate = 512;
inline constexpr int64_t kSeekSet = 0, kSeekCur = 1, kSeekEnd = 2;
inline constexpr int64_t kWorldComm = 0;  // MPI_COMM_WORLD's id (MPI_COMM_SELF's is 1)
inline constexpr int64_t kLockExclusive = 1;
inline constexpr int64_t kLockShared = 2;

struct Param {
    Role role;
    Value value;
    bool operator==(const Param&) const = default;
};

// Time statistics of an event's calls, in seconds: count, mean, sum of squared deviations, min, max.
struct TimeStats {
    uint64_t count = 0;
    double mean = 0;
    double m2 = 0;
    double min = 0;
    double max = 0;

    // Welford's update: the one-value case of merge, on the path of every call in a loop (inline:
    // see trace/hot_path.hpp).
    void add(double seconds)
    {
        ++count;
        if (count == 1) {
            mean = min = max = seconds;
            m2 = 0;
            return;
        }
        const double delta = seconds - mean;
        mean += delta / double(count);
        m2 += delta * (seconds - mean);
        min = std::min(min, seconds);
        max = std::max(max, seconds);
    }
    void merge(const TimeStats& other);
    // The statistics of `part` of `whole` equal shares (ranks, or iterations), each with the same
    // distribution: fewer calls, the same mean and spread.
    TimeStats share(uint64_t part, uint64_t whole) const;
    double total() const { return mean * double(count); }
    bool operator==(const TimeStats&) const = default;
};

// Some of an event's ranks and their computation time before it, where ranks' times differ.
struct RankCompute {
    RankList ranks;
    TimeStats compute;
    bool operator==(const RankCompute&) const = default;
};

// An event's groups of ranks whose times differ (Event::compute_by_rank): a vector behind one
// pointer, none where the ranks computed alike, as at most events, of which a replaying rank holds
// every one.
class RankComputes {
public:
    RankComputes() = default;
    RankComputes(std::vector<RankCompute> groups)
        : groups_(groups.empty() ? nullptr : std::make_unique<std::vector<RankCompute>>(std::move(groups)))
    {
    }
    RankComputes(std::initializer_list<RankCompute> groups) : RankComputes(std::vector<RankCompute>(groups)) {}
    RankComputes(const RankComputes& other) : RankComputes(other.groups_ ? *other.groups_ : std::vector<RankCompute>{}) {}
    RankComputes(RankComputes&&) noexcept = default;
    RankComputes& operator=(const RankComputes& other) { return *this = RankComputes(other); }
    RankComputes& operator=(RankComputes&&) noexcept = default;

    bool empty() const { return !groups_ || groups_->empty(); }
    size_t size() const { return groups_ ? groups_->size() : 0; }
    const RankCompute* begin() const { return groups_ ? groups_->data() : nullptr; }
    const RankCompute* end() const { return begin() + size(); }
    RankCompute* begin() { return groups_ ? groups_->data() : nullptr; }
    RankCompute* end() { return begin() + size(); }
    const RankCompute& operator[](size_t i) const { return (*groups_)[i]; }
    RankCompute& operator[](size_t i) { return (*groups_)[i]; }
    const RankCompute& front() const { return groups_->front(); }
    void push_back(RankCompute group)
    {
        if (!groups_) groups_ = std::make_unique<std::vector<RankCompute>>();
        groups_->push_back(std::move(group));
    }
    void resize(size_t n)
    {
        if (!groups_) groups_ = std::make_unique<std::vector<RankCompute>>();
        groups_->resize(n);
    }
    void clear() { groups_.reset(); }
    bool operator==(const RankComputes& other) const { return std::equal(begin(), end(), other.begin(), other.end()); }

private:
    std::unique_ptr<std::vector<RankCompute>> groups_;
};

struct Event {
    Op op{};
    uint64_t signature = 0;  // call path, equal on every rank (capture/signature.hpp)
    std::vector<Param> params;
    RankList ranks;          // participants (world ranks)
    TimeStats compute;       // over all of them: the computation before each call
    // The time inside each call, from entering the MPI library to its return, over all participants
    // (format 18). Empty where it was not measured: MPI_Finalize (the tracer's merge runs inside it),
    // and traces of older formats.
    TimeStats in_call;
    // Empty where the ranks computed alike; else the ranks in groups whose times differ (a load
    // imbalance), each rank in one group, so that replay computes each rank's own time.
    RankComputes compute_by_rank;

    const Value* find(Role role) const;
    // What `rank` computed before each call: its group's statistics, or the event's.
    const TimeStats& compute_of(Rank rank) const;
    bool operator==(const Event&) const = default;
};

struct Node;
using Sequence = std::vector<Node>;

struct Loop {
    Value iterations;
    Sequence body;
    // How many nodes at the end of the body each participant's last iteration leaves out: a run of
    // steps with something between them, E (X E)^n, is n + 1 iterations of E X, the last without X.
    uint32_t last_leaves_out = 0;
    bool operator==(const Loop&) const = default;
};

struct Node {
    std::variant<Event, Loop> item;

    bool is_event() const { return std::holds_alternative<Event>(item); }
    bool is_loop() const { return std::holds_alternative<Loop>(item); }
    Event& event() { return std::get<Event>(item); }
    const Event& event() const { return std::get<Event>(item); }
    Loop& loop() { return std::get<Loop>(item); }
    const Loop& loop() const { return std::get<Loop>(item); }
    bool operator==(const Node&) const = default;
};

// Whether some event of `node` (itself, or one in a loop's body, nested loops included) satisfies
// `pred`.
template <class Predicate>
bool any_event(const Node& node, const Predicate& pred)
{
    if (node.is_event()) return pred(node.event());
    for (const auto& inner : node.loop().body) {
        if (any_event(inner, pred)) return true;
    }
    return false;
}

template <class Predicate>
bool any_event(const Sequence& seq, const Predicate& pred)
{
    for (const auto& node : seq) {
        if (any_event(node, pred)) return true;
    }
    return false;
}

// Calls `visit` on every event of `seq`, those inside loops (nested too) included, in order.
template <class SequenceT, class Visitor>
void for_each_event(SequenceT& seq, const Visitor& visit)
{
    for (auto& node : seq) {
        if (node.is_loop()) {
            for_each_event(node.loop().body, visit);
        } else {
            visit(node.event());
        }
    }
}

// Where one rank's calls end in a trace h-merge made from partial files (format 16).
struct RankStop {
    Rank rank = 0;
    uint64_t calls = 0;   // MPI calls the rank had made when it wrote its part
    std::string reason;   // why it stopped there: "SIGTERM", "MPI_Abort", "still running (flushed every 5 s)"
    bool operator==(const RankStop&) const = default;
};

// How one of each rank's times spreads over the ranks: the least, with the rank that had it (the
// lowest such rank), the mean, and the most, with its rank.
struct RankSpread {
    double min = 0;
    Rank min_rank = 0;
    double mean = 0;
    double max = 0;
    Rank max_rank = 0;
    bool operator==(const RankSpread&) const = default;
};

// Format 19: where each rank's time from MPI_Init's return to MPI_Finalize's call went, as the tracer measured it on
// every rank, each over all ranks: seconds computing between calls, inside MPI calls other than I/O,
// inside I/O calls (MPI-IO and POSIX); and the shares of the rank's own time (the sum of its three)
// inside MPI and inside I/O calls. Format 21 adds the seconds the tracer spent recording the calls,
// from each call's return to the wrapper handing it back, which the other three leave out (absent in
// older files): a program's timers around a call see it, the trace's time inside the call does not.
struct RankTimes {
    RankSpread computation;
    RankSpread mpi;
    RankSpread io;
    RankSpread mpi_share;
    RankSpread io_share;
    std::optional<RankSpread> tracer;
    bool operator==(const RankTimes&) const = default;
};

struct TraceHeader {
    int32_t ranks = 0;
    int32_t precision = 100;
    HistogramConfig histogram;
    uint64_t seed = 0;
    std::string mpi_library;
    std::string command_line;
    int64_t start_time = 0;      // seconds since the epoch
    double traced_seconds = 0;   // MPI_Init to MPI_Finalize, slowest rank
    // The names of the files the job opened or deleted, by the key events name them with: a name
    // with the rank in it is one pattern for all ranks where at least two ranks' names show it
    // (trace/file_names.hpp).
    std::map<int64_t, std::string> file_names;
    // The topologies of the communicators the job made with one (trace/topology.hpp), by their key.
    std::map<int64_t, std::string> topologies;
    // Format 16: which run made the trace (a random number rank 0 drew at MPI_Init, and its host), so
    // that a file an earlier run left is not taken for this one's.
    uint64_t run_id = 0;
    std::string host;
    // Empty for a trace written at MPI_Finalize. A trace merged from partial files (h-merge) is
    // incomplete: the ranks it holds, each with where it stopped, in rank order; other ranks are absent.
    std::vector<RankStop> stops;
    bool incomplete() const { return !stops.empty(); }
    // Format 17: empty for a traced run. A trace h-extrap made says so, one line each: the traces it
    // came from, the process grid it followed, and the model of each value that changes with the
    // rank count ("event 12 (MPI_Isend) bytes: 131072 * N^-1").
    std::vector<std::string> extrapolation;
    bool extrapolated() const { return !extrapolation.empty(); }
    // Empty in older formats, in an extrapolated trace (no rank ran it), and where the tracer could
    // not measure the time in calls.
    std::optional<RankTimes> rank_times;
    bool operator==(const TraceHeader&) const = default;
};

// A run id as h-dump and the tracer's messages show it: 16 hex digits.
inline std::string format_run_id(uint64_t id)
{
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string text(16, '0');
    for (int i = 15; i >= 0; --i, id >>= 4) text[static_cast<size_t>(i)] = kDigits[id & 15];
    return text;
}

struct Trace {
    TraceHeader header;
    Sequence body;
    // By the events' signatures; a site may have none.
    std::map<uint64_t, SiteLocation> locations;
    bool operator==(const Trace&) const = default;
};

}  // namespace htrace
