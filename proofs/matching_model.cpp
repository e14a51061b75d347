#include "proofs/matching_model.hpp"

#include <algorithm>
#include <compare>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>

namespace htrace::proofs {
namespace {

using replay::CallKind;
using replay::RequestId;
using replay::ScheduledCall;

bool is_blocking_send(Op op) { return op == Op::Send || op == Op::Ssend || op == Op::Bsend || op == Op::Rsend; }

bool is_nonblocking_send(Op op)
{
    return op == Op::Isend || op == Op::Issend || op == Op::Ibsend || op == Op::Irsend;
}

bool is_rooted(Op op)
{
    switch (op) {
    case Op::Bcast: case Op::Ibcast: case Op::Reduce: case Op::Ireduce: case Op::Gather: case Op::Igather:
    case Op::Gatherv: case Op::Igatherv: case Op::Scatter: case Op::Iscatter: case Op::Scatterv:
    case Op::Iscatterv:
        return true;
    default:
        return false;
    }
}

// Operations where MPI has every member describe the same buffer, so all must agree on its bytes.
bool has_one_buffer(Op op)
{
    switch (op) {
    case Op::Bcast: case Op::Ibcast: case Op::Reduce: case Op::Ireduce: case Op::Allreduce:
    case Op::Iallreduce: case Op::Scan: case Op::Iscan: case Op::Exscan: case Op::Iexscan:
        return true;
    default:
        return false;
    }
}

// Where the members' buffer sizes do not fit together as MPI requires of a collective's type
// signatures: the first member (by rank in the communicator) that does not fit, and why.
struct SizeMismatch {
    size_t member = 0;
    size_t other = 0;  // the member it was compared with
    std::string why;
};

std::optional<SizeMismatch> sizes_mismatch(const std::vector<const ScheduledCall*>& calls)
{
    const ScheduledCall& first = *calls.front();
    const size_t n = calls.size();
    const size_t root = static_cast<size_t>(std::max(first.root, 0));  // checked before
    const ScheduledCall& at_root = *calls[root];
    auto names_all = [n](const std::vector<int64_t>& counts) { return counts.size() == n; };
    const bool is_allgatherv = first.op == Op::Allgatherv || first.op == Op::Iallgatherv;
    const bool is_alltoallv = first.op == Op::Alltoallv || first.op == Op::Ialltoallv || first.op == Op::Alltoallw ||
                              first.op == Op::Ialltoallw;
    for (size_t i = 0; i < n; ++i) {
        const ScheduledCall& c = *calls[i];
        const size_t other = is_rooted(first.op) ? root : 0;
        auto bad = [&](std::string why) { return SizeMismatch{i, other, std::move(why)}; };
        const bool own_data_in_place = i == root && c.in_place;
        switch (first.op) {
        case Op::Allgather: case Op::Iallgather: case Op::Alltoall: case Op::Ialltoall:
            if (c.recv_bytes != first.recv_bytes) return bad("members receive blocks of different sizes");
            if (!c.in_place && c.bytes != c.recv_bytes) return bad("it sends blocks of another size than it receives");
            break;
        case Op::Gather: case Op::Igather:
            if (!own_data_in_place && c.bytes != at_root.recv_bytes) {
                return bad("it sends another size than the root receives");
            }
            break;
        case Op::Scatter: case Op::Iscatter:
            if (!own_data_in_place && c.recv_bytes != at_root.bytes) {
                return bad("it receives another size than the root sends");
            }
            break;
        case Op::Reduce_scatter_block: case Op::Ireduce_scatter_block:
            if (c.recv_bytes != first.recv_bytes) return bad("members disagree on the block size");
            break;
        case Op::Gatherv: case Op::Igatherv:
            if (!names_all(at_root.recv_counts)) {
                return SizeMismatch{root, root, "the root's receive counts do not cover the members"};
            }
            if (!own_data_in_place && c.bytes != at_root.recv_counts[i]) {
                return bad("it sends another size than the root expects from it");
            }
            break;
        case Op::Scatterv: case Op::Iscatterv:
            if (!names_all(at_root.send_counts)) {
                return SizeMismatch{root, root, "the root's send counts do not cover the members"};
            }
            if (!own_data_in_place && c.recv_bytes != at_root.send_counts[i]) {
                return bad("it receives another size than the root sends it");
            }
            break;
        case Op::Allgatherv: case Op::Iallgatherv: case Op::Reduce_scatter: case Op::Ireduce_scatter:
            if (!names_all(c.recv_counts) || c.recv_counts != first.recv_counts) {
                return bad("members disagree on the receive counts");
            }
            if (is_allgatherv && !c.in_place && c.bytes != c.recv_counts[i]) {
                return bad("it sends another size than the others expect from it");
            }
            break;
        case Op::Alltoallv: case Op::Ialltoallv: case Op::Alltoallw: case Op::Ialltoallw:
            if (!names_all(c.send_counts) || !names_all(c.recv_counts)) {
                return bad("its counts do not cover the members");
            }
            break;
        default:
            if (has_one_buffer(first.op) && c.bytes != first.bytes) return bad("members disagree on bytes");
            break;
        }
    }
    if (is_alltoallv) {
        for (size_t i = 0; i < n; ++i) {
            for (size_t j = 0; j < n; ++j) {
                if (calls[i]->send_counts[j] != calls[j]->recv_counts[i]) {
                    return SizeMismatch{i, j, "it sends another size than the other expects from it"};
                }
            }
        }
    }
    return std::nullopt;
}

std::string ranks_text(const std::vector<Rank>& ranks)
{
    std::string text = "{";
    for (size_t i = 0; i < ranks.size(); ++i) text += (i ? "," : "") + std::to_string(ranks[i]);
    return text + "}";
}

std::string name_of(Op op) { return std::string(operation_name(op)); }

// Where a call sits: the rank and its index in that rank's schedule.
struct CallRef {
    Rank rank = 0;
    size_t index = 0;
};

// A send or receive in flight, or a non-blocking collective: done once matched (or complete).
struct Operation {
    CallRef call;
    bool done = false;
    int64_t bytes = 0;  // a send's size, a receive's capacity
};

struct RequestState {
    size_t operation = 0;
    bool completed = false;  // a complete call has waited for it
};

struct MatchKey {
    Rank source = 0;
    Rank destination = 0;
    size_t comm = 0;  // global communicator
    int64_t tag = 0;
    auto operator<=>(const MatchKey&) const = default;
};

// The k-th collective on a communicator, as its members reach it.
struct CollectiveInstance {
    std::vector<std::optional<CallRef>> arrivals;  // by member position
    size_t arrived = 0;
    bool done = false;
    std::vector<size_t> operations;  // of non-blocking members, done with the instance
};

using InstanceKey = std::pair<size_t, uint64_t>;  // global communicator, sequence number on it

struct RankState {
    size_t pc = 0;
    bool issued = false;  // the call at pc has been issued and now waits
    std::vector<size_t> waiting_operations;
    InstanceKey waiting_instance;
    std::map<int64_t, size_t> comm_ids;       // this rank's communicator ids -> global communicators
    std::map<size_t, uint64_t> collectives;   // global communicator -> collectives issued on it
    std::map<RequestId, RequestState> requests;
};

class Model {
public:
    explicit Model(const std::vector<Schedule>& schedules);
    ModelReport run();

private:
    bool advance(Rank rank);
    bool step(RankState& state);
    bool send(Rank rank, const ScheduledCall& call);
    bool receive(Rank rank, const ScheduledCall& call);
    bool sendrecv(Rank rank, const ScheduledCall& call);
    bool wait_for(RankState& state, std::vector<size_t> operations);
    std::optional<size_t> offer_send(Rank rank, size_t comm, Rank peer, int32_t peer_in_comm, int64_t tag,
                                     int64_t bytes);
    std::optional<size_t> offer_receive(Rank rank, size_t comm, Rank peer, int32_t peer_in_comm, int64_t tag,
                                        int64_t bytes);
    bool complete(Rank rank, const ScheduledCall& call);
    bool collective(Rank rank, const ScheduledCall& call);
    bool free_comm(Rank rank, const ScheduledCall& call);
    bool one_sided(Rank rank, const ScheduledCall& call);

    std::optional<size_t> resolve(Rank rank, int64_t id);
    std::optional<size_t> creation_context(Rank rank, const ScheduledCall& call);
    bool check_peer(Rank rank, Rank peer, int32_t peer_in_comm, int64_t tag, size_t comm, bool receive);
    size_t new_operation(Rank rank, int64_t bytes = 0);
    bool add_request(Rank rank, RequestId id, size_t operation);
    void offer(const MatchKey& key, size_t operation, bool is_send);
    void pair_up(size_t send, size_t receive);
    void finish_instance(InstanceKey key, CollectiveInstance& instance);
    void make_communicators(const CollectiveInstance& instance);
    bool check_split(Rank rank, const ScheduledCall& call, size_t comm);

    // Stops the run: what follows from such a problem says nothing new. The first problem is the
    // one reported, except that a deadlock outranks a size mismatch noted before it.
    void fail(std::string problem, Failure kind = Failure::mismatch);
    // Sizes that do not fit: reported, but the calls still meet, so the run goes on to look for a
    // deadlock behind them.
    void note_mismatch(std::string problem);
    const ScheduledCall& call_at(CallRef ref) const;
    std::string where(CallRef ref) const;
    std::string comm_text(size_t comm) const;
    std::string waiting_for(Rank rank) const;
    std::string leftovers() const;

    const std::vector<Schedule>& schedules_;
    int32_t world_size_ = 0;
    std::vector<std::vector<Rank>> comms_;  // global communicators: 0 world, 1 + r self of r, then created
    // Creations are collectives over the new members alone (h-replay makes communicators with
    // MPI_Comm_create_group): each member list has a context of its own that counts them.
    std::map<std::vector<Rank>, size_t> creation_contexts_;
    std::set<size_t> is_creation_context_;
    std::vector<RankState> ranks_;
    std::vector<Operation> operations_;
    // Unmatched operations per key, oldest first: short queues, where a vector beats a deque.
    std::map<MatchKey, std::vector<size_t>> sends_;
    std::map<MatchKey, std::vector<size_t>> receives_;
    std::map<InstanceKey, CollectiveInstance> instances_;
    std::string problem_;
    Failure failure_ = Failure::none;
    bool stopped_ = false;
    uint64_t calls_ = 0;
};

Model::Model(const std::vector<Schedule>& schedules)
    : schedules_(schedules), world_size_(static_cast<int32_t>(schedules.size())), ranks_(schedules.size())
{
    std::vector<Rank> world;
    for (Rank r = 0; r < world_size_; ++r) world.push_back(r);
    comms_.push_back(world);
    for (Rank r = 0; r < world_size_; ++r) {
        comms_.push_back({r});
        ranks_[static_cast<size_t>(r)].comm_ids = {{0, 0}, {1, 1 + static_cast<size_t>(r)}};
    }
}

ModelReport Model::run()
{
    // Every wait here only ever gets satisfied, never undone (a matched send stays matched, a
    // complete collective stays complete), so the order in which ranks advance cannot change the
    // outcome: advancing each rank as far as it goes, until none can, decides deadlock exactly.
    bool progress = true;
    while (progress && !stopped_) {
        progress = false;
        for (Rank r = 0; r < world_size_ && !stopped_; ++r) {
            while (!stopped_ && advance(r)) progress = true;
        }
    }
    if (!stopped_) {
        std::string stuck;
        for (Rank r = 0; r < world_size_; ++r) {
            if (ranks_[static_cast<size_t>(r)].pc < schedules_[static_cast<size_t>(r)].size()) stuck += waiting_for(r);
        }
        if (!stuck.empty()) {
            std::string all;
            for (Rank r = 0; r < world_size_; ++r) {
                const auto& state = ranks_[static_cast<size_t>(r)];
                const auto total = schedules_[static_cast<size_t>(r)].size();
                if (state.pc < total) continue;
                all += "  rank " + std::to_string(r) + " finished (" + std::to_string(total) + " calls)\n";
            }
            fail("deadlock: no rank can advance\n" + stuck + all, Failure::deadlock);
        }
    }
    if (!stopped_) {
        const std::string left = leftovers();
        if (!left.empty()) fail("finished with operations left over\n" + left, Failure::leftover);
    }
    return ModelReport{problem_.empty(), failure_, problem_, calls_};
}

bool Model::advance(Rank rank)
{
    const auto& schedule = schedules_[static_cast<size_t>(rank)];
    auto& state = ranks_[static_cast<size_t>(rank)];
    if (state.pc >= schedule.size()) return false;
    const ScheduledCall& call = schedule[state.pc];
    switch (call.kind) {
    case CallKind::compute: return step(state);
    case CallKind::send: return send(rank, call);
    case CallKind::receive: return receive(rank, call);
    case CallKind::sendrecv: return sendrecv(rank, call);
    case CallKind::complete: return complete(rank, call);
    case CallKind::collective:
    case CallKind::create_comm: return collective(rank, call);
    case CallKind::free_comm: return free_comm(rank, call);
    case CallKind::one_sided: return one_sided(rank, call);
    case CallKind::io:     // the generated programs make none; a rank's own if they did
    case CallKind::probe:   // the generated programs make none
    case CallKind::buffer:  // likewise
        return step(state);
    }
    fail(where({rank, state.pc}) + ": unknown call kind");
    return false;
}

bool Model::step(RankState& state)
{
    ++state.pc;
    state.issued = false;
    ++calls_;
    return true;
}

// A blocking call waits here until its operations are done. True when the rank moved on, or has
// just been issued the call (a change either way).
bool Model::wait_for(RankState& state, std::vector<size_t> operations)
{
    const bool just_issued = !state.issued;
    state.issued = true;
    state.waiting_operations = std::move(operations);
    for (size_t operation : state.waiting_operations) {
        if (!operations_[operation].done) return just_issued;
    }
    return step(state);
}

// The send side of a call: an operation, done at once for MPI_PROC_NULL, else offered for matching.
std::optional<size_t> Model::offer_send(Rank rank, size_t comm, Rank peer, int32_t peer_in_comm, int64_t tag,
                                        int64_t bytes)
{
    const CallRef here{rank, ranks_[static_cast<size_t>(rank)].pc};
    const size_t operation = new_operation(rank, bytes);
    if (peer == kProcNull) {
        if (peer_in_comm != kProcNull) {
            fail(where(here) + ": a send to MPI_PROC_NULL names rank " + std::to_string(peer_in_comm) +
                 " of the communicator");
            return std::nullopt;
        }
        operations_[operation].done = true;  // MPI completes it at once
        return operation;
    }
    if (!check_peer(rank, peer, peer_in_comm, tag, comm, false)) return std::nullopt;
    offer(MatchKey{rank, peer, comm, tag}, operation, true);
    return operation;
}

std::optional<size_t> Model::offer_receive(Rank rank, size_t comm, Rank peer, int32_t peer_in_comm, int64_t tag,
                                           int64_t bytes)
{
    const size_t operation = new_operation(rank, bytes);
    if (peer == kProcNull) {
        operations_[operation].done = true;
        return operation;
    }
    if (!check_peer(rank, peer, peer_in_comm, tag, comm, true)) return std::nullopt;
    offer(MatchKey{peer, rank, comm, tag}, operation, false);
    return operation;
}

bool Model::send(Rank rank, const ScheduledCall& call)
{
    auto& state = ranks_[static_cast<size_t>(rank)];
    if (state.issued) return wait_for(state, std::move(state.waiting_operations));
    const CallRef here{rank, state.pc};
    const bool nonblocking = call.request != 0;
    if (!(nonblocking ? is_nonblocking_send(call.op) : is_blocking_send(call.op))) {
        fail(where(here) + ": " + name_of(call.op) + (nonblocking ? " with" : " without") + " a request");
        return false;
    }
    const auto comm = resolve(rank, call.comm);
    if (!comm) return false;
    const auto operation = offer_send(rank, *comm, call.peer, call.peer_in_comm, call.tag, call.bytes);
    if (!operation) return false;
    if (nonblocking) {
        if (!add_request(rank, call.request, *operation)) return false;
        return step(state);
    }
    return wait_for(state, {*operation});
}

bool Model::receive(Rank rank, const ScheduledCall& call)
{
    auto& state = ranks_[static_cast<size_t>(rank)];
    if (state.issued) return wait_for(state, std::move(state.waiting_operations));
    const CallRef here{rank, state.pc};
    const bool nonblocking = call.request != 0;
    if (call.op != (nonblocking ? Op::Irecv : Op::Recv)) {
        fail(where(here) + ": " + name_of(call.op) + (nonblocking ? " with" : " without") + " a request");
        return false;
    }
    const auto comm = resolve(rank, call.comm);
    if (!comm) return false;
    const auto operation = offer_receive(rank, *comm, call.peer, call.peer_in_comm, call.tag, call.bytes);
    if (!operation) return false;
    if (nonblocking) {
        if (!add_request(rank, call.request, *operation)) return false;
        return step(state);
    }
    return wait_for(state, {*operation});
}

// Both halves at once: the receive is posted before the send waits, as MPI_Sendrecv does.
bool Model::sendrecv(Rank rank, const ScheduledCall& call)
{
    auto& state = ranks_[static_cast<size_t>(rank)];
    if (state.issued) return wait_for(state, std::move(state.waiting_operations));
    if (call.request != 0) {
        fail(where({rank, state.pc}) + ": a sendrecv with a request");
        return false;
    }
    const auto comm = resolve(rank, call.comm);
    if (!comm) return false;
    const auto received = offer_receive(rank, *comm, call.source, call.source_in_comm, call.recv_tag, call.recv_bytes);
    if (!received) return false;
    const auto sent = offer_send(rank, *comm, call.peer, call.peer_in_comm, call.tag, call.bytes);
    if (!sent) return false;
    return wait_for(state, {*received, *sent});
}

bool Model::complete(Rank rank, const ScheduledCall& call)
{
    auto& state = ranks_[static_cast<size_t>(rank)];
    bool changed = false;
    if (!state.issued) {
        std::set<RequestId> listed;
        for (RequestId id : call.requests) {
            auto found = state.requests.find(id);
            std::string problem;
            if (found == state.requests.end()) {
                problem = "completes request " + std::to_string(id) + ", which no earlier call created";
            } else if (found->second.completed) {
                problem = "completes request " + std::to_string(id) + " a second time";
            } else if (!listed.insert(id).second) {
                problem = "lists request " + std::to_string(id) + " twice";
            }
            if (!problem.empty()) {
                fail(where({rank, state.pc}) + ": " + problem);
                return false;
            }
        }
        state.issued = true;
        changed = true;
    }
    for (RequestId id : call.requests) {
        if (!operations_[state.requests.at(id).operation].done) return changed;
    }
    for (RequestId id : call.requests) state.requests.at(id).completed = true;
    return step(state);
}

bool Model::collective(Rank rank, const ScheduledCall& call)
{
    auto& state = ranks_[static_cast<size_t>(rank)];
    if (state.issued) {
        if (!instances_.at(state.waiting_instance).done) return false;
        return step(state);
    }
    const CallRef here{rank, state.pc};
    const bool by_group = call.kind == CallKind::create_comm && call.op == Op::Comm_create_group;
    const auto comm = by_group ? creation_context(rank, call) : resolve(rank, call.comm);
    if (comm && call.kind == CallKind::create_comm && !by_group && !check_split(rank, call, *comm)) return false;
    if (!comm) return false;
    const auto& members = comms_[*comm];
    const size_t size = members.size();
    const InstanceKey key{*comm, state.collectives[*comm]++};
    auto& instance = instances_[key];
    if (instance.arrivals.empty()) instance.arrivals.resize(size);
    size_t position = 0;
    while (members[position] != rank) ++position;  // ranks only know communicators they are in
    instance.arrivals[position] = here;
    ++instance.arrived;
    const bool nonblocking = call.request != 0;
    if (nonblocking) {
        const size_t operation = new_operation(rank);
        instance.operations.push_back(operation);
        if (!add_request(rank, call.request, operation)) return false;
    }
    if (instance.arrived == size) finish_instance(key, instance);  // may add a communicator
    if (stopped_) return false;
    if (nonblocking) return step(state);
    state.issued = true;
    state.waiting_instance = key;
    if (instance.done) return step(state);
    return true;
}

// A one-sided call completes without a call of the target's (MPI's progress rule); one with a
// request is complete at once. (Window creation, free and fence are collectives; post/start/
// complete/wait are not modelled: proofs/README.md says why they cannot deadlock.)
bool Model::one_sided(Rank rank, const ScheduledCall& call)
{
    auto& state = ranks_[static_cast<size_t>(rank)];
    if (call.request != 0) {
        operations_.push_back(Operation{CallRef{rank, state.pc}, true, call.bytes});
        if (!add_request(rank, call.request, operations_.size() - 1)) return false;
    }
    return step(state);
}

bool Model::free_comm(Rank rank, const ScheduledCall& call)
{
    auto& state = ranks_[static_cast<size_t>(rank)];
    if (call.comm == 0 || call.comm == 1) {
        fail(where({rank, state.pc}) + ": frees the world or self communicator");
        return false;
    }
    if (!resolve(rank, call.comm)) return false;
    state.comm_ids.erase(call.comm);
    return step(state);
}

std::optional<size_t> Model::creation_context(Rank rank, const ScheduledCall& call)
{
    const CallRef here{rank, ranks_[static_cast<size_t>(rank)].pc};
    const auto parent = resolve(rank, call.comm);
    if (!parent) return std::nullopt;
    const std::set<Rank> distinct(call.members.begin(), call.members.end());
    const std::set<Rank> in_parent(comms_[*parent].begin(), comms_[*parent].end());
    std::string problem;
    if (call.request != 0) {
        problem = "a non-blocking communicator creation";
    } else if (distinct.size() != call.members.size() || !distinct.count(rank)) {
        problem = "its member list repeats a rank or leaves out its caller";
    } else if (!std::includes(in_parent.begin(), in_parent.end(), distinct.begin(), distinct.end())) {
        problem = "its members are not all in the parent communicator " + comm_text(*parent);
    } else if (call.new_comm < 2 || ranks_[static_cast<size_t>(rank)].comm_ids.count(call.new_comm)) {
        problem = "the new communicator's id is reserved or in use";
    }
    if (!problem.empty()) {
        fail(where(here) + ": " + problem);
        return std::nullopt;
    }
    auto [entry, inserted] = creation_contexts_.emplace(call.members, comms_.size());
    if (inserted) {
        comms_.push_back(call.members);
        is_creation_context_.insert(entry->second);
    }
    return entry->second;
}

std::optional<size_t> Model::resolve(Rank rank, int64_t id)
{
    const auto& state = ranks_[static_cast<size_t>(rank)];
    auto found = state.comm_ids.find(id);
    if (found == state.comm_ids.end()) {
        fail(where({rank, state.pc}) + ": communicator " + std::to_string(id) + " is unknown to rank " +
             std::to_string(rank) + " here");
        return std::nullopt;
    }
    return found->second;
}

bool Model::check_peer(Rank rank, Rank peer, int32_t peer_in_comm, int64_t tag, size_t comm, bool receive)
{
    const auto& members = comms_[comm];
    const bool valid = peer >= 0 && peer < world_size_ && peer_in_comm >= 0 &&
                       static_cast<size_t>(peer_in_comm) < members.size() &&
                       members[static_cast<size_t>(peer_in_comm)] == peer;
    if (!valid) {
        fail(where({rank, ranks_[static_cast<size_t>(rank)].pc}) + ": peer " + std::to_string(peer) +
             " is not rank " + std::to_string(peer_in_comm) + " of communicator " + comm_text(comm));
        return false;
    }
    // Replay names every tag, but for a receive on a channel of blocking calls whose tags were drawn
    // (MPI_ANY_TAG: it takes the channel's messages in order).
    if (tag < 0 && !(receive && tag == kAnyTag)) {
        fail(where({rank, ranks_[static_cast<size_t>(rank)].pc}) + ": tag " + std::to_string(tag) +
             " (replay must name a tag)");
        return false;
    }
    return true;
}

size_t Model::new_operation(Rank rank, int64_t bytes)
{
    operations_.push_back(Operation{CallRef{rank, ranks_[static_cast<size_t>(rank)].pc}, false, bytes});
    return operations_.size() - 1;
}

bool Model::add_request(Rank rank, RequestId id, size_t operation)
{
    auto& state = ranks_[static_cast<size_t>(rank)];
    if (!state.requests.emplace(id, RequestState{operation, false}).second) {
        fail(where({rank, state.pc}) + ": request id " + std::to_string(id) + " is used a second time");
        return false;
    }
    return true;
}

void Model::offer(const MatchKey& key, size_t operation, bool is_send)
{
    auto& partners = is_send ? receives_ : sends_;
    // MPI's order: a send takes the first posted receive that fits, its tag or MPI_ANY_TAG; an
    // MPI_ANY_TAG receive the first send on its channel, whatever the tag. Operations are numbered as
    // posted, so the first is the lowest.
    auto found = partners.end();
    const auto consider = [&](std::map<MatchKey, std::vector<size_t>>::iterator candidate) {
        if (candidate == partners.end()) return;
        if (found == partners.end() || candidate->second.front() < found->second.front()) found = candidate;
    };
    if (is_send) {
        consider(partners.find(key));
        consider(partners.find(MatchKey{key.source, key.destination, key.comm, kAnyTag}));
    } else if (key.tag == kAnyTag) {
        const auto first = partners.lower_bound(MatchKey{key.source, key.destination, key.comm,
                                                         std::numeric_limits<int64_t>::min()});
        for (auto it = first; it != partners.end() && it->first.source == key.source &&
                              it->first.destination == key.destination && it->first.comm == key.comm;
             ++it) {
            consider(it);
        }
    } else {
        consider(partners.find(key));
    }
    if (found == partners.end()) {
        (is_send ? sends_ : receives_)[key].push_back(operation);
        return;
    }
    const size_t partner = found->second.front();
    found->second.erase(found->second.begin());
    if (found->second.empty()) partners.erase(found);
    if (is_send) {
        pair_up(operation, partner);
    } else {
        pair_up(partner, operation);
    }
}

void Model::pair_up(size_t send, size_t receive)
{
    if (operations_[send].bytes > operations_[receive].bytes) {
        note_mismatch("a send is larger than the receive it matches\n  " + where(operations_[send].call) +
                      "\n  " + where(operations_[receive].call));
    }
    operations_[send].done = true;
    operations_[receive].done = true;
}

void Model::finish_instance(InstanceKey key, CollectiveInstance& instance)
{
    const CallRef first_ref = *instance.arrivals.front();
    const ScheduledCall& first = call_at(first_ref);
    const std::string what =
        "collective #" + std::to_string(key.second + 1) + " on communicator " + comm_text(key.first);
    for (const auto& arrival : instance.arrivals) {
        const ScheduledCall& call = call_at(*arrival);
        std::string problem;
        if (call.kind != first.kind || call.op != first.op) {
            problem = "members issue different operations";
        } else if (is_rooted(call.op) && call.root != first.root) {
            problem = "members name different roots";
        } else if (is_rooted(call.op) &&
                   (call.root < 0 || static_cast<size_t>(call.root) >= instance.arrivals.size())) {
            problem = "the root is not a rank of the communicator";
        }
        if (!problem.empty()) {
            fail(what + ": " + problem + "\n  " + where(first_ref) + "\n  " + where(*arrival));
            return;
        }
    }
    if (first.kind == CallKind::collective) {
        std::vector<const ScheduledCall*> calls;
        for (const auto& arrival : instance.arrivals) calls.push_back(&call_at(*arrival));
        if (const auto mismatch = sizes_mismatch(calls)) {
            note_mismatch(what + ": " + mismatch->why + "\n  " + where(*instance.arrivals[mismatch->member]) +
                          "\n  other: " + where(*instance.arrivals[mismatch->other]));
        }
    }
    if (first.kind == CallKind::create_comm) make_communicators(instance);
    instance.done = true;
    for (size_t operation : instance.operations) operations_[operation].done = true;
}

// One communicator per member list the arrivals name (a split makes several; a rank that names
// none gets none).
void Model::make_communicators(const CollectiveInstance& instance)
{
    std::map<std::vector<Rank>, size_t> made;
    for (const auto& arrival : instance.arrivals) {
        const ScheduledCall& call = call_at(*arrival);
        if (call.new_comm == kNoComm) continue;
        auto [entry, inserted] = made.emplace(call.members, comms_.size());
        if (inserted) comms_.push_back(call.members);
        ranks_[static_cast<size_t>(arrival->rank)].comm_ids[call.new_comm] = entry->second;
    }
    // Every member must have named the same members.
    for (const auto& [members, comm] : made) {
        for (Rank m : members) {
            const auto& ids = ranks_[static_cast<size_t>(m)].comm_ids;
            if (std::none_of(ids.begin(), ids.end(), [&](const auto& id) { return id.second == comm; })) {
                fail("communicator creation: rank " + std::to_string(m) + " is a member of " + ranks_text(members) +
                     " by the others' account, not its own\n  " + where(*instance.arrivals.front()));
                return;
            }
        }
    }
}

// A split or duplication over `comm`: the caller's part must be in the parent and name the caller.
bool Model::check_split(Rank rank, const ScheduledCall& call, size_t comm)
{
    if (call.new_comm == kNoComm) return true;
    const std::set<Rank> distinct(call.members.begin(), call.members.end());
    const std::set<Rank> in_parent(comms_[comm].begin(), comms_[comm].end());
    std::string problem;
    if (distinct.size() != call.members.size() || !distinct.count(rank)) {
        problem = "its member list repeats a rank or leaves out its caller";
    } else if (!std::includes(in_parent.begin(), in_parent.end(), distinct.begin(), distinct.end())) {
        problem = "its members are not all in the parent communicator " + comm_text(comm);
    } else if (call.new_comm < 2 || ranks_[static_cast<size_t>(rank)].comm_ids.count(call.new_comm)) {
        problem = "the new communicator's id is reserved or in use";
    }
    if (problem.empty()) return true;
    fail(where({rank, ranks_[static_cast<size_t>(rank)].pc}) + ": " + problem);
    return false;
}

void Model::fail(std::string problem, Failure kind)
{
    stopped_ = true;
    if (!problem_.empty() && kind != Failure::deadlock) return;
    problem_ = problem_.empty() ? std::move(problem) : problem + "after an earlier " + problem_;
    failure_ = kind;
}

void Model::note_mismatch(std::string problem)
{
    if (!problem_.empty()) return;
    problem_ = std::move(problem) + "\n";
    failure_ = Failure::mismatch;
}

const ScheduledCall& Model::call_at(CallRef ref) const { return schedules_[static_cast<size_t>(ref.rank)][ref.index]; }

std::string Model::where(CallRef ref) const
{
    return "rank " + std::to_string(ref.rank) + " call " + std::to_string(ref.index) + " (" +
           describe_call(call_at(ref)) + ")";
}

std::string Model::comm_text(size_t comm) const
{
    return (is_creation_context_.count(comm) ? "creation of " : "") + ranks_text(comms_[comm]);
}

std::string Model::waiting_for(Rank rank) const
{
    const auto& state = ranks_[static_cast<size_t>(rank)];
    const CallRef here{rank, state.pc};
    const ScheduledCall& call = call_at(here);
    const size_t total = schedules_[static_cast<size_t>(rank)].size();
    std::string text = "  " + where(here) + " of " + std::to_string(total) + "\n";
    switch (call.kind) {
    case CallKind::send:
    case CallKind::receive:
    case CallKind::sendrecv:
        for (size_t operation : state.waiting_operations) {
            if (operations_[operation].done) continue;
            text += "    waits for rank " + std::to_string(call.peer) + " to post the matching " +
                    (call.kind == CallKind::send ? "receive\n" : "call\n");
        }
        break;
    case CallKind::complete:
        for (RequestId id : call.requests) {
            const size_t operation = state.requests.at(id).operation;
            if (operations_[operation].done) continue;
            text += "    waits for request " + std::to_string(id) + ": " + where(operations_[operation].call) + "\n";
        }
        break;
    case CallKind::collective:
    case CallKind::create_comm: {
        const auto& instance = instances_.at(state.waiting_instance);
        const auto& members = comms_[state.waiting_instance.first];
        std::vector<Rank> missing;
        for (size_t i = 0; i < members.size(); ++i) {
            if (!instance.arrivals[i]) missing.push_back(members[i]);
        }
        text += "    waits for " + ranks_text(missing) + " to reach collective #" +
                std::to_string(state.waiting_instance.second + 1) + " on communicator " +
                comm_text(state.waiting_instance.first) + "\n";
        break;
    }
    default:
        break;
    }
    return text;
}

std::string Model::leftovers() const
{
    std::string text;
    for (const auto& [key, queue] : sends_) {
        for (size_t operation : queue) text += "  never received: " + where(operations_[operation].call) + "\n";
    }
    for (const auto& [key, queue] : receives_) {
        for (size_t operation : queue) text += "  never sent to: " + where(operations_[operation].call) + "\n";
    }
    for (Rank r = 0; r < world_size_; ++r) {
        for (const auto& [id, request] : ranks_[static_cast<size_t>(r)].requests) {
            if (!request.completed) {
                text += "  request " + std::to_string(id) + " never completed: " +
                        where(operations_[request.operation].call) + "\n";
            }
        }
    }
    return text;
}

}  // namespace

ModelReport run_matching_model(const std::vector<Schedule>& schedules)
{
    Model model(schedules);
    return model.run();
}

std::string describe_call(const replay::ScheduledCall& call)
{
    auto peer_text = [&] {
        if (call.peer == kProcNull) return std::string("MPI_PROC_NULL");
        return std::to_string(call.peer) + " (rank " + std::to_string(call.peer_in_comm) + " of comm " +
               std::to_string(call.comm) + ")";
    };
    auto request_text = [&] { return call.request ? ", request " + std::to_string(call.request) : std::string(); };
    switch (call.kind) {
    case CallKind::compute: {
        char seconds[32];
        std::snprintf(seconds, sizeof seconds, "%.3g", call.seconds);
        return std::string("compute ") + seconds + " s";
    }
    case CallKind::send:
        return name_of(call.op) + " to " + peer_text() + ", tag " + std::to_string(call.tag) + ", " +
               std::to_string(call.bytes) + " bytes" + request_text();
    case CallKind::receive:
    case CallKind::probe:
        return name_of(call.op) + " from " + peer_text() + ", tag " + std::to_string(call.tag) + ", " +
               std::to_string(call.bytes) + " bytes" + request_text();
    case CallKind::sendrecv:
        return name_of(call.op) + " to " + peer_text() + ", tag " + std::to_string(call.tag) + ", " +
               std::to_string(call.bytes) + " bytes, from " + std::to_string(call.source) + ", tag " +
               std::to_string(call.recv_tag) + ", " + std::to_string(call.recv_bytes) + " bytes";
    case CallKind::complete: {
        std::string text = name_of(call.op) + " requests {";
        for (size_t i = 0; i < call.requests.size(); ++i) text += (i ? "," : "") + std::to_string(call.requests[i]);
        return text + "}";
    }
    case CallKind::collective: {
        auto counts_text = [](const char* name, const std::vector<int64_t>& counts) {
            if (counts.empty()) return std::string();
            std::string text = std::string(", ") + name + " {";
            for (size_t i = 0; i < counts.size(); ++i) text += (i ? "," : "") + std::to_string(counts[i]);
            return text + "}";
        };
        return name_of(call.op) + " on comm " + std::to_string(call.comm) +
               (is_rooted(call.op) ? ", root " + std::to_string(call.root) : std::string()) + ", " +
               std::to_string(call.bytes) + " bytes out, " + std::to_string(call.recv_bytes) + " in" +
               (call.in_place ? " (in place)" : "") + counts_text("send counts", call.send_counts) +
               counts_text("receive counts", call.recv_counts) + request_text();
    }
    case CallKind::create_comm:
        return name_of(call.op) + " of comm " + std::to_string(call.comm) + " into comm " +
               std::to_string(call.new_comm) + " " + ranks_text(call.members);
    case CallKind::free_comm:
        return "free comm " + std::to_string(call.comm);
    case CallKind::one_sided:
        return name_of(call.op) + " on window " + std::to_string(call.window) + " to " + peer_text() + request_text();
    case CallKind::io:
        return name_of(call.op) + " on file " + std::to_string(call.file) + request_text();
    case CallKind::buffer:
        return name_of(call.op) + " of " + std::to_string(call.bytes) + " bytes";
    }
    return "unknown call";
}

}  // namespace htrace::proofs
