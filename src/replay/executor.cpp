#include "replay/executor.hpp"

#include "replay/compute.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>

namespace htrace::replay {
namespace {

int as_count(int64_t bytes)
{
    if (bytes > INT_MAX) {
        throw std::runtime_error("a message of " + std::to_string(bytes) + " bytes exceeds MPI's int count");
    }
    return static_cast<int>(std::max<int64_t>(0, bytes));
}

int64_t sum(const std::vector<int64_t>& values) { return std::accumulate(values.begin(), values.end(), int64_t{0}); }

}  // namespace

char* Executor::Scratch::at_least(int64_t bytes)
{
    if (bytes > size_ || !current_) {
        if (current_) retired_.push_back(std::move(current_));
        size_ = std::max<int64_t>({bytes, 2 * size_, 4096});
        current_ = std::make_unique<char[]>(static_cast<size_t>(size_));
        std::memset(current_.get(), 0, static_cast<size_t>(size_));
    }
    return current_.get();
}

Executor::Executor(Watchdog* watchdog, Files* files, double max_compute)
    : totals_(static_cast<size_t>(Op::first_opaque)),
      left_out_(static_cast<size_t>(Op::first_opaque), 0),
      watchdog_(watchdog),
      files_(files),
      compute_bound_(max_compute)
{
    comms_[0] = MPI_COMM_WORLD;
    comms_[1] = MPI_COMM_SELF;
    PMPI_Comm_dup(MPI_COMM_WORLD, &bridge_);
}

Executor::~Executor()
{
    if (attached_ != nullptr) {
        void* given_back = nullptr;
        int size = 0;
        MPI_Buffer_detach(&given_back, &size);
    }
    for (auto& [id, comm] : comms_) {
        if (id > 1 && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
    }
    PMPI_Comm_free(&bridge_);
}

MPI_Comm Executor::comm(int64_t id) const
{
    auto found = comms_.find(id);
    if (found == comms_.end()) throw std::runtime_error("schedule uses unknown communicator " + std::to_string(id));
    return found->second;
}

MPI_Request* Executor::new_request(RequestId id) { return &requests_[id]; }

void Executor::count(Op op, int64_t bytes)
{
    counted_ = static_cast<size_t>(op);
    auto& t = totals_[counted_];
    ++t.calls;
    t.bytes += static_cast<uint64_t>(std::max<int64_t>(0, bytes));
}

void Executor::issue(const ScheduledCall& call)
{
    if (call.kind == CallKind::compute) {
        issue_call(call);
        return;
    }
    if (watchdog_ != nullptr) watchdog_->entering(call);
    counted_ = totals_.size();
    const double entered = clock_seconds();
    issue_call(call);
    const double seconds = clock_seconds() - entered;
    if (watchdog_ != nullptr) watchdog_->left();
    if (counted_ < totals_.size()) {
        totals_[counted_].seconds += seconds;
        if (timeline_ != nullptr) timeline_->add(call, entered - origin_, entered + seconds - origin_);
    }
    if (call.times_return) call_returned();
}

void Executor::settle_idup(int64_t comm)
{
    const auto found = idup_pending_.find(comm);
    if (found == idup_pending_.end()) return;
    const auto request = requests_.find(found->second);
    if (request != requests_.end() && request->second != MPI_REQUEST_NULL) MPI_Wait(&request->second, MPI_STATUS_IGNORE);
    idup_pending_.erase(found);
}

void Executor::issue_call(const ScheduledCall& call)
{
    if (!idup_pending_.empty() && call.kind != CallKind::complete && call.kind != CallKind::compute) {
        settle_idup(call.comm);
    }
    switch (call.kind) {
    case CallKind::compute:
        compute(call);
        return;
    case CallKind::send:
        send(call);
        return;
    case CallKind::buffer:
        buffer(call);
        return;
    case CallKind::receive:
        receive(call);
        return;
    case CallKind::probe:
        probe(call);
        return;
    case CallKind::sendrecv:
        sendrecv(call);
        return;
    case CallKind::complete:
        complete(call);
        return;
    case CallKind::collective:
        collective(call);
        return;
    case CallKind::create_comm:
        create(call);
        return;
    case CallKind::one_sided:
        one_sided(call);
        return;
    case CallKind::io:
        file_io(call);
        return;
    case CallKind::free_comm:
        free_comm(call);
        return;
    }
}

void Executor::compute(const ScheduledCall& call)
{
    const double seconds = compute_bound_.cut(call.seconds);
    compute_for(seconds);
    compute_seconds_ += std::max(0.0, seconds);
}

void Executor::probe(const ScheduledCall& call)
{
#ifdef HTRACE_SIMULATED
    return;  // SMPI has no MPI_Mprobe: the MPI_Mrecv receives whichever message comes, as MPI_Recv
#endif
    const int peer = call.peer_in_comm == kProcNull ? MPI_PROC_NULL : call.peer_in_comm;
    const int tag = call.tag == kAnyTag ? MPI_ANY_TAG : static_cast<int>(call.tag);
    MPI_Message message = MPI_MESSAGE_NULL;
    MPI_Mprobe(peer, tag, comm(call.comm), &message, MPI_STATUS_IGNORE);
    probed_.push_back({call.comm, peer, call.tag, message});
    count(Op::Mprobe, 0);
}

void Executor::sendrecv(const ScheduledCall& call)
{
    const int to = call.peer_in_comm == kProcNull ? MPI_PROC_NULL : call.peer_in_comm;
    const int from = call.source_in_comm == kProcNull ? MPI_PROC_NULL : call.source_in_comm;
    if (call.op == Op::Sendrecv_replace) {
        MPI_Sendrecv_replace(send_.at_least(std::max(call.bytes, call.recv_bytes)), as_count(call.bytes), MPI_BYTE,
                             to, static_cast<int>(call.tag), from, static_cast<int>(call.recv_tag), comm(call.comm),
                             MPI_STATUS_IGNORE);
    } else {
        MPI_Sendrecv(send_.at_least(call.bytes), as_count(call.bytes), MPI_BYTE, to, static_cast<int>(call.tag),
                     receive_.at_least(call.recv_bytes), as_count(call.recv_bytes), MPI_BYTE, from,
                     static_cast<int>(call.recv_tag), comm(call.comm), MPI_STATUS_IGNORE);
    }
    count(call.op, call.bytes);
}

void Executor::one_sided(const ScheduledCall& call)
{
    const int64_t bytes = std::max({call.bytes, call.target_bytes, int64_t{16}});  // CAS: two elements
    windows_.issue(call, send_.at_least(bytes), receive_.at_least(std::max(call.recv_bytes, bytes)),
                   call.request != 0 ? new_request(call.request) : nullptr);
    count(call.op, call.bytes);
}

void Executor::file_io(const ScheduledCall& call)
{
    if (files_ == nullptr) {
        ++left_out_[static_cast<size_t>(call.op)];
        return;
    }
    const int64_t bytes = std::max(call.bytes, call.recv_bytes);
    files_->issue(call, call.op == Op::File_open ? comm(call.comm) : MPI_COMM_NULL, send_.at_least(bytes),
                  call.request != 0 ? new_request(call.request) : nullptr);
    count(call.op, bytes);
}

void Executor::free_comm(const ScheduledCall& call)
{
    auto found = comms_.find(call.comm);
    if (found == comms_.end() || call.comm <= 1) return;
    if (const auto started = collective_requests_.find(call.comm); started != collective_requests_.end()) {
        for (RequestId id : started->second) {
            const auto request = requests_.find(id);
            if (request != requests_.end() && request->second != MPI_REQUEST_NULL) {
                MPI_Wait(&request->second, MPI_STATUS_IGNORE);
            }
        }
        collective_requests_.erase(started);
    }
    if (call.op == Op::Comm_disconnect) {
        MPI_Comm_disconnect(&found->second);
    } else {
        MPI_Comm_free(&found->second);
    }
    comms_.erase(found);
    shaped_.erase(call.comm);
    count(call.op, 0);
}

// A buffered send goes through the buffer the trace attached, and as a standard send where none is
// (a trace that does not show it: one attached before MPI_Init returned).
void Executor::send(const ScheduledCall& call)
{
    const int peer = call.peer_in_comm == kProcNull ? MPI_PROC_NULL : call.peer_in_comm;
    char* buffer = send_.at_least(call.bytes);
    const int n = as_count(call.bytes);
    const int tag = static_cast<int>(call.tag);
    const bool buffered = attached_ != nullptr;
    Op issued = call.op;
    switch (call.op) {
    case Op::Send: MPI_Send(buffer, n, MPI_BYTE, peer, tag, comm(call.comm)); break;
    case Op::Ssend: MPI_Ssend(buffer, n, MPI_BYTE, peer, tag, comm(call.comm)); break;
    case Op::Bsend:
        if (buffered) {
            MPI_Bsend(buffer, n, MPI_BYTE, peer, tag, comm(call.comm));
        } else {
            MPI_Send(buffer, n, MPI_BYTE, peer, tag, comm(call.comm));
            issued = Op::Send;
        }
        break;
    case Op::Issend: MPI_Issend(buffer, n, MPI_BYTE, peer, tag, comm(call.comm), new_request(call.request)); break;
    case Op::Ibsend:
        if (buffered) {
            MPI_Ibsend(buffer, n, MPI_BYTE, peer, tag, comm(call.comm), new_request(call.request));
            break;
        }
        issued = Op::Isend;
        [[fallthrough]];
    default: MPI_Isend(buffer, n, MPI_BYTE, peer, tag, comm(call.comm), new_request(call.request)); break;
    }
    count(issued, call.bytes);
}

// Attaches a buffer of the recorded size, or detaches it: MPI_Buffer_detach waits until the messages
// in it have gone, as the program's did. Where message sizes were drawn, one of the largest fits.
void Executor::buffer(const ScheduledCall& call)
{
#ifdef HTRACE_SIMULATED
    return;  // SMPI's buffered sends do not complete through an attached buffer: they go as standard ones
#endif
    if (call.op == Op::Buffer_attach) {
        if (attached_ != nullptr) return;  // MPI allows one at a time; the run's second failed
        const int64_t size = std::max<int64_t>(call.bytes, call.recv_bytes > 0 ? call.recv_bytes + MPI_BSEND_OVERHEAD : 0);
        attached_ = std::make_unique<char[]>(static_cast<size_t>(std::max<int64_t>(size, 1)));
        MPI_Buffer_attach(attached_.get(), as_count(size));
    } else {
        if (attached_ == nullptr) return;
        void* given_back = nullptr;
        int size = 0;
        MPI_Buffer_detach(&given_back, &size);
        attached_.reset();
    }
    count(call.op, call.bytes);
}

// Schedules name every receive's source and tag: wildcards are replaced by what they matched. An
// MPI_Mrecv or MPI_Imrecv receives the message a replayed MPI_Mprobe of its peer took (a probe of
// MPI_PROC_NULL matches any tag), where there is one, else whichever message comes.
void Executor::receive(const ScheduledCall& call)
{
    const int peer = call.peer_in_comm == kProcNull ? MPI_PROC_NULL : call.peer_in_comm;
    char* buffer = receive_.at_least(call.bytes);
    const int n = as_count(call.bytes);
    const int tag = call.tag == kAnyTag ? MPI_ANY_TAG : static_cast<int>(call.tag);
    if (is_one_of(call.op, {Op::Mrecv, Op::Imrecv})) {
        const auto probed = std::find_if(probed_.begin(), probed_.end(), [&](const ProbedMessage& m) {
            return m.comm == call.comm && m.peer == peer &&
                   (m.tag == call.tag || peer == MPI_PROC_NULL || m.tag == kAnyTag || call.tag == kAnyTag);
        });
        if (probed != probed_.end()) {
            MPI_Message message = probed->message;
            probed_.erase(probed);
            if (call.request == 0) {
                MPI_Mrecv(buffer, n, MPI_BYTE, &message, MPI_STATUS_IGNORE);
            } else {
                MPI_Imrecv(buffer, n, MPI_BYTE, &message, new_request(call.request));
            }
            count(call.op, call.bytes);
            return;
        }
    }
    if (call.request == 0) {
        MPI_Recv(buffer, n, MPI_BYTE, peer, tag, comm(call.comm), MPI_STATUS_IGNORE);
        count(Op::Recv, call.bytes);
    } else {
        MPI_Irecv(buffer, n, MPI_BYTE, peer, tag, comm(call.comm), new_request(call.request));
        count(Op::Irecv, call.bytes);
    }
}

// The requests complete as the traced rank's call completed them, with the same function where one
// call of it completes exactly these requests (MPI_Wait, MPI_Waitany of one); MPI_Waitsome may
// return before all are done, so a set goes to MPI_Waitall.
void Executor::complete(const ScheduledCall& call)
{
    waiting_.clear();
    for (RequestId id : call.requests) {
        auto found = requests_.find(id);
        if (found == requests_.end()) continue;
        waiting_.push_back(found->second);
        requests_.erase(found);
    }
    const int n = static_cast<int>(waiting_.size());
    if (n == 0) return;
    if (call.op == Op::Request_free) {  // freed where the traced rank freed them: nobody waits
        for (MPI_Request& request : waiting_) MPI_Request_free(&request);
        count(Op::Request_free, 0);
        return;
    }
    Op issued = Op::Waitall;
    if (n == 1 && call.op == Op::Wait) {
        MPI_Wait(waiting_.data(), MPI_STATUS_IGNORE);
        issued = Op::Wait;
    } else if (n == 1 && call.op == Op::Waitany) {
        int index = MPI_UNDEFINED;
        MPI_Waitany(1, waiting_.data(), &index, MPI_STATUS_IGNORE);
        issued = Op::Waitany;
    } else {
        MPI_Waitall(n, waiting_.data(), MPI_STATUSES_IGNORE);
    }
    count(issued, 0);
}

// A communicator the trace shows being made is one group of world ranks: the whole parent splits or
// duplicates it, or its members alone make it (schedule: create_comm).
void Executor::create(const ScheduledCall& call)
{
    if (call.op == Op::Comm_idup) {
        // The handle is written when the request completes: into its own entry, which stays put.
        auto [slot, inserted] = comms_.try_emplace(call.new_comm, MPI_COMM_NULL);
        if (!inserted && slot->second != MPI_COMM_NULL && call.new_comm > 1) MPI_Comm_free(&slot->second);
        MPI_Comm_idup(comm(call.comm), &slot->second, new_request(call.request));
        idup_pending_[call.new_comm] = call.request;
        count(call.op, 0);
        return;
    }
    // A request the traced call made but the replayed one does not (Comm_idup of a parent some
    // member of which did not take part): completed at once.
    if (call.request != 0) *new_request(call.request) = MPI_REQUEST_NULL;
    MPI_Comm made = MPI_COMM_NULL;
    if (call.op == Op::Intercomm_create) {
        // Every group's leader is its first rank; the tag only has to agree, on a communicator of its own.
        MPI_Intercomm_create(comm(call.comm), 0, bridge_, call.remote_leader, 0, &made);
    } else if (call.op == Op::Intercomm_merge) {
        MPI_Intercomm_merge(comm(call.comm), call.high ? 1 : 0, &made);
    } else if (call.op == Op::Comm_dup) {
        MPI_Comm_dup(comm(call.comm), &made);
    } else if (call.op == Op::Comm_split) {
        // The members' colour is the world rank of their first (of an intercommunicator's, the lower
        // of both groups' firsts, which both sides know); the key orders them as recorded.
        int me = 0;
        PMPI_Comm_rank(MPI_COMM_WORLD, &me);
        const auto at = std::find(call.members.begin(), call.members.end(), me);
        int color = call.members.empty() ? MPI_UNDEFINED : call.members.front();
        if (color != MPI_UNDEFINED && call.remote_leader >= 0) color = std::min(color, static_cast<int>(call.remote_leader));
        MPI_Comm_split(comm(call.comm), color, static_cast<int>(at - call.members.begin()), &made);
    } else {
        MPI_Group world = MPI_GROUP_NULL;
        MPI_Group group = MPI_GROUP_NULL;
        PMPI_Comm_group(MPI_COMM_WORLD, &world);
        std::vector<int> ranks(call.members.begin(), call.members.end());
        PMPI_Group_incl(world, static_cast<int>(ranks.size()), ranks.data(), &group);
        MPI_Comm_create_group(MPI_COMM_WORLD, group, 0, &made);
        PMPI_Group_free(&group);
        PMPI_Group_free(&world);
    }
    count(call.op, 0);
    if (call.new_comm == kNoComm) return;
    const bool inherited = call.op == Op::Comm_dup && shaped_.count(call.comm) > 0;  // MPI_Comm_dup keeps one
    if (call.topology != nullptr && made != MPI_COMM_NULL && !inherited) made = with_topology(made, *call.topology);
    if (call.topology != nullptr || inherited) {
        shaped_.insert(call.new_comm);
    } else {
        shaped_.erase(call.new_comm);
    }
    auto [slot, inserted] = comms_.emplace(call.new_comm, made);
    if (!inserted) {
        if (slot->second != MPI_COMM_NULL && slot->first > 1) MPI_Comm_free(&slot->second);
        slot->second = made;
    }
}

// `made`, which holds the recorded members in the recorded order, with the recorded topology (reorder
// off, so that every rank stays where it was); `made` itself is freed. One the topology does not fit
// is kept as it is. (SMPI has no distributed graphs: there a graph's communicator is kept without.)
MPI_Comm Executor::with_topology(MPI_Comm made, const Topology& topology)
{
    int rank = 0;
    int size = 1;
    PMPI_Comm_rank(made, &rank);
    PMPI_Comm_size(made, &size);
    int64_t cells = 1;
    for (int64_t d : topology.dims) cells *= d;
    if (topology.cartesian && cells != size) return made;
#ifdef HTRACE_SIMULATED
    if (!topology.cartesian) return made;
#endif
    MPI_Comm shaped = MPI_COMM_NULL;
    if (topology.cartesian) {
        std::vector<int> dims(topology.dims.begin(), topology.dims.end());
        std::vector<int> periods(topology.periods.begin(), topology.periods.end());
        MPI_Cart_create(made, static_cast<int>(dims.size()), dims.data(), periods.data(), 0, &shaped);
    } else {
        const Neighbours n = neighbours_of(topology, rank, size);
        std::vector<int> sources(n.sources.begin(), n.sources.end());
        std::vector<int> destinations(n.destinations.begin(), n.destinations.end());
        MPI_Dist_graph_create_adjacent(made, static_cast<int>(sources.size()), sources.data(), MPI_UNWEIGHTED,
                                       static_cast<int>(destinations.size()), destinations.data(), MPI_UNWEIGHTED,
                                       MPI_INFO_NULL, 0, &shaped);
    }
    MPI_Comm_free(&made);
    return shaped;
}

// What one collective call is given: its communicator, its buffers and their sizes.
struct Executor::CollectiveArgs {
    MPI_Comm c;
    char* send;
    char* recv;
    const void* in;
    void* scattered_to;  // a scatter's root keeps its part in place
    int bytes;
    int recv_bytes;
    int root;
    MPI_Request* request;
};

namespace {

// Blocks per rank the buffers must hold.
int buffer_blocks(MPI_Comm c, const ScheduledCall& call)
{
    int size = 1;
    PMPI_Comm_size(c, &size);
    int inter = 0;
    PMPI_Comm_test_inter(c, &inter);
    if (inter) {  // buffers for whichever group is larger
        int remote = 1;
        PMPI_Comm_remote_size(c, &remote);
        size = std::max(size, remote);
    }
    // A neighbourhood collective's per-neighbour blocks: a graph may list more neighbours than ranks.
    return std::max({size, static_cast<int>(call.send_counts.size()), static_cast<int>(call.recv_counts.size())});
}

// The bytes a collective's send and receive buffers must hold at this rank. A block per rank only
// where the rank sends or receives one per rank (a root's gather or scatter, all-to-all, the v
// forms' counts); one block for a reduction or broadcast, and for a gather's or scatter's other
// ranks. Under SimGrid every rank's buffers are in one process: a block per rank at every rank of a
// 4,096-rank gather of 2 KB blocks is 64 GB.
struct BufferSizes {
    int64_t send;
    int64_t recv;
};

// Whether this rank is a rooted collective's root. SMPI's MPI_ROOT is 0, a rank like any other: only
// an intercommunicator's root gives it.
bool is_root(MPI_Comm c, int root)
{
    int inter = 0;
    PMPI_Comm_test_inter(c, &inter);
    if (inter) return root == MPI_ROOT;
    int rank = -1;
    PMPI_Comm_rank(c, &rank);
    return root == rank;
}

BufferSizes collective_buffer_sizes(Op op, MPI_Comm c, int blocks, int root, const ScheduledCall& call)
{
    const int64_t block = std::max(call.bytes, call.recv_bytes);
    if (is_one_of(op, {Op::Barrier, Op::Ibarrier})) return {0, 0};
    if (is_one_of(op, {Op::Bcast, Op::Ibcast, Op::Reduce, Op::Ireduce, Op::Allreduce, Op::Iallreduce, Op::Scan,
                       Op::Iscan, Op::Exscan, Op::Iexscan})) {
        return {block, block};
    }
    if (is_one_of(op, {Op::Gather, Op::Igather})) return {block, is_root(c, root) ? blocks * block : block};
    if (is_one_of(op, {Op::Scatter, Op::Iscatter})) return {is_root(c, root) ? blocks * block : block, block};
    // The rest as before: whichever of the call's sizes is largest, for every rank.
    return {std::max<int64_t>({call.bytes, sum(call.send_counts), int64_t(blocks) * call.bytes,
                               int64_t(blocks) * call.recv_bytes}),
            std::max<int64_t>({call.recv_bytes, call.bytes, sum(call.recv_counts), int64_t(blocks) * call.recv_bytes,
                               int64_t(blocks) * call.bytes})};
}

void to_ints(const std::vector<int64_t>& from, std::vector<int>& counts, std::vector<int>& displacements)
{
    counts.resize(from.size());
    displacements.resize(from.size());
    int offset = 0;
    for (size_t i = 0; i < from.size(); ++i) {
        counts[i] = as_count(from[i]);
        displacements[i] = offset;
        offset += counts[i];
    }
}

}  // namespace

void Executor::collective(const ScheduledCall& call)
{
    if (is_window_collective(call.op)) {
        windows_.collective(call, call.op == Op::Win_fence || call.op == Op::Win_free ? MPI_COMM_NULL : comm(call.comm));
        count(call.op, call.bytes);
        return;
    }
    const MPI_Comm c = comm(call.comm);
    const int size = buffer_blocks(c, call);
    const int bytes = as_count(call.bytes);
    const int recv_bytes = as_count(call.recv_bytes);
    const int root = call.root == kRootSelf ? MPI_ROOT : call.root == kProcNull ? MPI_PROC_NULL : call.root;
    MPI_Request* request = call.request != 0 ? collective_request(call) : nullptr;
    to_ints(call.send_counts, counts_, displacements_);
    to_ints(call.recv_counts, recv_counts_, recv_displacements_);
    const BufferSizes sizes = collective_buffer_sizes(call.op, c, size, root, call);
    char* send = send_.at_least(sizes.send);
    char* recv = receive_.at_least(sizes.recv);
    types_.assign(static_cast<size_t>(size), MPI_BYTE);
    const CollectiveArgs a{.c = c,
                           .send = send,
                           .recv = recv,
                           .in = call.in_place ? MPI_IN_PLACE : send,
                           .scattered_to = call.in_place ? MPI_IN_PLACE : recv,
                           .bytes = bytes,
                           .recv_bytes = recv_bytes,
                           .root = root,
                           .request = request};
    if (!issue_uniform_collective(call.op, a) && !issue_counted_collective(call.op, a) &&
        !issue_neighbourhood_collective(call.op, a)) {
        throw std::runtime_error("no replay for collective " + std::string(operation_name(call.op)));
    }
    count(call.op, call.bytes);
}

// A non-blocking collective's request, also listed under its communicator for free_comm.
MPI_Request* Executor::collective_request(const ScheduledCall& call)
{
    MPI_Request* request = new_request(call.request);
    auto& started = collective_requests_[call.comm];
    // Those completed since need no wait: the list keeps only what may still be pending.
    std::erase_if(started, [&](RequestId id) { return requests_.find(id) == requests_.end(); });
    started.push_back(call.request);
    return request;
}

// Collectives whose every rank sends and receives blocks of one size; false for any other.
bool Executor::issue_uniform_collective(Op op, const CollectiveArgs& a)
{
    const auto& [c, send, recv, in, scattered_to, bytes, recv_bytes, root, request] = a;
    switch (op) {
    case Op::Barrier: MPI_Barrier(c); break;
    case Op::Ibarrier: MPI_Ibarrier(c, request); break;
    case Op::Bcast: MPI_Bcast(send, bytes, MPI_BYTE, root, c); break;
    case Op::Ibcast: MPI_Ibcast(send, bytes, MPI_BYTE, root, c, request); break;
    case Op::Reduce: MPI_Reduce(send, recv, bytes, MPI_BYTE, MPI_BOR, root, c); break;
    case Op::Ireduce: MPI_Ireduce(send, recv, bytes, MPI_BYTE, MPI_BOR, root, c, request); break;
    case Op::Allreduce: MPI_Allreduce(send, recv, bytes, MPI_BYTE, MPI_BOR, c); break;
    case Op::Iallreduce: MPI_Iallreduce(send, recv, bytes, MPI_BYTE, MPI_BOR, c, request); break;
    case Op::Scan: MPI_Scan(send, recv, bytes, MPI_BYTE, MPI_BOR, c); break;
    case Op::Iscan: MPI_Iscan(send, recv, bytes, MPI_BYTE, MPI_BOR, c, request); break;
    case Op::Exscan: MPI_Exscan(send, recv, bytes, MPI_BYTE, MPI_BOR, c); break;
    case Op::Iexscan: MPI_Iexscan(send, recv, bytes, MPI_BYTE, MPI_BOR, c, request); break;
    case Op::Gather: MPI_Gather(in, bytes, MPI_BYTE, recv, recv_bytes, MPI_BYTE, root, c); break;
    case Op::Igather: MPI_Igather(in, bytes, MPI_BYTE, recv, recv_bytes, MPI_BYTE, root, c, request); break;
    case Op::Scatter: MPI_Scatter(send, bytes, MPI_BYTE, scattered_to, recv_bytes, MPI_BYTE, root, c); break;
    case Op::Iscatter:
        MPI_Iscatter(send, bytes, MPI_BYTE, scattered_to, recv_bytes, MPI_BYTE, root, c, request);
        break;
    case Op::Allgather: MPI_Allgather(in, bytes, MPI_BYTE, recv, recv_bytes, MPI_BYTE, c); break;
    case Op::Iallgather: MPI_Iallgather(in, bytes, MPI_BYTE, recv, recv_bytes, MPI_BYTE, c, request); break;
    case Op::Alltoall: MPI_Alltoall(in, bytes, MPI_BYTE, recv, recv_bytes, MPI_BYTE, c); break;
    case Op::Ialltoall: MPI_Ialltoall(in, bytes, MPI_BYTE, recv, recv_bytes, MPI_BYTE, c, request); break;
    case Op::Reduce_scatter_block: MPI_Reduce_scatter_block(send, recv, recv_bytes, MPI_BYTE, MPI_BOR, c); break;
    case Op::Ireduce_scatter_block:
        MPI_Ireduce_scatter_block(send, recv, recv_bytes, MPI_BYTE, MPI_BOR, c, request);
        break;
    default: return false;
    }
    return true;
}

// Collectives with a count per rank (the v and w forms, and reductions scattered by counts); false
// for any other.
bool Executor::issue_counted_collective(Op op, const CollectiveArgs& a)
{
    const auto& [c, send, recv, in, scattered_to, bytes, recv_bytes, root, request] = a;
    switch (op) {
    case Op::Gatherv:
        MPI_Gatherv(in, bytes, MPI_BYTE, recv, recv_counts_.data(), recv_displacements_.data(), MPI_BYTE, root, c);
        break;
    case Op::Igatherv:
        MPI_Igatherv(in, bytes, MPI_BYTE, recv, recv_counts_.data(), recv_displacements_.data(), MPI_BYTE, root, c,
                     request);
        break;
    case Op::Scatterv:
        MPI_Scatterv(send, counts_.data(), displacements_.data(), MPI_BYTE, scattered_to, recv_bytes, MPI_BYTE, root,
                     c);
        break;
    case Op::Iscatterv:
        MPI_Iscatterv(send, counts_.data(), displacements_.data(), MPI_BYTE, scattered_to, recv_bytes, MPI_BYTE, root,
                      c, request);
        break;
    case Op::Allgatherv:
        MPI_Allgatherv(in, bytes, MPI_BYTE, recv, recv_counts_.data(), recv_displacements_.data(), MPI_BYTE, c);
        break;
    case Op::Iallgatherv:
        MPI_Iallgatherv(in, bytes, MPI_BYTE, recv, recv_counts_.data(), recv_displacements_.data(), MPI_BYTE, c,
                        request);
        break;
    case Op::Alltoallv:
        MPI_Alltoallv(in, counts_.data(), displacements_.data(), MPI_BYTE, recv, recv_counts_.data(),
                      recv_displacements_.data(), MPI_BYTE, c);
        break;
    case Op::Ialltoallv:
        MPI_Ialltoallv(in, counts_.data(), displacements_.data(), MPI_BYTE, recv, recv_counts_.data(),
                       recv_displacements_.data(), MPI_BYTE, c, request);
        break;
    // Alltoallw's displacements are in bytes, which MPI_BYTE makes the same as Alltoallv's.
    case Op::Alltoallw:
        MPI_Alltoallw(in, counts_.data(), displacements_.data(), types_.data(), recv, recv_counts_.data(),
                      recv_displacements_.data(), types_.data(), c);
        break;
    case Op::Ialltoallw:
        MPI_Ialltoallw(in, counts_.data(), displacements_.data(), types_.data(), recv, recv_counts_.data(),
                       recv_displacements_.data(), types_.data(), c, request);
        break;
    case Op::Reduce_scatter: MPI_Reduce_scatter(send, recv, recv_counts_.data(), MPI_BYTE, MPI_BOR, c); break;
    case Op::Ireduce_scatter:
        MPI_Ireduce_scatter(send, recv, recv_counts_.data(), MPI_BYTE, MPI_BOR, c, request);
        break;
    default: return false;
    }
    return true;
}

// Collectives over a topology's neighbours; false for any other.
bool Executor::issue_neighbourhood_collective(Op op, const CollectiveArgs& a)
{
    const auto& [c, send, recv, in, scattered_to, bytes, recv_bytes, root, request] = a;
    switch (op) {
    case Op::Neighbor_allgather: MPI_Neighbor_allgather(send, bytes, MPI_BYTE, recv, recv_bytes, MPI_BYTE, c); break;
    case Op::Ineighbor_allgather:
        MPI_Ineighbor_allgather(send, bytes, MPI_BYTE, recv, recv_bytes, MPI_BYTE, c, request);
        break;
    case Op::Neighbor_alltoall: MPI_Neighbor_alltoall(send, bytes, MPI_BYTE, recv, recv_bytes, MPI_BYTE, c); break;
    case Op::Ineighbor_alltoall:
        MPI_Ineighbor_alltoall(send, bytes, MPI_BYTE, recv, recv_bytes, MPI_BYTE, c, request);
        break;
    case Op::Neighbor_allgatherv:
        MPI_Neighbor_allgatherv(send, bytes, MPI_BYTE, recv, recv_counts_.data(), recv_displacements_.data(), MPI_BYTE,
                                c);
        break;
    case Op::Ineighbor_allgatherv:
        MPI_Ineighbor_allgatherv(send, bytes, MPI_BYTE, recv, recv_counts_.data(), recv_displacements_.data(),
                                 MPI_BYTE, c, request);
        break;
    case Op::Neighbor_alltoallv:
        MPI_Neighbor_alltoallv(send, counts_.data(), displacements_.data(), MPI_BYTE, recv, recv_counts_.data(),
                               recv_displacements_.data(), MPI_BYTE, c);
        break;
    case Op::Ineighbor_alltoallv:
        MPI_Ineighbor_alltoallv(send, counts_.data(), displacements_.data(), MPI_BYTE, recv, recv_counts_.data(),
                                recv_displacements_.data(), MPI_BYTE, c, request);
        break;
    case Op::Neighbor_alltoallw:
    case Op::Ineighbor_alltoallw: {
        // Its displacements are addresses' differences, in bytes.
        const std::vector<MPI_Aint> sent_at(displacements_.begin(), displacements_.end());
        const std::vector<MPI_Aint> received_at(recv_displacements_.begin(), recv_displacements_.end());
        if (op == Op::Neighbor_alltoallw) {
            MPI_Neighbor_alltoallw(send, counts_.data(), sent_at.data(), types_.data(), recv, recv_counts_.data(),
                                   received_at.data(), types_.data(), c);
        } else {
            MPI_Ineighbor_alltoallw(send, counts_.data(), sent_at.data(), types_.data(), recv, recv_counts_.data(),
                                    received_at.data(), types_.data(), c, request);
        }
        break;
    }
    default: return false;
    }
    return true;
}

}  // namespace htrace::replay
