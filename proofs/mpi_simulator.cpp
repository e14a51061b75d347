#include "proofs/mpi_simulator.hpp"

#include "trace/completion_set.hpp"
#include "trace/hash.hpp"

#include <boost/random/uniform_int_distribution.hpp>
#include <boost/random/uniform_real_distribution.hpp>

#include <algorithm>
#include <deque>
#include <map>
#include <stdexcept>
#include <unordered_map>

namespace htrace::proofs::sim {
namespace {

using Engine = boost::random::mt19937_64;
using Kind = Call::Kind;

// Open MPI's one handle for requests complete when made (RunOptions::shared_complete_request).
constexpr uint32_t kSharedCompleteRequest = 0xE0E0E0E0u;
constexpr size_t kNoAction = SIZE_MAX;
constexpr uint64_t kStepLimit = 50'000'000;

bool is_test(Kind kind) { return kind == Kind::test || kind == Kind::testall || kind == Kind::testany || kind == Kind::testsome; }

bool is_collective(Kind kind) { return kind == Kind::collective || kind == Kind::split || kind == Kind::dup; }

[[noreturn]] void misuse(Rank rank, const std::string& what)
{
    throw std::runtime_error("rank " + std::to_string(rank) + ": " + what);
}

// ---- The tracer's view of one rank (src/capture/tracer.cpp and communicators.cpp, without MPI) -------

struct CommInfo {
    int64_t id = 0;
    int32_t size = 1;
    int32_t rank = 0;
};

// A wildcard MPI_Irecv waiting for the completion that says what it matched.
struct WildcardReceive {
    CommInfo comm;
    bool any_source;
    bool any_tag;
};

class TracerMirror {
public:
    explicit TracerMirror(Rank world_rank, int32_t world_size)
    {
        entries_.push_back({0, CommInfo{0, world_size, world_rank}});
        entries_.push_back({1, CommInfo{1, 1, 0}});
    }

    // Communicators::lookup: a communicator not seen before gets the lowest free id.
    CommInfo lookup(const Comm& comm)
    {
        for (const auto& e : entries_) {
            if (e.handle == comm.handle) return e.info;
        }
        return add(comm);
    }

    CommInfo add(const Comm& comm)
    {
        for (const auto& e : entries_) {
            if (e.handle == comm.handle) return e.info;
        }
        entries_.push_back({comm.handle, CommInfo{lowest_free_id(), comm.size, comm.rank}});
        return entries_.back().info;
    }

    int64_t remove(const Comm& comm)
    {
        for (auto it = entries_.begin(); it != entries_.end(); ++it) {
            if (it->handle == comm.handle && it->info.id > 1) {
                const int64_t id = it->info.id;
                entries_.erase(it);
                return id;
            }
        }
        return -1;
    }

    PendingRequests<uint32_t> pending;  // by handle, as the tracer keeps it
    std::unordered_map<uint32_t, std::vector<WildcardReceive>> wildcard_receives;
    // The same list by request: which requests the tracer takes a completion to name.
    std::deque<Request> pending_requests;

private:
    int64_t lowest_free_id() const
    {
        int64_t id = 2;
        std::vector<int64_t> used;
        for (const auto& e : entries_) used.push_back(e.info.id);
        std::sort(used.begin(), used.end());
        for (int64_t u : used) {
            if (u == id) ++id;
        }
        return id;
    }

    struct Entry {
        int32_t handle;
        CommInfo info;
    };
    std::vector<Entry> entries_;
};

// relative_peer() of tracer.cpp.
int64_t relative_peer(int32_t peer, const CommInfo& comm)
{
    if (peer == kAnySourceArg) return kAnySource;
    if (peer == kProcNullArg) return kProcNull;
    if (comm.size <= 0) return peer;
    const int64_t offset = int64_t(peer) - comm.rank;
    return offset < 0 ? offset + comm.size : offset;
}

int64_t tag_value(int64_t tag) { return tag == kAnyTagArg ? kAnyTag : tag; }

void add_matched(RecordedCall& call, const CommInfo& comm, bool any_source, bool any_tag, const Status& status)
{
    if (any_source) call.add(Role::matched_peer, relative_peer(status.source, comm));
    if (any_tag) call.add(Role::matched_tag, status.tag);
}

// ---- The simulated job ----------------------------------------------------------------------------

struct CommObject {
    std::vector<Rank> members;  // world ranks in communicator rank order
};

// One send or receive.
struct P2p {
    bool is_send = false;
    Rank owner = 0;
    size_t comm = 0;    // global communicator
    Rank peer = 0;      // world rank; receives: kAnySource for MPI_ANY_SOURCE; kProcNull
    int64_t tag = 0;    // receives: kAnyTagArg for MPI_ANY_TAG
    int64_t bytes = 0;  // a send's size, a receive's capacity
    bool done = false;
    bool matched = false;
    Status status;      // receives: what matched (source as a rank of the communicator)
};

// A request the program holds: which operation it stands for, and which action created it.
struct LiveRequest {
    Request request;  // as the program holds it
    std::optional<size_t> operation;
    size_t action = kNoAction;
    bool wildcard = false;            // an MPI_Irecv with a wildcard: its action learns the match
    int64_t asked_tag = 0;
    int32_t asked_source = 0;
};

struct Arrival {
    Op op{};
    int32_t root = -1;
    int64_t bytes = 0;
    int64_t color = 0;
    int64_t key = 0;
};

struct Instance {
    std::vector<std::optional<Arrival>> arrivals;  // by member position
    size_t arrived = 0;
    bool done = false;
    std::vector<Comm> made;  // a creation: per member position, its new communicator
};

using InstanceKey = std::pair<size_t, uint64_t>;

struct RankState {
    explicit RankState(Simulator& simulator, Rank rank) : mpi(simulator, rank) {}

    Mpi mpi;
    Task task;
    std::coroutine_handle<> resume_at;
    std::optional<Call> call;
    bool started = false;
    bool issued = false;
    bool finished = false;
    Result result;
    std::vector<size_t> waiting;      // operations the current call waits for
    InstanceKey instance{};           // the collective it waits in
    uint64_t idle_since = UINT64_MAX; // a poll that failed at this progress count
    std::vector<LiveRequest> live;    // oldest first
    uint32_t next_handle = 1;
    std::vector<uint32_t> free_handles;
    uint64_t next_request = 1;
    std::map<int32_t, size_t> comms;  // handle -> global communicator
    int32_t next_comm_handle = 2;
    std::map<size_t, uint64_t> collectives;  // global communicator -> collectives called on it
    std::vector<size_t> posted;       // receives posted here and not matched, in order
    std::vector<size_t> unexpected;   // sends delivered here and not matched, in arrival order
    std::vector<size_t> drop;         // actions to leave out of the truth (receives whose cancel won)
    RankRecord record;
    std::optional<TracerMirror> tracer;
};

}  // namespace

class Simulator {
public:
    Simulator(int32_t ranks, uint64_t seed, const RunOptions& options);
    RunResult run(const Program& program);

    void submit(Rank rank, Call call, std::coroutine_handle<> resume_at);
    Result take_result(Rank rank) { return std::move(state(rank).result); }
    Comm world_of(Rank rank) const { return Comm{0, rank, size_}; }

private:
    RankState& state(Rank rank) { return *ranks_[static_cast<size_t>(rank)]; }
    bool can_advance(Rank rank);
    bool ready(Rank rank);
    void advance(Rank rank);
    void resume(Rank rank);
    void issue(Rank rank);
    void finish(Rank rank);
    void finish_point_to_point(Rank rank, RecordedCall& call);
    Request open_request(Rank rank);
    void receive_action(Rank rank, size_t comm, const CommInfo& info, Request handle, RecordedCall& call, Action& a);
    void sendrecv_action(Rank rank, size_t comm, const CommInfo& info, RecordedCall& call, Action& a);
    Rank world_peer(size_t comm, int32_t peer) const;
    RecordedCall finish_completion(Rank rank);
    std::vector<size_t> choose_completed(Rank rank, const std::vector<size_t>& lives);
    Status completed_status(const LiveRequest& l) const;
    void report_statuses(Rank rank, size_t requests, const std::vector<size_t>& completed,
                         const std::vector<Status>& statuses);
    void release_completed(Rank rank, const std::vector<size_t>& completed, const std::vector<size_t>& completed_live);
    void finish_cancel(Rank rank);
    void finish_collective(Rank rank, RecordedCall& call);
    void finish_comm_creation(Rank rank, RecordedCall& call);
    void finish_free(Rank rank, RecordedCall& call);
    void deliver(size_t channel);

    size_t comm_of(Rank rank, const Comm& comm);
    Rank world_of(size_t comm, int32_t rank_in_comm) const;
    int32_t rank_in(size_t comm, Rank world) const;
    size_t post_send(Rank rank, size_t comm, int32_t dest, int64_t tag, int64_t bytes, bool synchronous);
    size_t post_receive(Rank rank, size_t comm, int32_t source, int64_t tag, int64_t bytes);
    bool fits(const P2p& receive, const P2p& send) const;
    void pair(size_t send, size_t receive);
    Request new_request(Rank rank, bool complete);
    void release_handle(Rank rank, Request request);
    size_t find_live(Rank rank, Request request);
    std::vector<size_t> find_all_live(Rank rank, const std::vector<Request>& requests);
    bool complete_now(Rank rank, size_t live) const;

    // Recording, as the tracer does.
    RecordedCall start_record(Rank rank, Op op);
    void record_point_to_point(Rank rank, size_t live_index);
    RecordedCall record_completion(Rank rank, const std::vector<Request>& before,
                                   const std::vector<size_t>& completed_live, const std::vector<Status>& statuses);
    void count_misnamed(Rank rank, const std::vector<uint32_t>& completed_requests,
                        const std::vector<size_t>& completed_live);
    void add_completion_truth(Rank rank, const std::vector<size_t>& completed_live, const std::vector<Status>& statuses);
    size_t add_action(Rank rank, Action action);

    int32_t size_;
    Engine engine_;
    RunOptions options_;
    int deliver_percent_ = 50;
    std::vector<std::unique_ptr<RankState>> ranks_;
    std::vector<CommObject> comms_;
    std::vector<P2p> operations_;
    std::vector<std::vector<size_t>> channels_;  // per (source, destination): sends in flight, oldest first
    std::vector<size_t> channel_heads_;          // per channel: the first not yet delivered
    std::vector<size_t> busy_channels_;
    std::map<InstanceKey, Instance> instances_;
    uint64_t progress_ = 0;
    uint64_t steps_ = 0;
};

// ---- Mpi: building the calls -----------------------------------------------------------------------

void Mpi::Awaiter::await_suspend(std::coroutine_handle<> resume_at) { simulator->submit(rank, std::move(call), resume_at); }

Result Mpi::Awaiter::await_resume() { return simulator->take_result(rank); }

Comm Mpi::world() const { return simulator_->world_of(rank_); }

Mpi::Awaiter Mpi::make(Call call)
{
    call.compute = pending_compute_;
    pending_compute_ = 0;
    return Awaiter{simulator_, rank_, std::move(call)};
}

namespace {

Call point_to_point_call(Kind kind, Op op, Site site, const Comm& comm, int32_t peer, int64_t tag, int64_t bytes)
{
    Call c;
    c.kind = kind;
    c.op = op;
    c.site = site;
    c.comm = comm;
    c.peer = peer;
    c.tag = tag;
    c.bytes = bytes;
    return c;
}

}  // namespace

Mpi::Awaiter Mpi::send(Site site, Op op, const Comm& comm, int32_t dest, int64_t tag, int64_t bytes)
{
    return make(point_to_point_call(Kind::send, op, site, comm, dest, tag, bytes));
}

Mpi::Awaiter Mpi::isend(Site site, Op op, const Comm& comm, int32_t dest, int64_t tag, int64_t bytes)
{
    return make(point_to_point_call(Kind::isend, op, site, comm, dest, tag, bytes));
}

Mpi::Awaiter Mpi::recv(Site site, const Comm& comm, int32_t source, int64_t tag, int64_t bytes)
{
    return make(point_to_point_call(Kind::recv, Op::Recv, site, comm, source, tag, bytes));
}

Mpi::Awaiter Mpi::irecv(Site site, const Comm& comm, int32_t source, int64_t tag, int64_t bytes)
{
    return make(point_to_point_call(Kind::irecv, Op::Irecv, site, comm, source, tag, bytes));
}

Mpi::Awaiter Mpi::sendrecv(Site site, const Comm& comm, int32_t dest, int64_t send_tag, int64_t send_bytes,
                           int32_t source, int64_t recv_tag, int64_t recv_bytes)
{
    Call c;
    c.kind = Kind::sendrecv;
    c.op = Op::Sendrecv;
    c.site = site;
    c.comm = comm;
    c.peer = dest;
    c.tag = send_tag;
    c.bytes = send_bytes;
    c.source = source;
    c.recv_tag = recv_tag;
    c.recv_bytes = recv_bytes;
    return make(std::move(c));
}

Mpi::Awaiter Mpi::sendrecv_replace(Site site, const Comm& comm, int32_t dest, int64_t send_tag, int32_t source,
                                   int64_t recv_tag, int64_t bytes)
{
    Awaiter a = sendrecv(site, comm, dest, send_tag, bytes, source, recv_tag, bytes);
    a.call.op = Op::Sendrecv_replace;
    return a;
}

namespace {

Call completion_call(Kind kind, Op op, Site site, std::vector<Request>* requests = nullptr)
{
    Call c;
    c.kind = kind;
    c.op = op;
    c.site = site;
    c.requests = requests;
    return c;
}

}  // namespace

Mpi::Awaiter Mpi::wait(Site site, Request& request)
{
    Call c = completion_call(Kind::wait, Op::Wait, site);
    c.request = &request;
    return make(std::move(c));
}

Mpi::Awaiter Mpi::test(Site site, Request& request)
{
    Call c = completion_call(Kind::test, Op::Test, site);
    c.request = &request;
    return make(std::move(c));
}

Mpi::Awaiter Mpi::waitall(Site site, std::vector<Request>& requests)
{
    return make(completion_call(Kind::waitall, Op::Waitall, site, &requests));
}

Mpi::Awaiter Mpi::testall(Site site, std::vector<Request>& requests)
{
    return make(completion_call(Kind::testall, Op::Testall, site, &requests));
}

Mpi::Awaiter Mpi::waitany(Site site, std::vector<Request>& requests)
{
    return make(completion_call(Kind::waitany, Op::Waitany, site, &requests));
}

Mpi::Awaiter Mpi::testany(Site site, std::vector<Request>& requests)
{
    return make(completion_call(Kind::testany, Op::Testany, site, &requests));
}

Mpi::Awaiter Mpi::waitsome(Site site, std::vector<Request>& requests)
{
    return make(completion_call(Kind::waitsome, Op::Waitsome, site, &requests));
}

Mpi::Awaiter Mpi::testsome(Site site, std::vector<Request>& requests)
{
    return make(completion_call(Kind::testsome, Op::Testsome, site, &requests));
}

Mpi::Awaiter Mpi::cancel(Site site, Request& request)
{
    Call c = completion_call(Kind::cancel, operation_by_name("MPI_Cancel"), site);
    c.request = &request;
    return make(std::move(c));
}

Mpi::Awaiter Mpi::test_cancelled(Site site, const Status& status)
{
    Call c = completion_call(Kind::test_cancelled, operation_by_name("MPI_Test_cancelled"), site);
    c.status = status;
    return make(std::move(c));
}

namespace {

Call collective_call(Op op, Site site, const Comm& comm, int32_t root, int64_t bytes)
{
    Call c;
    c.kind = Kind::collective;
    c.op = op;
    c.site = site;
    c.comm = comm;
    c.root = root;
    c.bytes = bytes;
    return c;
}

}  // namespace

Mpi::Awaiter Mpi::barrier(Site site, const Comm& comm) { return make(collective_call(Op::Barrier, site, comm, -1, 0)); }

Mpi::Awaiter Mpi::bcast(Site site, const Comm& comm, int32_t root, int64_t bytes)
{
    return make(collective_call(Op::Bcast, site, comm, root, bytes));
}

Mpi::Awaiter Mpi::allreduce(Site site, const Comm& comm, int64_t bytes)
{
    return make(collective_call(Op::Allreduce, site, comm, -1, bytes));
}

Mpi::Awaiter Mpi::reduce(Site site, const Comm& comm, int32_t root, int64_t bytes)
{
    return make(collective_call(Op::Reduce, site, comm, root, bytes));
}

Mpi::Awaiter Mpi::comm_split(Site site, const Comm& comm, int64_t color, int64_t key)
{
    Call c;
    c.kind = Kind::split;
    c.op = Op::Comm_split;
    c.site = site;
    c.comm = comm;
    c.color = color;
    c.key = key;
    return make(std::move(c));
}

Mpi::Awaiter Mpi::comm_dup(Site site, const Comm& comm)
{
    Call c;
    c.kind = Kind::dup;
    c.op = Op::Comm_dup;
    c.site = site;
    c.comm = comm;
    return make(std::move(c));
}

Mpi::Awaiter Mpi::comm_free(Site site, Comm& comm)
{
    Call c;
    c.kind = Kind::free;
    c.op = Op::Comm_free;
    c.site = site;
    c.comm = comm;
    c.freed = &comm;
    return make(std::move(c));
}

// ---- The scheduler ------------------------------------------------------------------------------------

Simulator::Simulator(int32_t ranks, uint64_t seed, const RunOptions& options)
    : size_(ranks), engine_(seed), options_(options)
{
    deliver_percent_ = static_cast<int>(boost::random::uniform_int_distribution<int>(15, 85)(engine_));
    std::vector<Rank> world;
    for (Rank r = 0; r < ranks; ++r) world.push_back(r);
    comms_.push_back({world});
    for (Rank r = 0; r < ranks; ++r) {
        ranks_.push_back(std::make_unique<RankState>(*this, r));
        comms_.push_back({{r}});
        auto& s = *ranks_.back();
        s.comms = {{0, 0}, {1, comms_.size() - 1}};
        s.tracer.emplace(r, ranks);
        // The tracer learns the shared handle at MPI_Init, from two requests on MPI_PROC_NULL.
        if (options_.shared_complete_request) s.tracer->pending.set_shared_handles({kSharedCompleteRequest});
    }
    channels_.resize(static_cast<size_t>(ranks) * static_cast<size_t>(ranks));
    channel_heads_.assign(channels_.size(), 0);
}

void Simulator::submit(Rank rank, Call call, std::coroutine_handle<> resume_at)
{
    RankState& s = state(rank);
    s.call = std::move(call);
    s.issued = false;
    s.resume_at = resume_at;
}

RunResult Simulator::run(const Program& program)
{
    for (auto& s : ranks_) s->task = program(s->mpi);
    std::vector<int32_t> candidates;
    while (true) {
        candidates.clear();
        bool unfinished = false;
        for (Rank r = 0; r < size_; ++r) {
            if (!state(r).finished) unfinished = true;
            if (can_advance(r)) candidates.push_back(r);
        }
        if (!unfinished) {
            bool unmatched = !busy_channels_.empty();
            for (const auto& s : ranks_) unmatched = unmatched || !s->posted.empty() || !s->unexpected.empty();
            if (unmatched) throw std::runtime_error("the program ends with messages or receives unmatched");
            break;
        }
        const bool can_deliver = !busy_channels_.empty();
        if (candidates.empty() && !can_deliver) {
            std::string stuck;
            for (Rank r = 0; r < size_; ++r) {
                const auto& s = state(r);
                if (s.finished || !s.call) continue;
                stuck += " rank " + std::to_string(r) + " in " + std::string(operation_name(s.call->op)) +
                         (is_test(s.call->kind) ? " (polling)" : "");
                for (size_t op : s.posted) {
                    stuck += ", receive from " + std::to_string(operations_[op].peer) + " tag " +
                             std::to_string(operations_[op].tag);
                }
                for (size_t op : s.unexpected) {
                    stuck += ", message from " + std::to_string(operations_[op].owner) + " tag " +
                             std::to_string(operations_[op].tag);
                }
                stuck += ";";
            }
            throw std::runtime_error("the program deadlocks:" + stuck);
        }
        if (++steps_ > kStepLimit) throw std::runtime_error("the program runs too long");
        const bool deliver_now =
            can_deliver && (candidates.empty() ||
                            boost::random::uniform_int_distribution<int>(0, 99)(engine_) < deliver_percent_);
        if (deliver_now) {
            const size_t pick = boost::random::uniform_int_distribution<size_t>(0, busy_channels_.size() - 1)(engine_);
            deliver(busy_channels_[pick]);
            ++progress_;
            continue;
        }
        const size_t pick = boost::random::uniform_int_distribution<size_t>(0, candidates.size() - 1)(engine_);
        advance(candidates[pick]);
    }
    RunResult result;
    result.steps = steps_;
    for (auto& s : ranks_) {
        // A receive whose cancel won took no message, and replay leaves it out: its cancel could
        // lose there and the receive take a message meant for a later one.
        RankRecord& record = s->record;
        if (!s->drop.empty()) {
            std::vector<size_t> renumbered(record.actions.size(), kNoAction);
            std::vector<Action> kept;
            std::sort(s->drop.begin(), s->drop.end());
            for (size_t i = 0; i < record.actions.size(); ++i) {
                if (std::binary_search(s->drop.begin(), s->drop.end(), i)) continue;
                Action a = std::move(record.actions[i]);
                std::vector<size_t> requests;
                for (size_t k : a.requests) {
                    if (renumbered[k] != kNoAction) requests.push_back(renumbered[k]);
                }
                a.requests = std::move(requests);
                if (a.kind == Action::Kind::complete && a.requests.empty()) continue;
                renumbered[i] = kept.size();
                kept.push_back(std::move(a));
            }
            record.actions = std::move(kept);
        }
        result.ranks.push_back(std::move(record));
    }
    return result;
}

bool Simulator::can_advance(Rank rank)
{
    RankState& s = state(rank);
    if (s.finished) return false;
    if (!s.started) return true;
    if (!s.call) return false;
    if (!s.issued) return !(is_test(s.call->kind) && s.idle_since == progress_);
    return ready(rank);
}

bool Simulator::ready(Rank rank)
{
    RankState& s = state(rank);
    const Call& c = *s.call;
    if (is_collective(c.kind)) return instances_.at(s.instance).done;
    switch (c.kind) {
    case Kind::send:
    case Kind::recv:
    case Kind::sendrecv:
        return std::all_of(s.waiting.begin(), s.waiting.end(), [&](size_t op) { return operations_[op].done; });
    case Kind::wait: {
        if (*c.request == kRequestNull) return true;
        return complete_now(rank, find_live(rank, *c.request));
    }
    case Kind::waitall:
        for (size_t live : find_all_live(rank, *c.requests)) {
            if (live != kNoAction && !complete_now(rank, live)) return false;
        }
        return true;
    case Kind::waitany:
    case Kind::waitsome: {
        bool any_active = false;
        for (size_t live : find_all_live(rank, *c.requests)) {
            if (live == kNoAction) continue;
            any_active = true;
            if (complete_now(rank, live)) return true;
        }
        return !any_active;
    }
    default:
        return true;  // non-blocking
    }
}

void Simulator::advance(Rank rank)
{
    RankState& s = state(rank);
    ++progress_;
    if (!s.started) {
        s.started = true;
        RecordedCall init = start_record(rank, Op::Init);
        init.signature = mix64(0x1417ull);
        s.record.calls.push_back(init);
        s.resume_at = s.task.handle();
        resume(rank);
        return;
    }
    if (!s.issued) {
        issue(rank);
        s.issued = true;
    }
    if (!ready(rank)) return;
    finish(rank);
    if (is_test(s.call->kind) && !s.result.flag && s.result.indices.empty()) {
        --progress_;  // a poll that found nothing changes nothing
        s.idle_since = progress_;
    }
    s.call.reset();
    resume(rank);
}

void Simulator::resume(Rank rank)
{
    RankState& s = state(rank);
    const auto at = s.resume_at;
    s.resume_at = {};
    at.resume();
    if (!s.task.handle().done()) {
        if (!s.call) misuse(rank, "the program suspended outside an MPI call");
        return;
    }
    s.task.await_resume();  // rethrows what the program threw
    if (!s.live.empty()) misuse(rank, "the program ended with requests pending");
    s.finished = true;
    RecordedCall finalize = start_record(rank, Op::Finalize);
    finalize.signature = mix64(0xF1Aull);
    s.record.calls.push_back(finalize);
}

size_t Simulator::comm_of(Rank rank, const Comm& comm)
{
    auto& comms = state(rank).comms;
    auto found = comms.find(comm.handle);
    if (found == comms.end()) misuse(rank, "unknown communicator " + std::to_string(comm.handle));
    return found->second;
}

Rank Simulator::world_of(size_t comm, int32_t rank_in_comm) const
{
    const auto& members = comms_[comm].members;
    if (rank_in_comm < 0 || static_cast<size_t>(rank_in_comm) >= members.size()) {
        throw std::runtime_error("rank " + std::to_string(rank_in_comm) + " is not in the communicator");
    }
    return members[static_cast<size_t>(rank_in_comm)];
}

int32_t Simulator::rank_in(size_t comm, Rank world) const
{
    const auto& members = comms_[comm].members;
    return static_cast<int32_t>(std::find(members.begin(), members.end(), world) - members.begin());
}

Request Simulator::new_request(Rank rank, bool complete)
{
    RankState& s = state(rank);
    uint32_t handle = 0;
    if (complete && options_.shared_complete_request) {
        handle = kSharedCompleteRequest;
    } else if (options_.reuse_request_handles && !s.free_handles.empty()) {
        handle = s.free_handles.back();
        s.free_handles.pop_back();
    } else {
        handle = s.next_handle++;
    }
    return (s.next_request++ << 32) | handle;
}

void Simulator::release_handle(Rank rank, Request request)
{
    if (handle_of(request) == kSharedCompleteRequest) return;
    if (options_.reuse_request_handles) state(rank).free_handles.push_back(handle_of(request));
}

size_t Simulator::find_live(Rank rank, Request request)
{
    const auto& live = state(rank).live;
    for (size_t i = 0; i < live.size(); ++i) {
        if (live[i].request == request) return i;
    }
    misuse(rank, "a request that is not live");
}

// The live requests of an array (kNoAction for MPI_REQUEST_NULL).
std::vector<size_t> Simulator::find_all_live(Rank rank, const std::vector<Request>& requests)
{
    std::vector<size_t> found;
    for (Request request : requests) found.push_back(request == kRequestNull ? kNoAction : find_live(rank, request));
    return found;
}

bool Simulator::complete_now(Rank rank, size_t live) const
{
    const auto& l = ranks_[static_cast<size_t>(rank)]->live[live];
    return !l.operation || operations_[*l.operation].done;
}

size_t Simulator::post_send(Rank rank, size_t comm, int32_t dest, int64_t tag, int64_t bytes, bool synchronous)
{
    P2p op;
    op.is_send = true;
    op.owner = rank;
    op.comm = comm;
    op.tag = tag;
    op.bytes = bytes;
    if (tag < 0) misuse(rank, "a send with a negative tag");
    if (dest == kProcNullArg) {
        op.peer = static_cast<Rank>(kProcNull);
        op.done = true;
        operations_.push_back(op);
        return operations_.size() - 1;
    }
    op.peer = world_of(comm, dest);
    op.done = !synchronous && bytes <= options_.eager_limit;  // buffered: matched later
    operations_.push_back(op);
    const size_t index = operations_.size() - 1;
    const size_t channel = static_cast<size_t>(rank) * static_cast<size_t>(size_) + static_cast<size_t>(op.peer);
    if (channel_heads_[channel] == channels_[channel].size()) busy_channels_.push_back(channel);
    channels_[channel].push_back(index);
    return index;
}

bool Simulator::fits(const P2p& receive, const P2p& send) const
{
    return receive.comm == send.comm && (receive.peer == kAnySource || receive.peer == send.owner) &&
           (receive.tag == kAnyTagArg || receive.tag == send.tag);
}

size_t Simulator::post_receive(Rank rank, size_t comm, int32_t source, int64_t tag, int64_t bytes)
{
    P2p op;
    op.owner = rank;
    op.comm = comm;
    op.tag = tag;
    op.bytes = bytes;
    if (source == kProcNullArg) {
        op.peer = static_cast<Rank>(kProcNull);
        op.done = true;
        op.status = Status{kProcNullArg, kAnyTagArg, 0, false};
        operations_.push_back(op);
        return operations_.size() - 1;
    }
    op.peer = source == kAnySourceArg ? static_cast<Rank>(kAnySource) : world_of(comm, source);
    operations_.push_back(op);
    const size_t index = operations_.size() - 1;
    RankState& s = state(rank);
    for (auto it = s.unexpected.begin(); it != s.unexpected.end(); ++it) {
        if (!fits(operations_[index], operations_[*it])) continue;
        const size_t send = *it;
        s.unexpected.erase(it);
        pair(send, index);
        return index;
    }
    s.posted.push_back(index);
    return index;
}

void Simulator::deliver(size_t channel)
{
    const size_t send = channels_[channel][channel_heads_[channel]++];
    if (channel_heads_[channel] == channels_[channel].size()) {
        channels_[channel].clear();
        channel_heads_[channel] = 0;
        busy_channels_.erase(std::find(busy_channels_.begin(), busy_channels_.end(), channel));
    }
    RankState& d = state(operations_[send].peer);
    for (auto it = d.posted.begin(); it != d.posted.end(); ++it) {
        if (!fits(operations_[*it], operations_[send])) continue;
        const size_t receive = *it;
        d.posted.erase(it);
        pair(send, receive);
        return;
    }
    d.unexpected.push_back(send);
}

void Simulator::pair(size_t send, size_t receive)
{
    P2p& s = operations_[send];
    P2p& r = operations_[receive];
    if (s.bytes > r.bytes) misuse(r.owner, "a message larger than its receive (truncation)");
    s.done = s.matched = true;
    r.done = r.matched = true;
    r.status = Status{rank_in(r.comm, s.owner), s.tag, s.bytes, false};
}

void Simulator::issue(Rank rank)
{
    RankState& s = state(rank);
    Call& c = *s.call;
    s.waiting.clear();
    switch (c.kind) {
    case Kind::send:
    case Kind::isend:
        s.waiting.push_back(post_send(rank, comm_of(rank, c.comm), c.peer, c.tag, c.bytes,
                                      c.op == Op::Ssend || c.op == Op::Issend));
        return;
    case Kind::recv:
    case Kind::irecv:
        s.waiting.push_back(post_receive(rank, comm_of(rank, c.comm), c.peer, c.tag, c.bytes));
        return;
    case Kind::sendrecv: {
        const size_t comm = comm_of(rank, c.comm);
        s.waiting.push_back(post_receive(rank, comm, c.source, c.recv_tag, c.recv_bytes));
        s.waiting.push_back(post_send(rank, comm, c.peer, c.tag, c.bytes, false));
        return;
    }
    case Kind::collective:
    case Kind::split:
    case Kind::dup: {
        const size_t comm = comm_of(rank, c.comm);
        const InstanceKey key{comm, s.collectives[comm]++};
        Instance& instance = instances_[key];
        const std::vector<Rank> members = comms_[comm].members;  // a copy: creations add to comms_
        if (instance.arrivals.empty()) instance.arrivals.resize(members.size());
        const auto position = static_cast<size_t>(rank_in(comm, rank));
        instance.arrivals[position] = Arrival{c.op, c.root, c.bytes, c.color, c.key};
        s.instance = key;
        if (++instance.arrived < members.size()) return;
        const Arrival& first = *instance.arrivals.front();
        for (const auto& a : instance.arrivals) {
            if (a->op != first.op || a->root != first.root || a->bytes != first.bytes) {
                misuse(rank, "members of a communicator call different collectives");
            }
        }
        instance.done = true;
        if (c.kind == Kind::collective) return;
        // Groups by colour, ordered by key then rank in the parent (MPI_Comm_split); a duplicate
        // keeps the parent's order.
        std::map<int64_t, std::vector<std::pair<int64_t, size_t>>> groups;
        for (size_t p = 0; p < members.size(); ++p) {
            const Arrival& a = *instance.arrivals[p];
            if (c.kind == Kind::dup) {
                groups[0].emplace_back(0, p);
            } else if (a.color != kUndefined) {
                groups[a.color].emplace_back(a.key, p);
            }
        }
        instance.made.assign(members.size(), Comm{});
        for (auto& [color, group] : groups) {
            std::stable_sort(group.begin(), group.end());
            CommObject made;
            for (const auto& [key, p] : group) made.members.push_back(members[p]);
            comms_.push_back(made);
            const size_t global = comms_.size() - 1;
            for (size_t i = 0; i < group.size(); ++i) {
                RankState& m = state(members[group[i].second]);
                const int32_t handle = m.next_comm_handle++;
                m.comms[handle] = global;
                instance.made[group[i].second] =
                    Comm{handle, static_cast<int32_t>(i), static_cast<int32_t>(group.size())};
            }
        }
        return;
    }
    default:
        return;  // completions, cancel, free: all at their end
    }
}

// ---- Ending a call: its results, its record, its truth ----------------------------------------------

RecordedCall Simulator::start_record(Rank rank, Op op)
{
    RankState& s = state(rank);
    RecordedCall call;
    call.op = op;
    call.signature = s.call ? s.call->site : 0;
    call.compute_seconds = s.call ? s.call->compute : 0;
    return call;
}

size_t Simulator::add_action(Rank rank, Action action)
{
    auto& actions = state(rank).record.actions;
    actions.push_back(std::move(action));
    return actions.size() - 1;
}

void Simulator::finish(Rank rank)
{
    RankState& s = state(rank);
    s.result = Result{};
    RecordedCall call = start_record(rank, s.call->op);
    switch (s.call->kind) {
    case Kind::send:
    case Kind::isend:
    case Kind::recv:
    case Kind::irecv:
    case Kind::sendrecv:
        finish_point_to_point(rank, call);
        break;
    case Kind::wait:
    case Kind::test:
    case Kind::waitall:
    case Kind::testall:
    case Kind::waitany:
    case Kind::testany:
    case Kind::waitsome:
    case Kind::testsome:
        call = finish_completion(rank);
        break;
    case Kind::cancel:
        finish_cancel(rank);
        break;  // opaque: recorded by name
    case Kind::test_cancelled:
        s.result.flag = s.call->status.cancelled;
        break;
    case Kind::collective:
        finish_collective(rank, call);
        break;
    case Kind::split:
    case Kind::dup:
        finish_comm_creation(rank, call);
        break;
    case Kind::free:
        finish_free(rank, call);
        break;
    }
    s.record.calls.push_back(std::move(call));
}

namespace {

// add_point_to_point of tracer.cpp.
void add_point_to_point(RecordedCall& call, const Call& c, const CommInfo& info)
{
    const bool receives = c.kind == Kind::recv || c.kind == Kind::irecv;
    const bool sendrecv = c.kind == Kind::sendrecv;
    call.add(Role::peer, relative_peer(c.peer, info));
    call.add(Role::tag, tag_value(c.tag));
    if (!receives) call.add(Role::bytes, c.bytes);
    if (sendrecv) {
        call.add(Role::source, relative_peer(c.source, info));
        call.add(Role::recv_tag, tag_value(c.recv_tag));
    }
    // Sendrecv_replace's are its one buffer's, as many as it sends.
    if (receives || sendrecv) call.add(Role::recv_bytes, receives ? c.bytes : c.recv_bytes);
    call.add(Role::comm, info.id);
}

int32_t peer_in_comm(int32_t peer) { return peer == kProcNullArg ? static_cast<int32_t>(kProcNull) : peer; }

}  // namespace

Rank Simulator::world_peer(size_t comm, int32_t peer) const
{
    return peer == kProcNullArg ? static_cast<Rank>(kProcNull) : world_of(comm, peer);
}

void Simulator::finish_point_to_point(Rank rank, RecordedCall& call)
{
    RankState& s = state(rank);
    const Call& c = *s.call;
    const size_t comm = comm_of(rank, c.comm);
    const CommInfo info = s.tracer->lookup(c.comm);
    const bool nonblocking = c.kind == Kind::isend || c.kind == Kind::irecv;
    const bool receives = c.kind == Kind::recv || c.kind == Kind::irecv;
    const Request handle = nonblocking ? open_request(rank) : kRequestNull;
    add_point_to_point(call, c, info);
    // The truth.
    Action a;
    a.op = c.op;
    a.comm = info.id;
    if (receives) {
        receive_action(rank, comm, info, handle, call, a);
    } else if (c.kind != Kind::sendrecv) {
        a.kind = Action::Kind::send;
        a.peer = world_peer(comm, c.peer);
        a.peer_in_comm = peer_in_comm(c.peer);
        a.tag = c.tag;
        a.bytes = c.bytes;
        a.creates_request = nonblocking;
    } else {
        sendrecv_action(rank, comm, info, call, a);
    }
    const size_t action = add_action(rank, std::move(a));
    if (nonblocking) {
        LiveRequest live;
        live.request = handle;
        live.action = action;
        live.asked_source = c.peer;
        live.asked_tag = c.tag;
        live.wildcard = receives && (c.peer == kAnySourceArg || c.tag == kAnyTagArg);
        live.operation = s.waiting.front();
        s.live.push_back(live);
    }
}

// MPI_Isend or MPI_Irecv's request, which the tracer starts to hold pending.
Request Simulator::open_request(Rank rank)
{
    RankState& s = state(rank);
    TracerMirror& tracer = *s.tracer;
    // Open MPI's MPI_Isend and MPI_Irecv hand back its shared request on MPI_PROC_NULL, and
    // MPI_Isend also for a send it completed at once; a receive gets a request of its own.
    const P2p& op = operations_[s.waiting.front()];
    const Request handle = new_request(rank, op.peer == kProcNull || (op.is_send && op.done));
    tracer.pending.created(handle_of(handle));
    if (tracer.pending_requests.size() == PendingRequests<uint32_t>::kKept) tracer.pending_requests.pop_front();
    tracer.pending_requests.push_back(handle);
    s.result.request = handle;
    return handle;
}

// A blocking receive knows what it matched; a non-blocking one leaves its wildcards to the completion.
void Simulator::receive_action(Rank rank, size_t comm, const CommInfo& info, Request handle, RecordedCall& call,
                               Action& a)
{
    RankState& s = state(rank);
    const Call& c = *s.call;
    const P2p& op = operations_[s.waiting.front()];
    const bool any_source = c.peer == kAnySourceArg;
    const bool any_tag = c.tag == kAnyTagArg;
    a.kind = Action::Kind::receive;
    a.bytes = c.bytes;
    a.peer = any_source ? -1 : world_peer(comm, c.peer);
    a.peer_in_comm = any_source ? -1 : peer_in_comm(c.peer);
    a.tag = any_tag ? -1 : c.tag;
    if (c.kind == Kind::recv) {
        s.result.status = op.status;
        add_matched(call, info, any_source, any_tag, op.status);
        if (any_source) {
            a.peer = world_peer(comm, op.status.source);
            a.peer_in_comm = peer_in_comm(op.status.source);
        }
        if (any_tag) a.tag = op.status.tag;
        if (any_source || any_tag) ++s.record.wildcard_matches;
    } else {
        a.creates_request = true;
        if (any_source || any_tag) s.tracer->wildcard_receives[handle_of(handle)].push_back({info, any_source, any_tag});
    }
}

void Simulator::sendrecv_action(Rank rank, size_t comm, const CommInfo& info, RecordedCall& call, Action& a)
{
    RankState& s = state(rank);
    const Call& c = *s.call;
    const P2p& op = operations_[s.waiting.front()];
    s.result.status = op.status;
    const bool any_source = c.source == kAnySourceArg;
    const bool any_tag = c.recv_tag == kAnyTagArg;
    add_matched(call, info, any_source, any_tag, op.status);
    if (any_source || any_tag) ++s.record.wildcard_matches;
    a.kind = Action::Kind::sendrecv;
    a.peer = world_peer(comm, c.peer);
    a.peer_in_comm = peer_in_comm(c.peer);
    a.tag = c.tag;
    a.bytes = c.bytes;
    const int32_t from = any_source ? op.status.source : c.source;
    a.source = world_peer(comm, from);
    a.source_in_comm = peer_in_comm(from);
    a.recv_tag = any_tag ? op.status.tag : c.recv_tag;
    a.recv_bytes = c.recv_bytes;
}

RecordedCall Simulator::finish_completion(Rank rank)
{
    RankState& s = state(rank);
    const Call& c = *s.call;
    const bool single = c.kind == Kind::wait || c.kind == Kind::test;
    const std::vector<Request> before = single ? std::vector<Request>{*c.request} : *c.requests;
    const std::vector<size_t> lives = find_all_live(rank, before);
    const std::vector<size_t> completed = choose_completed(rank, lives);  // indices into `before`
    std::vector<Status> statuses;
    std::vector<size_t> completed_live;
    for (size_t i : completed) {
        statuses.push_back(completed_status(s.live[lives[i]]));
        completed_live.push_back(lives[i]);
    }
    report_statuses(rank, before.size(), completed, statuses);
    RecordedCall call = record_completion(rank, before, completed_live, statuses);
    release_completed(rank, completed, completed_live);
    if (is_test(c.kind) && completed.empty()) ++s.record.failed_tests;
    return call;
}

// Which requests this call completes, as MPI decides; sets the flag and indices it reports.
std::vector<size_t> Simulator::choose_completed(Rank rank, const std::vector<size_t>& lives)
{
    RankState& s = state(rank);
    std::vector<size_t> completed;
    std::vector<size_t> active;
    std::vector<size_t> complete;
    for (size_t i = 0; i < lives.size(); ++i) {
        if (lives[i] == kNoAction) continue;
        active.push_back(i);
        if (complete_now(rank, lives[i])) complete.push_back(i);
    }
    switch (s.call->kind) {
    case Kind::wait:
    case Kind::waitall:
        completed = complete;  // ready() waited for all
        s.result.flag = true;
        break;
    case Kind::test:
    case Kind::testall:
        s.result.flag = complete.size() == active.size();
        if (s.result.flag) completed = complete;
        break;
    case Kind::waitany:
    case Kind::testany:
        if (active.empty()) {
            s.result.flag = true;  // no active request: index MPI_UNDEFINED
        } else if (!complete.empty()) {
            const size_t pick = boost::random::uniform_int_distribution<size_t>(0, complete.size() - 1)(engine_);
            completed = {complete[pick]};
            s.result.flag = true;
            s.result.index = static_cast<int32_t>(complete[pick]);
        }
        break;
    default:  // waitsome, testsome
        if (active.empty()) {
            s.result.index = static_cast<int32_t>(kUndefined);  // outcount MPI_UNDEFINED
            misuse(rank, "Waitsome or Testsome without an active request");
        }
        completed = complete;
        for (size_t i : completed) s.result.indices.push_back(static_cast<int32_t>(i));
        break;
    }
    return completed;
}

Status Simulator::completed_status(const LiveRequest& l) const
{
    Status status = l.operation ? operations_[*l.operation].status : Status{};
    if (l.operation && operations_[*l.operation].is_send) status = Status{kProcNullArg, kAnyTagArg, 0, false};
    if (l.operation && !operations_[*l.operation].is_send && !operations_[*l.operation].matched &&
        operations_[*l.operation].peer != kProcNull) {
        status.cancelled = true;
    }
    return status;
}

void Simulator::report_statuses(Rank rank, size_t requests, const std::vector<size_t>& completed,
                                const std::vector<Status>& statuses)
{
    RankState& s = state(rank);
    const Kind kind = s.call->kind;
    if (kind == Kind::wait || kind == Kind::test) {
        if (!statuses.empty()) s.result.status = statuses.front();
    } else if (kind == Kind::waitall || kind == Kind::testall) {
        s.result.statuses.assign(requests, Status{});
        for (size_t k = 0; k < completed.size(); ++k) s.result.statuses[completed[k]] = statuses[k];
    } else if (kind == Kind::waitany || kind == Kind::testany) {
        if (!statuses.empty()) s.result.status = statuses.front();
    } else {
        s.result.statuses = statuses;
    }
}

// The requests leave the live list and the program's variables.
void Simulator::release_completed(Rank rank, const std::vector<size_t>& completed,
                                  const std::vector<size_t>& completed_live)
{
    RankState& s = state(rank);
    const Call& c = *s.call;
    // Highest index first, so the others stay put.
    std::vector<size_t> order = completed_live;
    std::sort(order.rbegin(), order.rend());
    for (size_t live : order) {
        release_handle(rank, s.live[live].request);
        s.live.erase(s.live.begin() + static_cast<std::ptrdiff_t>(live));
    }
    for (size_t i : completed) {
        if (c.kind == Kind::wait || c.kind == Kind::test) {
            *c.request = kRequestNull;
        } else {
            (*c.requests)[i] = kRequestNull;
        }
    }
}

void Simulator::finish_cancel(Rank rank)
{
    RankState& s = state(rank);
    const size_t live = find_live(rank, *s.call->request);
    const LiveRequest& l = s.live[live];
    if (!l.operation || operations_[*l.operation].is_send) misuse(rank, "cancels a request that is not a receive");
    P2p& op = operations_[*l.operation];
    if (!op.done) {
        ++s.record.cancelled;
        op.done = true;  // not matched yet: cancelled
        op.status.cancelled = true;
        auto& posted = s.posted;
        posted.erase(std::find(posted.begin(), posted.end(), *l.operation));
    }
}

void Simulator::finish_collective(Rank rank, RecordedCall& call)
{
    RankState& s = state(rank);
    const Call& c = *s.call;
    const CommInfo info = s.tracer->lookup(c.comm);
    Action a;
    a.kind = Action::Kind::collective;
    a.op = c.op;
    a.comm = info.id;
    if (c.op != Op::Barrier) {
        call.add(Role::bytes, c.bytes);
        a.bytes = c.bytes;
    }
    if (c.op == Op::Bcast || c.op == Op::Reduce) {
        call.add(Role::root, c.root);
        a.root = c.root;
    }
    call.add(Role::comm, info.id);
    add_action(rank, std::move(a));
}

void Simulator::finish_comm_creation(Rank rank, RecordedCall& call)
{
    RankState& s = state(rank);
    const Call& c = *s.call;
    TracerMirror& tracer = *s.tracer;
    const CommInfo parent = tracer.lookup(c.comm);
    const Instance& instance = instances_.at(s.instance);
    const Comm made = instance.made[static_cast<size_t>(rank_in(comm_of(rank, c.comm), rank))];
    s.result.comm = made;
    call.add(Role::comm, parent.id);
    Action a;
    a.kind = Action::Kind::create_comm;
    a.op = c.kind == Kind::dup ? Op::Comm_dup : Op::Comm_split;
    a.comm = parent.id;
    if (made.valid()) {
        const CommInfo created = tracer.add(made);
        const auto& members = comms_[comm_of(rank, made)].members;
        call.add(Role::new_comm, created.id);
        call.add(Role::color, members.front());
        call.add(Role::key, created.rank);
        a.new_comm = created.id;
        a.members = members;
    } else {
        call.add(Role::new_comm, kNoComm);
        call.add(Role::color, kNoComm);
        call.add(Role::key, kNoComm);
        a.new_comm = kNoComm;
    }
    add_action(rank, std::move(a));
}

void Simulator::finish_free(Rank rank, RecordedCall& call)
{
    RankState& s = state(rank);
    const Call& c = *s.call;
    const int64_t id = s.tracer->remove(c.comm);
    call.add(Role::comm, id);
    s.comms.erase(c.comm.handle);
    *c.freed = Comm{};
    Action a;
    a.kind = Action::Kind::free_comm;
    a.op = Op::Comm_free;
    a.comm = id;
    add_action(rank, std::move(a));
}

namespace {

// A wildcard receive a completion names, with what it matched.
struct WildcardMatch {
    size_t completed;  // index in the completed handles
    WildcardReceive receive;
    Status status;
};

// The operation a causal replay completes with: a test that completes is the wait it stands for.
Op completion_op(const Call& c)
{
    switch (c.kind) {
    case Kind::test: return Op::Wait;
    case Kind::testall: return Op::Waitall;
    case Kind::testany: return Op::Waitany;
    case Kind::testsome: return Op::Waitsome;
    default: return c.op;
    }
}

// The matched peers and tags, ordered as the tracer's positions order them, and the two encoded sets.
void add_completed_sets(RecordedCall& call, std::vector<WildcardMatch>& matches, const std::vector<uint32_t>& positions,
                        const std::vector<uint32_t>& positions_of, size_t pending, const std::vector<size_t>& cancelled)
{
    std::sort(matches.begin(), matches.end(), [&](const WildcardMatch& a, const WildcardMatch& b) {
        return positions_of[a.completed] > positions_of[b.completed];
    });
    for (const auto& m : matches) add_matched(call, m.receive.comm, m.receive.any_source, m.receive.any_tag, m.status);
    std::vector<int64_t> values;
    encode_completed_set(positions, values, pending);
    for (int64_t v : values) call.add(Role::completed_set, v);
    std::vector<uint32_t> cancelled_positions;
    for (size_t k : cancelled) {
        if (positions_of[k] != PendingRequests<uint32_t>::kNotPending) cancelled_positions.push_back(positions_of[k]);
    }
    std::sort(cancelled_positions.begin(), cancelled_positions.end());
    if (!cancelled_positions.empty()) {
        encode_completed_set(cancelled_positions, values);
        for (int64_t v : values) call.add(Role::cancelled_set, v);
    }
}

}  // namespace

// add_completion of tracer.cpp, given what MPI reported: `before` are the handles the call was given,
// `completed_live` the live requests it completed (in the order MPI reports them), with `statuses`.
// Also adds the truth: the cancel and the completion a causal replay must make here.
RecordedCall Simulator::record_completion(Rank rank, const std::vector<Request>& before,
                                          const std::vector<size_t>& completed_live, const std::vector<Status>& statuses)
{
    RankState& s = state(rank);
    const Call& c = *s.call;
    TracerMirror& tracer = *s.tracer;
    RecordedCall call = start_record(rank, c.op);
    const bool single = c.kind == Kind::wait || c.kind == Kind::test;
    call.add(Role::requests, single ? 1 : static_cast<int64_t>(before.size()));
    const bool tests = c.kind == Kind::test || c.kind == Kind::testall || c.kind == Kind::testany;
    if (tests) call.add(Role::completed, s.result.flag ? 1 : 0);
    if (c.kind == Kind::waitsome || c.kind == Kind::testsome) {
        call.add(Role::completed, static_cast<int64_t>(s.result.indices.size()));
    }
    std::vector<uint32_t> completed_requests;  // handles, all the tracer sees
    std::vector<size_t> cancelled;  // indices in completed_requests
    std::vector<WildcardMatch> matches;
    for (size_t k = 0; k < completed_live.size(); ++k) {
        const uint32_t handle = handle_of(s.live[completed_live[k]].request);
        completed_requests.push_back(handle);
        if (statuses[k].cancelled) cancelled.push_back(completed_requests.size() - 1);
        auto found = tracer.wildcard_receives.find(handle);
        if (found == tracer.wildcard_receives.end()) continue;
        const WildcardReceive receive = found->second.back();
        found->second.pop_back();
        if (found->second.empty()) tracer.wildcard_receives.erase(found);
        if (!statuses[k].cancelled) matches.push_back({completed_requests.size() - 1, receive, statuses[k]});
    }
    std::vector<uint32_t> positions_of;
    const size_t pending = tracer.pending.size();
    const auto span = tracer.pending.complete(completed_requests, &positions_of);
    const std::vector<uint32_t> positions(span.begin(), span.end());
    count_misnamed(rank, completed_requests, completed_live);
    add_completed_sets(call, matches, positions, positions_of, pending, cancelled);
    add_completion_truth(rank, completed_live, statuses);
    return call;
}

// Which requests the tracer takes these to be: for each handle the newest pending one with it, the
// oldest for the shared handle, as PendingRequests looks. Where a handle stands for several
// requests, that may be others than the program completed.
void Simulator::count_misnamed(Rank rank, const std::vector<uint32_t>& completed_requests,
                               const std::vector<size_t>& completed_live)
{
    RankState& s = state(rank);
    auto& named = s.tracer->pending_requests;
    std::vector<size_t> taken;
    for (uint32_t handle : completed_requests) {
        auto take = [&](size_t i) {
            if (handle_of(named[i]) != handle || std::find(taken.begin(), taken.end(), i) != taken.end()) return false;
            taken.push_back(i);
            return true;
        };
        if (handle == kSharedCompleteRequest) {
            for (size_t i = 0; i < named.size() && !take(i); ++i) {}
        } else {
            for (size_t i = named.size(); i-- > 0 && !take(i);) {}
        }
    }
    std::vector<Request> truly;
    for (size_t live : completed_live) truly.push_back(s.live[live].request);
    std::vector<Request> as_named;
    for (size_t i : taken) as_named.push_back(named[i]);
    std::sort(truly.begin(), truly.end());
    std::sort(as_named.begin(), as_named.end());
    if (truly != as_named) ++s.record.misnamed;
    std::sort(taken.rbegin(), taken.rend());
    for (size_t i : taken) named.erase(named.begin() + static_cast<std::ptrdiff_t>(i));
}

// The truth: what the receives matched, and the completion.
void Simulator::add_completion_truth(Rank rank, const std::vector<size_t>& completed_live,
                                     const std::vector<Status>& statuses)
{
    RankState& s = state(rank);
    Action complete;
    complete.kind = Action::Kind::complete;
    complete.op = completion_op(*s.call);
    for (size_t k = 0; k < completed_live.size(); ++k) {
        const LiveRequest& l = s.live[completed_live[k]];
        if (statuses[k].cancelled) {
            s.drop.push_back(l.action);
            continue;
        }
        complete.requests.push_back(l.action);
        if (!l.wildcard) continue;
        Action& created = s.record.actions[l.action];
        ++s.record.wildcard_matches;
        if (l.asked_source == kAnySourceArg) {
            const size_t comm = operations_[*l.operation].comm;
            created.peer = world_of(comm, statuses[k].source);
            created.peer_in_comm = statuses[k].source;
        }
        if (l.asked_tag == kAnyTagArg) created.tag = statuses[k].tag;
    }
    std::sort(complete.requests.begin(), complete.requests.end());
    if (!complete.requests.empty()) add_action(rank, std::move(complete));
}

// ---- The public face ----------------------------------------------------------------------------------

RunResult run(const Program& program, int32_t ranks, uint64_t seed, const RunOptions& options)
{
    Simulator simulator(ranks, seed, options);
    return simulator.run(program);
}

std::string describe_action(const Action& a)
{
    auto list = [](const std::vector<size_t>& items) {
        std::string text = "{";
        for (size_t i = 0; i < items.size(); ++i) text += (i ? "," : "") + std::to_string(items[i]);
        return text + "}";
    };
    const std::string op(operation_name(a.op));
    switch (a.kind) {
    case Action::Kind::send:
        return op + " to " + std::to_string(a.peer) + " (" + std::to_string(a.peer_in_comm) + " of comm " +
               std::to_string(a.comm) + "), tag " + std::to_string(a.tag) + ", " + std::to_string(a.bytes) + " bytes" +
               (a.creates_request ? ", request" : "");
    case Action::Kind::receive:
        return op + " from " + std::to_string(a.peer) + " (" + std::to_string(a.peer_in_comm) + " of comm " +
               std::to_string(a.comm) + "), tag " + std::to_string(a.tag) + ", " + std::to_string(a.bytes) + " bytes" +
               (a.creates_request ? ", request" : "");
    case Action::Kind::sendrecv:
        return op + " to " + std::to_string(a.peer) + ", tag " + std::to_string(a.tag) + ", " + std::to_string(a.bytes) +
               " bytes, from " + std::to_string(a.source) + ", tag " + std::to_string(a.recv_tag) + ", " +
               std::to_string(a.recv_bytes) + " bytes, comm " + std::to_string(a.comm);
    case Action::Kind::complete: return op + " " + list(a.requests);
    case Action::Kind::collective:
        return op + " on comm " + std::to_string(a.comm) + ", root " + std::to_string(a.root) + ", " +
               std::to_string(a.bytes) + " bytes";
    case Action::Kind::create_comm: {
        std::string members;
        for (Rank m : a.members) members += (members.empty() ? "" : ",") + std::to_string(m);
        return op + " of comm " + std::to_string(a.comm) + " into comm " + std::to_string(a.new_comm) + " {" + members + "}";
    }
    case Action::Kind::free_comm: return "free comm " + std::to_string(a.comm);
    }
    return "?";
}

}  // namespace htrace::proofs::sim
