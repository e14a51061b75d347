#include "replay/rank_stream.hpp"

#include "replay/neighbour_exchange.hpp"

#include <algorithm>
#include <numeric>

namespace htrace::replay {
namespace {

// Ready sends need what replay cannot promise (a receive already posted in real time): they go out
// as standard sends, moving the same bytes. Buffered sends go through the buffer the trace attached
// (the executor sends them as standard ones where none is). A started persistent send goes out as the
// non-blocking send its init describes.
Op replayed_send(const Event& e)
{
    switch (e.op) {
    case Op::Rsend: return Op::Send;
    case Op::Irsend: return Op::Isend;
    case Op::Start:
        if (e.find(Role::synchronous) != nullptr) return Op::Issend;
        return e.find(Role::buffered) != nullptr ? Op::Ibsend : Op::Isend;
    default: return e.op;
    }
}

// A started persistent receive is the MPI_Irecv its init described.
Op replayed_receive(Op op) { return op == Op::Start ? Op::Irecv : op; }

// What a started persistent request does: its init's send (bytes) or receive (recv_bytes).
bool starts_send(const Event& e) { return e.find(Role::bytes) != nullptr; }
bool starts_receive(const Event& e) { return e.find(Role::recv_bytes) != nullptr; }

// Collectives whose per-rank sizes differ by design: every participant's own values make the call.
bool is_vector_collective(Op op)
{
    return is_one_of(op, {Op::Gatherv, Op::Igatherv, Op::Scatterv, Op::Iscatterv, Op::Allgatherv,
                          Op::Iallgatherv, Op::Alltoallv, Op::Ialltoallv, Op::Alltoallw, Op::Ialltoallw,
                          Op::Reduce_scatter, Op::Ireduce_scatter});
}

// Collectives whose send buffer may be MPI_IN_PLACE, which the trace shows as no send bytes but some
// receive bytes.
bool may_be_in_place(Op op, bool at_root)
{
    if (is_one_of(op, {Op::Gather, Op::Igather, Op::Gatherv, Op::Igatherv})) return at_root;
    return is_one_of(op, {Op::Allgather, Op::Iallgather, Op::Allgatherv, Op::Iallgatherv, Op::Alltoall,
                          Op::Ialltoall});
}

// Scatters whose root may have kept its part in place (MPI_IN_PLACE as its receive buffer), which
// the trace shows as sending but receiving nothing there.
bool may_receive_in_place(Op op, bool at_root)
{
    return at_root && is_one_of(op, {Op::Scatter, Op::Iscatter, Op::Scatterv, Op::Iscatterv});
}

// Creations that every member of the parent communicator calls, each getting its part (or none).
constexpr std::initializer_list<Op> kSplitLike = {
    Op::Comm_dup, Op::Comm_dup_with_info, Op::Comm_idup, Op::Comm_split, Op::Comm_split_type, Op::Comm_create, Op::Cart_create,
    Op::Cart_sub, Op::Graph_create, Op::Dist_graph_create, Op::Dist_graph_create_adjacent};

bool has_histogram(const Event& e, Role role)
{
    const Value* v = e.find(role);
    return v != nullptr && v->is_histogram();
}

int64_t largest(const Value& v)
{
    if (v.is_exact()) return v.exact();
    if (v.is_histogram()) return v.histogram().max().value;
    int64_t most = 0;
    for (const auto& entry : v.per_rank()) most = std::max(most, entry.value);
    return most;
}

// The largest message any send of the trace may carry, whether any message or receive size is
// drawn, whether any completion cancelled something (and a send), the most bytes a one-sided call
// targets, and whether any one-sided size is drawn.
void survey_messages(const Sequence& seq, int64_t& largest_bytes, bool& drawn, bool& cancellations,
                     bool& cancelled_sends, int64_t& largest_target, bool& target_drawn)
{
    for (const auto& node : seq) {
        if (node.is_loop()) {
            survey_messages(node.loop().body, largest_bytes, drawn, cancellations, cancelled_sends, largest_target,
                            target_drawn);
            continue;
        }
        const Event& e = node.event();
        if (const Value* target = e.find(Role::target_bytes)) largest_target = std::max(largest_target, largest(*target));
        if (operation_kind(e.op) == OperationKind::one_sided) {
            for (const Role role : {Role::bytes, Role::target_bytes, Role::recv_bytes}) {
                const Value* size = e.find(role);
                target_drawn = target_drawn || (size != nullptr && size->is_histogram());
            }
        }
        const auto kind = operation_kind(e.op);
        cancellations = cancellations || e.find(Role::cancelled_set) != nullptr;
        cancelled_sends = cancelled_sends || e.find(Role::cancelled_peer) != nullptr;
        // A drawn receive size may be smaller than the exact size of the message it takes.
        if (const Value* capacity = e.find(Role::recv_bytes)) drawn = drawn || capacity->is_histogram();
        if (kind != OperationKind::send && kind != OperationKind::sendrecv && kind != OperationKind::start) continue;
        if (const Value* bytes = e.find(Role::bytes)) {
            largest_bytes = std::max(largest_bytes, largest(*bytes));
            drawn = drawn || bytes->is_histogram();
        }
    }
}

// Whether the trace holds no drawn value at all (no histogram loop count or parameter): then it is the
// run's calls, whatever its precision, as a lossless trace is.
bool nothing_drawn(const Sequence& seq)
{
    return std::all_of(seq.begin(), seq.end(), [](const Node& node) {
        if (node.is_loop()) return !node.loop().iterations.is_histogram() && nothing_drawn(node.loop().body);
        const auto& params = node.event().params;
        return std::none_of(params.begin(), params.end(), [](const Param& p) { return p.value.is_histogram(); });
    });
}

}  // namespace

std::optional<Rank> CommView::world_peer(int64_t relative) const
{
    if (relative == kProcNull) return static_cast<Rank>(kProcNull);
    if (!members || members->empty() || relative < 0 || my_rank < 0) return std::nullopt;
    return (*members)[static_cast<size_t>((my_rank + relative) % static_cast<int64_t>(members->size()))];
}

void Item::reset()
{
    // Field by field: a copy of a blank item keeps the lists' capacity too, but took a sixth of the
    // replay of a code of short calls (its lists are assigned one by one, out of line).
    kind = ItemKind::compute;
    call.reset();
    creates_request = false;
    asked = Asked{};
    completion.reset();
    shared_draw_iteration = 0;
}

void Completion::reset()
{
    frees = false;
    recorded = false;
    completed_set.clear();
    cancelled_set.clear();
    completed_something = true;
    matched_peers.clear();
    matched_tags.clear();
}

Item& ItemQueue::push_back()
{
    if (size_ == slots_.size()) {
        std::vector<std::unique_ptr<Item>> grown(std::max<size_t>(16, 2 * slots_.size()));
        for (size_t i = 0; i < size_; ++i) grown[i] = std::move(slots_[(head_ + i) & (slots_.size() - 1)]);
        slots_ = std::move(grown);
        head_ = 0;
    }
    auto& slot = slots_[(head_ + size_) & (slots_.size() - 1)];
    ++size_;
    if (!slot) {
        slot = std::make_unique<Item>();
        return *slot;
    }
    slot->reset();
    return *slot;
}

void ItemQueue::pop_front()
{
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
}

void ItemQueue::pop_back() { --size_; }

RankStream::RankStream(const Trace& trace, uint64_t seed, Rank rank, bool incoming)
    : trace_(trace), me_(rank), incoming_(incoming), draws_(seed), cursor_(trace, &draws_)
{
    survey_messages(trace.body, largest_message_, message_sizes_drawn_, has_cancellations_, has_cancelled_sends_,
                    largest_target_, target_sizes_drawn_);
    as_run_ = trace.header.precision == 100 || nothing_drawn(trace.body);
}

const Item* RankStream::peek(size_t ahead)
{
    const size_t kept_ahead = incoming_ && has_cancelled_sends_ ? ahead + kWithdrawWindow : ahead;
    while (items_.size() <= kept_ahead) {
        if (!produce()) break;
    }
    while (items_.size() <= ahead) {
        if (!produce()) return nullptr;
    }
    return &items_[ahead];
}

void RankStream::pop()
{
    if (!items_.empty()) items_.pop_front();
}

bool RankStream::produce()
{
    const size_t before = items_.size();
    while (items_.size() == before) {
        const auto instance = cursor_.next();
        if (!instance) {
            if (walk_ended_) return false;
            walk_ended_ = true;
            finish_waiting_parts();
            return items_.size() > before;
        }
        shared_draw_iteration_ = instance->shared_draw_iteration;
        on_instance(*instance->event, *instance->participants, cursor_.communicators());
    }
    return true;
}

// Every rank draws the same values in the same order: each histogram parameter of each participant,
// whether or not this rank needs it. Other values are read when asked for.
void RankStream::draw_all(const Event& e, const std::vector<Rank>& participants)
{
    event_ = &e;
    participants_ = &participants;
    const bool any = std::any_of(e.params.begin(), e.params.end(), [](const Param& p) { return p.value.is_histogram(); });
    drawn_.assign(any ? participants.size() * e.params.size() : 0, std::nullopt);
    if (!any) return;
    for (size_t i = 0; i < participants.size(); ++i) {
        for (size_t k = 0; k < e.params.size(); ++k) {
            const Param& param = e.params[k];
            if (!param.value.is_histogram()) continue;
            // One draw for all participants of the instance where the histogram is alike on every
            // rank (they did the same thing in the same iteration), and for relative peers: all
            // participants then shift by the same offset, so each rank receives as many messages as
            // it sends. Drawn one by one, peers make a random graph, where some ranks receive
            // several messages and others none, and those pair with no receive.
            const bool once = param.value.alike_on_every_rank() || role_is_relative(param.role);
            drawn_[i * e.params.size() + k] =
                i > 0 && once ? drawn_[k]
                              : draws_.draw(param.value.histogram(), draw_site(e, param.role), once ? participants.size() : 1);
        }
    }
}

std::optional<int64_t> RankStream::value(size_t participant, size_t param) const
{
    const Value& v = event_->params[param].value;
    if (v.is_histogram()) return drawn_[participant * event_->params.size() + param];
    return v.value_for((*participants_)[participant]);
}

std::optional<int64_t> RankStream::value(size_t participant, Role role) const
{
    for (size_t k = 0; k < event_->params.size(); ++k) {
        if (event_->params[k].role == role) return value(participant, k);
    }
    return std::nullopt;
}

bool RankStream::drawn(Role role) const { return has_histogram(*event_, role); }

Item& RankStream::add(ItemKind kind, const Event& e)
{
    Item& item = items_.push_back();
    item.kind = kind;
    item.call.event = &e;
    item.call.op = e.op;
    item.shared_draw_iteration = shared_draw_iteration_;
    return item;
}

void RankStream::on_instance(const Event& e, const std::vector<Rank>& participants, const CommunicatorTable& comms)
{
    draw_all(e, participants);
    const auto at = std::lower_bound(participants.begin(), participants.end(), me_);
    const bool taking_part = at != participants.end() && *at == me_;
    const size_t me = static_cast<size_t>(at - participants.begin());
    const TimeStats& compute = e.compute_of(me_);
    if (taking_part && compute.count > 0 && compute.mean > 0) {
        Item& delay = add(ItemKind::compute, e);
        delay.call.kind = CallKind::compute;
        delay.call.seconds = compute.mean;
    }
    switch (operation_kind(e.op)) {
    case OperationKind::send:
    case OperationKind::sendrecv:
        sends(e, participants, comms);
        if (taking_part && operation_kind(e.op) == OperationKind::sendrecv) receive(e, comms, me);
        break;
    case OperationKind::recv:
        if (taking_part) receive(e, comms, me);
        break;
    case OperationKind::start:
        if (starts_send(e)) {
            sends(e, participants, comms);
        } else if (taking_part && starts_receive(e)) {
            receive(e, comms, me);
        } else if (taking_part) {
            not_replayed(e, true);  // started a request whose init the trace does not hold
        }
        break;
    case OperationKind::completion:
        if (incoming_ && has_cancelled_sends_ && e.find(Role::cancelled_peer) != nullptr) {
            withdraw_cancelled(e, participants, comms);
        }
        if (taking_part) completion(e, me);
        break;
    case OperationKind::request_free:
        if (taking_part) completion(e, me);
        break;
    case OperationKind::collective:
        if (taking_part && is_window_collective(e.op)) {
            window_collective(e, participants, comms, me);
        } else if (!is_window_collective(e.op) && !join_parts(e, participants, comms) && taking_part) {
            collective(e, participants, comms, me);
        }
        break;
    case OperationKind::one_sided:
        if (taking_part) one_sided(e, me);
        break;
    case OperationKind::io:
        if (taking_part) io(e, me);
        break;
    case OperationKind::buffer:
        if (taking_part) buffer(e, me);
        break;
    case OperationKind::comm_create:
        if (taking_part) create(e, participants, comms, me);
        break;
    case OperationKind::comm_free:
        if (taking_part) release(e, comms, me);
        break;
    case OperationKind::opaque:
        if (taking_part) ++summary_.by_name_only;
        break;
    case OperationKind::probe:
        if (taking_part && is_one_of(e.op, {Op::Mprobe, Op::Improbe})) matched_probe(e, comms, me);
        break;
    default:  // init, finalize, persistent inits, cancels: nothing to issue
        break;
    }
}

// Each participant's send, in participant order: the message it aims at this rank, and this rank's
// own send (a Sendrecv's comes with its receive half, after the instance's sends).
void RankStream::sends(const Event& e, const std::vector<Rank>& participants, const CommunicatorTable& comms)
{
    if (!incoming_) {
        const auto at = std::lower_bound(participants.begin(), participants.end(), me_);
        if (at != participants.end() && *at == me_) send_of(e, participants, static_cast<size_t>(at - participants.begin()), comms);
        return;
    }
    if (!world_senders(e, participants)) {
        for (size_t i = 0; i < participants.size(); ++i) send_of(e, participants, i, comms);
        return;
    }
    for (size_t i : senders_) send_of(e, participants, i, comms);
}

// Without drawn values on the world communicator, the participants that matter to this rank
// (itself, and those whose relative peer lands on it) follow from the peer values alone: the
// walk's cost per event stays independent of the rank count. Fills senders_ in participant
// order; false where that shortcut does not apply.
bool RankStream::world_senders(const Event& e, const std::vector<Rank>& participants)
{
    const Value* comm = e.find(Role::comm);
    const Value* peer = e.find(Role::peer);
    if (!drawn_.empty() || comm == nullptr || peer == nullptr || !comm->is_exact() || comm->exact() != 0 ||
        peer->is_histogram()) {
        return false;
    }
    const auto world = static_cast<int64_t>(trace_.header.ranks);
    senders_.clear();
    auto consider = [&](int64_t relative) {
        if (relative < 0 || world <= 0) return;
        const auto sender = static_cast<Rank>(((me_ - relative) % world + world) % world);
        const auto at = std::lower_bound(participants.begin(), participants.end(), sender);
        if (at != participants.end() && *at == sender && peer->value_for(sender) == relative) {
            senders_.push_back(static_cast<size_t>(at - participants.begin()));
        }
    };
    if (peer->is_exact()) {
        consider(peer->exact());
    } else {
        for (const auto& entry : peer->per_rank()) consider(entry.value);
    }
    const auto me = std::lower_bound(participants.begin(), participants.end(), me_);
    if (me != participants.end() && *me == me_) senders_.push_back(static_cast<size_t>(me - participants.begin()));
    std::sort(senders_.begin(), senders_.end());
    senders_.erase(std::unique(senders_.begin(), senders_.end()), senders_.end());
    return true;
}

void RankStream::send_of(const Event& e, const std::vector<Rank>& participants, size_t i, const CommunicatorTable& comms)
{
    const Rank sender = participants[i];
    const auto comm = value(i, Role::comm);
    const auto peer = value(i, Role::peer);
    if (!comm || !peer) return;
    const bool sendrecv = operation_kind(e.op) == OperationKind::sendrecv;
    std::optional<Rank> destination;
    if (*peer == kProcNull) {
        destination = static_cast<Rank>(kProcNull);
    } else {
        destination = comms.world_peer(sender, *comm, *peer);
    }
    if (!destination) {
        if (sender == me_ && !sendrecv) not_replayed(e, creates_request(e.op));
        return;
    }
    const int64_t tag = value(i, Role::tag).value_or(0);
    const int64_t bytes = std::max<int64_t>(0, value(i, Role::bytes).value_or(0));
    if (*destination == me_ && incoming_) {
        const auto my_comm = comms.local_id(me_, sender, *comm);
        const auto source = my_comm ? comms.rank_in(me_, *my_comm, sender) : std::nullopt;
        // Point-to-point calls of different ranks keep no order between collectives: this rank may
        // have freed the communicator before the walk meets the send its receive took. The message
        // still counts on its channel (the communicator itself, by the sender's group of it), though
        // this rank has no id of it left to post a receive on (kNoComm).
        const auto senders = comms.shared_members(sender, *comm);
        const bool inter = comms.remote_members(sender, *comm) != nullptr;
        const auto freed_here = !my_comm && senders && !inter
                                    ? std::find(senders->begin(), senders->end(), sender) - senders->begin()
                                    : std::ptrdiff_t{-1};
        if ((my_comm && source) || freed_here >= 0) {
            Item& message = add(ItemKind::incoming, e);
            message.asked.comm.members = my_comm ? comms.shared_peer_group(me_, *my_comm) : senders;
            message.call.kind = CallKind::receive;
            message.call.op = Op::Irecv;
            message.call.comm = my_comm.value_or(kNoComm);
            message.call.peer = sender;
            message.call.peer_in_comm = my_comm ? *source : static_cast<int32_t>(freed_here);
            message.call.tag = tag;
            message.call.bytes = bytes;
        }
    }
    if (sender != me_ || sendrecv) return;
    Item& send = add(ItemKind::send, e);
    send.call.kind = CallKind::send;
    send.call.op = replayed_send(e);
    send.call.comm = *comm;
    send.call.peer = *destination;
    send.call.peer_in_comm = *destination == kProcNull ? static_cast<int32_t>(kProcNull)
                                                       : comms.rank_in(me_, *comm, *destination).value_or(-1);
    send.call.tag = tag;
    send.call.bytes = bytes;
    send.creates_request = creates_request(e.op);
}

// A receive as the traced rank made it (Recv, Irecv, or a Sendrecv with its send half); null where
// it cannot be replayed.
Item* RankStream::receive(const Event& e, const CommunicatorTable& comms, size_t me)
{
    const bool sendrecv = operation_kind(e.op) == OperationKind::sendrecv;
    const auto comm = value(me, Role::comm);
    CommView view;
    if (comm) {
        view.members = comms.shared_peer_group(me_, *comm);
        view.my_rank = comms.rank_in(me_, *comm, me_).value_or(-1);
    }
    if (!view.members || view.my_rank < 0) {
        not_replayed(e, creates_request(e.op));
        return nullptr;
    }
    Item& item = add(sendrecv ? ItemKind::sendrecv : ItemKind::receive, e);
    ScheduledCall& call = item.call;
    call.kind = sendrecv ? CallKind::sendrecv : CallKind::receive;
    call.comm = *comm;
    item.creates_request = creates_request(e.op);
    Asked& asked = item.asked;
    asked.comm = view;

    const Role source_role = sendrecv ? Role::source : Role::peer;
    const Role tag_role = sendrecv ? Role::recv_tag : Role::tag;
    const auto source = value(me, source_role);
    const auto tag = value(me, tag_role);
    const auto matched_source = value(me, Role::matched_peer);  // on the call itself: Recv, Sendrecv
    const auto matched_tag = value(me, Role::matched_tag);
    asked.any_source = source == kAnySource;
    asked.any_tag = tag == kAnyTag;
    std::optional<Rank> from;
    if (asked.any_source) {
        if (matched_source) from = view.world_peer(*matched_source);
        asked.source_drawn = drawn(Role::matched_peer);
    } else if (source) {
        from = view.world_peer(*source);
        asked.source_drawn = drawn(source_role);
    }
    std::optional<int64_t> with_tag;
    if (asked.any_tag) {
        with_tag = matched_tag;
        asked.tag_drawn = drawn(Role::matched_tag);
    } else {
        with_tag = tag;
        asked.tag_drawn = drawn(tag_role);
    }
    // A receive from MPI_PROC_NULL (MPI_Mrecv of MPI_MESSAGE_NO_PROC) takes no message: any tag does.
    if (from == static_cast<Rank>(kProcNull) && !with_tag) with_tag = kAnyTag;
    asked.source_known = from.has_value();
    asked.tag_known = with_tag.has_value();
    const Rank from_rank = from.value_or(-1);
    const int32_t from_in_comm = from_rank == kProcNull ? static_cast<int32_t>(kProcNull)
                                                        : comms.rank_in(me_, *comm, from_rank).value_or(-1);
    if (!sendrecv) {
        call.op = replayed_receive(e.op);
        call.peer = from_rank;
        call.peer_in_comm = from_in_comm;
        call.tag = with_tag.value_or(0);
        call.bytes = std::max<int64_t>(0, value(me, Role::recv_bytes).value_or(0));
        return &item;
    }
    call.source = from_rank;
    call.source_in_comm = from_in_comm;
    call.recv_tag = with_tag.value_or(0);
    call.bytes = std::max<int64_t>(0, value(me, Role::bytes).value_or(0));
    // Sendrecv_replace receives into the buffer it sends from.
    call.recv_bytes = std::max<int64_t>(0, value(me, Role::recv_bytes).value_or(call.bytes));
    call.tag = value(me, Role::tag).value_or(0);
    const auto peer = value(me, Role::peer);
    const auto to = peer ? view.world_peer(*peer) : std::nullopt;
    call.peer = to.value_or(-1);
    call.peer_in_comm = !to ? -1
                        : *to == kProcNull ? static_cast<int32_t>(kProcNull)
                                           : comms.rank_in(me_, *comm, *to).value_or(-1);
    if (!to) {
        items_.pop_back();
        not_replayed(e, false);
        return nullptr;
    }
    return &item;
}

// MPI_Mprobe, and an MPI_Improbe that found a message, took that message off the queue: replay takes
// it where they did, so that a receive made before the MPI_Mrecv cannot take it instead. One that
// found nothing is polling, which replay leaves out like any probe.
void RankStream::matched_probe(const Event& e, const CommunicatorTable& comms, size_t me)
{
    if (e.op == Op::Improbe && value(me, Role::completed).value_or(0) == 0) return;
    Item* item = receive(e, comms, me);
    if (item == nullptr) return;
    item->kind = ItemKind::probe;
    item->call.kind = CallKind::probe;
    item->call.op = Op::Mprobe;
    item->call.bytes = 0;
}

void RankStream::completion(const Event& e, size_t me)
{
    Item& item = add(ItemKind::completion, e);
    item.call.kind = CallKind::complete;
    // A Test that completed something replays as the Wait that would have completed it: the polling
    // before it is timing, not communication.
    switch (e.op) {
    case Op::Test: item.call.op = Op::Wait; break;
    case Op::Testall: item.call.op = Op::Waitall; break;
    case Op::Testany: item.call.op = Op::Waitany; break;
    case Op::Testsome: item.call.op = Op::Waitsome; break;
    default: item.call.op = e.op; break;
    }
    Completion& completion = item.completion;
    completion.frees = operation_kind(e.op) == OperationKind::request_free;
    for (size_t k = 0; k < e.params.size(); ++k) {
        const auto v = value(me, k);
        if (!v) continue;
        switch (e.params[k].role) {
        case Role::completed_set:
            completion.recorded = true;
            completion.completed_set.push_back(*v);
            break;
        case Role::cancelled_set: completion.cancelled_set.push_back(*v); break;
        case Role::matched_peer: completion.matched_peers.push_back(*v); break;
        case Role::matched_tag: completion.matched_tags.push_back(*v); break;
        case Role::completed:
            if (is_one_of(e.op, {Op::Test, Op::Testall, Op::Testany, Op::Testsome, Op::Waitsome})) {
                completion.completed_something = *v > 0;
            }
            break;
        default: break;
        }
    }
}

namespace {

bool all_take_part(const std::vector<Rank>* group, const std::vector<Rank>& participants)
{
    return group != nullptr && std::all_of(group->begin(), group->end(), [&](Rank m) {
               return std::binary_search(participants.begin(), participants.end(), m);
           });
}

// On an intercommunicator each group of a reduce-scatter-block scatters one vector, as long in both
// groups, in blocks of its own size: the first participant's blocks give the vector, a multiple of
// both group sizes.
void scatter_blocks_between_groups(int64_t block, const std::vector<Rank>& participants,
                                   const std::vector<Rank>& members, const std::vector<Rank>& remote,
                                   ScheduledCall& call)
{
    const auto local = static_cast<int64_t>(members.size());
    const auto other = static_cast<int64_t>(remote.size());
    const bool first_here = std::find(members.begin(), members.end(), participants[0]) != members.end();
    const int64_t unit = std::lcm(local, other);
    const int64_t vector = std::max<int64_t>(1, (block * (first_here ? local : other) + unit - 1) / unit) * unit;
    call.bytes = vector;
    call.recv_bytes = vector / local;
}

}  // namespace

// Whether this rank's collective is replayed; one left apart from members of its communicator is counted.
bool RankStream::replays_collective(Op op, const std::vector<Rank>& participants, const std::vector<Rank>* members,
                                    const std::vector<Rank>* remote)
{
    // A collective replays where every member of its communicator (both groups of an
    // intercommunicator) takes part. An instance the merge left in parts replays too where the
    // trace is the run (lossless, or nothing drawn) and each part stands alone: then every member
    // makes exactly its own calls, in its own order, and MPI matches them as in the run (non-blocking
    // collectives on two communicators started in opposite orders, which no one order of events can
    // keep together). Where something was drawn, a part may stand for other calls than the others'
    // (the checker finds replays that hang so): it is left out.
    const bool stands_alone = as_run_ && members != nullptr && !is_vector_collective(op) &&
                              !is_neighbor_collective(op);
    const bool whole = (all_take_part(members, participants) &&
                        (remote == nullptr || all_take_part(remote, participants))) ||
                       stands_alone;
    // The v-collectives' per-member sizes are derived for one group (a reduce-scatter's, even shares
    // of one total, serve either group of an intercommunicator).
    const bool vector_across = remote != nullptr && is_vector_collective(op) &&
                               !is_one_of(op, {Op::Reduce_scatter, Op::Ireduce_scatter});
    const bool no_topology = is_neighbor_collective(op) && comm_topologies_.count(members) == 0;
    if (!whole) ++collectives_left_apart_;
    return whole && !no_topology && !vector_across;
}

void RankStream::collective(const Event& e, const std::vector<Rank>& participants, const CommunicatorTable& comms,
                            size_t me)
{
    const auto comm = value(me, Role::comm);
    const auto* members = comm ? comms.members(me_, *comm) : nullptr;
    const auto* remote = comm ? comms.remote_members(me_, *comm) : nullptr;
    if (!replays_collective(e.op, participants, members, remote)) {
        not_replayed(e, creates_request(e.op));
        return;
    }
    Item& item = add(ItemKind::collective, e);
    item.creates_request = creates_request(e.op);
    ScheduledCall& call = item.call;
    call.kind = CallKind::collective;
    call.comm = *comm;
    if (const auto root = value(me, Role::root)) call.root = static_cast<int32_t>(*root);
    const bool at_root = call.root >= 0 && static_cast<size_t>(call.root) < members->size() &&
                         (*members)[static_cast<size_t>(call.root)] == me_;
    auto size = [&](size_t participant, Role role) {
        return std::max<int64_t>(0, value(participant, role).value_or(0));
    };
    call.bytes = size(me, Role::bytes);
    call.recv_bytes = size(me, Role::recv_bytes);
    if (is_neighbor_collective(e.op)) {
        if (has_histogram(e, Role::bytes) || has_histogram(e, Role::recv_bytes)) {
            const int64_t block = std::max(size(0, Role::bytes), size(0, Role::recv_bytes));
            call.bytes = block;
            call.recv_bytes = block;
        }
        if (!neighbour_counts(e.op, participants, *members, call)) {
            items_.pop_back();
            not_replayed(e, creates_request(e.op));
        }
    } else if (is_vector_collective(e.op)) {
        // Per-member sizes: every member derives all counts from everyone's values.
        vector_counts(e.op, participants, *members, remote, call);
        if (may_receive_in_place(e.op, at_root) && call.recv_bytes == 0) call.in_place = true;
    } else if (has_histogram(e, Role::bytes) || has_histogram(e, Role::recv_bytes)) {
        // Drawn sizes differ between members, and MPI needs them to agree: one block for all,
        // the first participant's (its send side, or its receive side where it sent nothing).
        const int64_t block = std::max(size(0, Role::bytes), size(0, Role::recv_bytes));
        call.bytes = block;
        call.recv_bytes = block;
        if (remote != nullptr && is_one_of(e.op, {Op::Reduce_scatter_block, Op::Ireduce_scatter_block})) {
            scatter_blocks_between_groups(block, participants, *members, *remote, call);
        }
    } else if (remote != nullptr) {
        // MPI has no in-place collectives on an intercommunicator: a side that sends nothing does so.
    } else if (may_receive_in_place(e.op, at_root)) {
        call.in_place = call.recv_bytes == 0 && call.bytes > 0;
    } else {
        call.in_place = may_be_in_place(e.op, at_root) && call.bytes == 0 && call.recv_bytes > 0;
    }
}

// Below precision 100, where something was drawn, the merge can leave a blocking collective in parts
// (a loop drawn around one member's instances and not around the others'), and a part alone would
// wait for members that make theirs elsewhere. Each part waits here until every member of its
// communicator has met one of the same operation; the k-th parts of the members then make one
// instance, which every member issues where the last of them is met: at one place of the walk, as a
// whole instance is (proofs/README.md). One size and root for all, the first member's, as where sizes
// were drawn (collective). Returns whether the instance was a part.
bool RankStream::join_parts(const Event& e, const std::vector<Rank>& participants, const CommunicatorTable& comms)
{
    if (as_run_ || creates_request(e.op) || is_vector_collective(e.op) || is_neighbor_collective(e.op) ||
        participants.empty()) {
        return false;
    }
    // A whole instance (or the instances of several communicators in one event) is collective()'s.
    const auto first_comm = value(0, Role::comm);
    const auto members = first_comm ? comms.shared_members(participants[0], *first_comm) : nullptr;
    if (!members || members->size() <= participants.size()) return false;
    std::vector<Part> parts;
    for (size_t i = 0; i < participants.size(); ++i) {
        const auto comm = value(i, Role::comm);
        if (!comm || comms.shared_members(participants[i], *comm) != members ||
            comms.remote_members(participants[i], *comm) != nullptr) {
            return false;
        }
        auto size = [&](Role role) { return std::max<int64_t>(0, value(i, role).value_or(0)); };
        parts.push_back(Part{&e, *comm, size(Role::bytes), size(Role::recv_bytes), value(i, Role::root).value_or(-1)});
    }
    WaitingParts& waiting = waiting_parts_[{members.get(), e.op}];
    waiting.members = members;
    for (size_t i = 0; i < participants.size(); ++i) {
        auto& queue = waiting.of_member[participants[i]];
        if (queue.size() == kMaxPartsWaiting) {
            if (participants[i] == me_) {
                ++collectives_left_apart_;
                not_replayed(*queue.front().event, false);
            }
            queue.pop_front();
        }
        queue.push_back(parts[i]);
    }
    for (Rank m : *members) {
        if (waiting.of_member[m].empty()) return true;
    }
    const Part first = waiting.of_member[members->front()].front();
    std::optional<Part> mine;
    for (Rank m : *members) {
        auto& queue = waiting.of_member[m];
        if (m == me_) mine = queue.front();
        queue.pop_front();
    }
    if (mine) add_joined(e, mine->comm, first);
    return true;
}

// This rank's call of an instance joined from parts, on its communicator `comm`, with `first`'s root
// and size.
void RankStream::add_joined(const Event& e, int64_t comm, const Part& first)
{
    ++collectives_joined_;
    ScheduledCall& call = add(ItemKind::collective, e).call;
    call.kind = CallKind::collective;
    call.comm = comm;
    call.root = static_cast<int32_t>(first.root);
    call.bytes = call.recv_bytes = std::max(first.bytes, first.recv_bytes);
}

// At the end of the walk, parts still waiting had members whose drawn counts gave them fewer (or
// more) than the others. In the run every member made as many; the members agree on the mean of
// their counts. On MPI_COMM_WORLD, which is never freed, every member then issues as many more
// instances as the members have parts waiting on average, rounded (all at the end of the walk);
// elsewhere the communicator may be gone, and this rank's waiting parts are not replayed.
void RankStream::finish_waiting_parts()
{
    const auto world = cursor_.communicators().shared_members(me_, 0);
    for (const auto& [key, waiting] : waiting_parts_) {
        size_t waiting_parts = 0;
        const Part* first = nullptr;
        for (const auto& [member, queue] : waiting.of_member) {
            waiting_parts += queue.size();
            if (first == nullptr && !queue.empty()) first = &queue.front();
        }
        const size_t members = waiting.members->size();
        const size_t more = (waiting_parts + members / 2) / members;
        const auto mine = waiting.of_member.find(me_);
        if (waiting.members != world) {
            if (mine == waiting.of_member.end()) continue;
            for (const Part& part : mine->second) {
                ++collectives_left_apart_;
                not_replayed(*part.event, false);
            }
            continue;
        }
        for (size_t k = 0; k < more; ++k) add_joined(*first->event, 0, *first);
    }
    waiting_parts_.clear();
}

namespace {

// `total` in `parts` shares as even as can be: share `to`.
int64_t even_share(int64_t total, size_t parts, size_t to)
{
    const auto n = static_cast<int64_t>(parts);
    return total / n + (static_cast<int64_t>(to) < total % n ? 1 : 0);
}

// What each member of a Gatherv or Allgatherv contributes, `of_member(m, role)` giving member m's
// values. One that gave MPI_IN_PLACE (the root of a Gatherv, any member of an Allgatherv; it shows
// as no bytes sent, some received) contributes its share of what the receiver got beyond the
// others' contributions.
template <class OfMember>
void gathered_counts(Op op, size_t n, size_t my_rank, const OfMember& of_member, ScheduledCall& call)
{
    // A root beyond the communicator (a damaged trace the reader cannot tell without the walk)
    // reads no member's values.
    const size_t receiver = call.root >= 0 && static_cast<size_t>(call.root) < n ? static_cast<size_t>(call.root) : 0;
    auto in_place = [&](size_t m) {
        return may_be_in_place(op, call.root < 0 || m == receiver) && of_member(m, Role::bytes) == 0 &&
               of_member(m, Role::recv_bytes) > 0;
    };
    int64_t given = 0;
    int64_t sharing = 0;
    for (size_t m = 0; m < n; ++m) {
        given += of_member(m, Role::bytes);
        sharing += in_place(m) ? 1 : 0;
    }
    const int64_t rest = std::max<int64_t>(0, of_member(receiver, Role::recv_bytes) - given);
    call.recv_counts.resize(n);
    for (size_t m = 0; m < n; ++m) call.recv_counts[m] = in_place(m) ? rest / sharing : of_member(m, Role::bytes);
    call.in_place = in_place(my_rank);
}

template <class OfMember>
void scattered_counts(size_t n, const OfMember& of_member, ScheduledCall& call)
{
    call.send_counts.resize(n);
    for (size_t m = 0; m < n; ++m) call.send_counts[m] = of_member(m, Role::recv_bytes);
    // A root that kept its part in place received nothing: its part is what it sent beyond the others'.
    const auto root = static_cast<size_t>(std::max(call.root, 0));
    if (root < n && call.send_counts[root] == 0) {
        const int64_t others = std::accumulate(call.send_counts.begin(), call.send_counts.end(), int64_t{0});
        call.send_counts[root] = std::max<int64_t>(0, of_member(root, Role::bytes) - others);
    }
}

// Where every member exchanged in place, what goes from one to another must come back alike: each
// pair exchanges an n-th of the smaller total, and the rest stays with its member.
void exchange_in_place(const std::vector<int64_t>& received, size_t my_rank, ScheduledCall& call)
{
    const auto parts = static_cast<int64_t>(received.size());
    int64_t kept = received[my_rank];
    for (size_t m = 0; m < received.size(); ++m) {
        if (m == my_rank) continue;
        call.recv_counts[m] = std::min(received[m], received[my_rank]) / parts;
        kept -= call.recv_counts[m];
    }
    call.recv_counts[my_rank] = kept;
    call.send_counts = call.recv_counts;
}

// The north-west corner rule: a matrix with the members' send totals as row sums and receive
// totals as column sums, built from the totals alone, so the same on every member.
void north_west_corner(std::vector<int64_t>& sent, std::vector<int64_t>& received, size_t my_rank,
                       ScheduledCall& call)
{
    const size_t n = sent.size();
    size_t from = 0;
    size_t to = 0;
    while (from < n && to < n) {
        const int64_t moved = std::min(sent[from], received[to]);
        if (from == my_rank) call.send_counts[to] = moved;
        if (to == my_rank) call.recv_counts[from] = moved;
        sent[from] -= moved;
        received[to] -= moved;
        if (sent[from] == 0) {
            ++from;
        } else {
            ++to;
        }
    }
}

// Alltoallv/w: the trace keeps each member's send and receive totals, not who sent whom what. Any
// matrix with those row and column sums moves the same bytes. Drawn totals that do not balance go
// out in even shares instead.
template <class OfMember>
void alltoall_counts(size_t n, size_t my_rank, const OfMember& of_member, ScheduledCall& call)
{
    std::vector<int64_t> sent(n);
    std::vector<int64_t> received(n);
    bool all_in_place = true;  // MPI_IN_PLACE: no bytes sent, some received
    for (size_t m = 0; m < n; ++m) {
        sent[m] = of_member(m, Role::bytes);
        received[m] = of_member(m, Role::recv_bytes);
        all_in_place = all_in_place && sent[m] == 0 && received[m] > 0;
    }
    call.send_counts.assign(n, 0);
    call.recv_counts.assign(n, 0);
    call.in_place = all_in_place;
    if (all_in_place) {
        exchange_in_place(received, my_rank, call);
        return;
    }
    if (std::accumulate(sent.begin(), sent.end(), int64_t{0}) !=
        std::accumulate(received.begin(), received.end(), int64_t{0})) {
        for (size_t m = 0; m < n; ++m) {
            call.send_counts[m] = even_share(sent[my_rank], n, m);
            call.recv_counts[m] = even_share(sent[m], n, my_rank);
        }
        return;
    }
    north_west_corner(sent, received, my_rank, call);
}

}  // namespace

// Per-member sizes of v-collectives, indexed by rank in the communicator, from every member's own
// values (drawn or recorded), so that each side's counts agree with the other's.
void RankStream::vector_counts(Op op, const std::vector<Rank>& participants, const std::vector<Rank>& members,
                               const std::vector<Rank>* remote, ScheduledCall& call)
{
    const size_t n = members.size();
    auto of_member = [&](size_t member, Role role) -> int64_t {
        const auto at = std::lower_bound(participants.begin(), participants.end(), members[member]);
        return std::max<int64_t>(0, value(static_cast<size_t>(at - participants.begin()), role).value_or(0));
    };
    const size_t my_rank = static_cast<size_t>(std::find(members.begin(), members.end(), me_) - members.begin());
    if (is_one_of(op, {Op::Gatherv, Op::Igatherv, Op::Allgatherv, Op::Iallgatherv})) {
        gathered_counts(op, n, my_rank, of_member, call);
        return;
    }
    if (is_one_of(op, {Op::Scatterv, Op::Iscatterv})) {
        scattered_counts(n, of_member, call);
        return;
    }
    if (is_one_of(op, {Op::Reduce_scatter, Op::Ireduce_scatter})) {
        // The trace keeps the sum of the receive counts, the same on every member (of both groups of
        // an intercommunicator) unless drawn: the first member's then stands for all (of the group
        // whose first member has the lower world rank, so that both groups take the same).
        Rank first = members.front();
        if (remote != nullptr && !remote->empty()) first = std::min(first, remote->front());
        const auto at = std::lower_bound(participants.begin(), participants.end(), first);
        const int64_t total =
            std::max<int64_t>(0, value(static_cast<size_t>(at - participants.begin()), Role::recv_bytes).value_or(0));
        call.recv_counts.resize(n);
        for (size_t m = 0; m < n; ++m) call.recv_counts[m] = even_share(total, n, m);
        return;
    }
    alltoall_counts(n, my_rank, of_member, call);
}

// The header's topology `key`, parsed once; null where the trace does not hold it whole.
const Topology* RankStream::topology(int64_t key)
{
    auto [at, first] = topologies_.try_emplace(key);
    if (first) {
        const auto text = trace_.header.topologies.find(key);
        if (text != trace_.header.topologies.end()) at->second = parse_topology(text->second);
    }
    return at->second ? &*at->second : nullptr;
}

// Each member's topology of the communicator `made` (this rank's id) the current event creates: neighbourhood
// collectives on it need every member's neighbours.
void RankStream::keep_topologies(const std::vector<Rank>& participants,
                                 const CommunicatorTable& comms, int64_t made)
{
    const auto members = comms.shared_members(me_, made);
    if (!members) return;
    CommTopologies kept{members, {}};
    for (Rank m : *members) {
        const auto at = std::lower_bound(participants.begin(), participants.end(), m);
        std::optional<int64_t> key;
        if (at != participants.end() && *at == m) key = value(static_cast<size_t>(at - participants.begin()), Role::topology);
        const Topology* t = key && *key != kNoComm ? topology(*key) : nullptr;
        if (t == nullptr) return;  // a member without one: no neighbourhood collective can be replayed
        kept.of_member.push_back(t);
    }
    // Those of communicators no one else holds any more go: their addresses may be used again.
    std::erase_if(comm_topologies_, [](const auto& entry) { return entry.second.members.use_count() == 1; });
    comm_topologies_[members.get()] = std::move(kept);
}

// Per-neighbour sizes of a neighbourhood collective, in the order of this rank's neighbours (sources
// receive, destinations send). The trace keeps each member's totals over its neighbours, and each
// member knows every member's totals and topology: an Allgatherv receives from each source the block
// it sends; an Alltoallv or Alltoallw moves, between each pair, what a plan that meets every member's
// recorded totals has it move (neighbour_exchange.hpp), and where totals were drawn apart (no plan
// meets them), each member sends each destination an even share of its own. Bytes counted for
// MPI_PROC_NULL neighbours (a grid's edge) go nowhere. False where the topologies do not say.
bool RankStream::neighbour_counts(Op op, const std::vector<Rank>& participants, const std::vector<Rank>& members,
                                  ScheduledCall& call)
{
    const auto found = comm_topologies_.find(&members);
    if (found == comm_topologies_.end()) return false;
    const auto& of_member = found->second.of_member;
    const auto n = static_cast<int64_t>(members.size());
    const auto my_rank = static_cast<int64_t>(std::find(members.begin(), members.end(), me_) - members.begin());
    const Topology& mine = *of_member[static_cast<size_t>(my_rank)];
    const Neighbours me = neighbours_of(mine, my_rank, n);
    const auto total = [&](int64_t member, Role role = Role::bytes) -> int64_t {
        const auto at = std::lower_bound(participants.begin(), participants.end(), members[static_cast<size_t>(member)]);
        return std::max<int64_t>(0, value(static_cast<size_t>(at - participants.begin()), role).value_or(0));
    };
    const auto share = [](int64_t sum, size_t slot, size_t slots) {
        const auto parts = static_cast<int64_t>(std::max<size_t>(slots, 1));
        return sum / parts + (static_cast<int64_t>(slot) < sum % parts ? 1 : 0);
    };
    call.send_counts.assign(me.destinations.size(), call.bytes);
    call.recv_counts.assign(me.sources.size(), call.recv_bytes);
    const bool gathers = is_one_of(op, {Op::Neighbor_allgatherv, Op::Ineighbor_allgatherv});
    const bool exchanges = is_one_of(op, {Op::Neighbor_alltoallv, Op::Ineighbor_alltoallv, Op::Neighbor_alltoallw,
                                          Op::Ineighbor_alltoallw});
    if (!gathers && !exchanges) return true;
    call.bytes = total(my_rank);
    call.recv_bytes = total(my_rank, Role::recv_bytes);
    if (exchanges) {
        std::vector<int64_t> sent(members.size());
        std::vector<int64_t> received(members.size());
        for (int64_t m = 0; m < n; ++m) {
            sent[static_cast<size_t>(m)] = total(m);
            received[static_cast<size_t>(m)] = total(m, Role::recv_bytes);
        }
        if (const auto plan = exact_exchange(of_member, sent, received, my_rank)) {
            call.send_counts = plan->send;
            call.recv_counts = plan->receive;
            return true;
        }
    }
    for (size_t j = 0; exchanges && j < me.destinations.size(); ++j) {
        call.send_counts[j] = share(call.bytes, j, me.destinations.size());
    }
    int64_t from_nowhere = call.recv_bytes;  // an Allgatherv's: what it counted beyond its sources' blocks
    size_t first_nowhere = me.sources.size();
    for (size_t k = 0; k < me.sources.size(); ++k) {
        const int64_t source = me.sources[k];
        if (source < 0 || source >= n) {
            call.recv_counts[k] = 0;
            first_nowhere = std::min(first_nowhere, k);
            continue;
        }
        if (gathers) {
            call.recv_counts[k] = total(source);
            from_nowhere -= call.recv_counts[k];
            continue;
        }
        const Neighbours theirs = neighbours_of(*of_member[static_cast<size_t>(source)], source, n);
        const auto slot = sending_slot(mine.cartesian, me, k, my_rank, theirs);
        if (!slot) return false;
        call.recv_counts[k] = share(total(source), *slot, theirs.destinations.size());
    }
    if (gathers && first_nowhere < me.sources.size()) call.recv_counts[first_nowhere] = std::max<int64_t>(0, from_nowhere);
    return true;
}

// A communicator creation replays as the call the rank made would cost: every member of the parent
// splitting it (or duplicating it) where all of them took part, as they do in MPI_Comm_split and its
// kin; otherwise (an intercommunicator's merge, a parent the trace does not know) the new members
// alone make it from their group.
void RankStream::create(const Event& e, const std::vector<Rank>& participants, const CommunicatorTable& comms,
                        size_t me)
{
    const auto parent = value(me, Role::comm);
    const auto made = value(me, Role::new_comm);
    const auto* parent_members = parent ? comms.members(me_, *parent) : nullptr;
    const bool whole_parent = parent_members != nullptr && is_one_of(e.op, kSplitLike) &&
                              std::all_of(parent_members->begin(), parent_members->end(), [&](Rank m) {
                                  return std::binary_search(participants.begin(), participants.end(), m);
                              });
    const bool got_one = made && *made != kNoComm;
    const bool request = creates_request(e.op);
    if (!got_one && !whole_parent) {  // this rank got MPI_COMM_NULL and takes no part
        if (request) not_replayed(e, true);
        return;
    }
    const auto* members = got_one ? comms.members(me_, *made) : nullptr;
    if (got_one && members == nullptr) {
        not_replayed(e, request);
        return;
    }
    if (got_one && e.find(Role::topology) != nullptr) keep_topologies(participants, comms, *made);
    if (is_one_of(e.op, {Op::Intercomm_create, Op::Intercomm_merge})) {
        create_across(e, comms, me, *parent, *made);
        return;
    }
    Item& item = add(ItemKind::create_comm, e);
    item.call.kind = CallKind::create_comm;
    item.creates_request = request;
    item.call.op = !whole_parent                                 ? Op::Comm_create_group
                   : e.op == Op::Comm_idup                       ? Op::Comm_idup
                   : is_one_of(e.op, {Op::Comm_dup, Op::Comm_dup_with_info}) ? Op::Comm_dup
                                                                             : Op::Comm_split;
    item.call.comm = parent.value_or(kNoComm);
    item.call.new_comm = got_one ? *made : kNoComm;
    if (members != nullptr) item.call.members = *members;
    if (got_one) {
        const auto key = value(me, Role::topology);
        if (key && *key != kNoComm) item.call.topology = topology(*key);
    }
    // A split of an intercommunicator pairs each group of one side with the group of the same
    // colour on the other: both name the pair by the lower of their leaders.
    const auto remote_leader = value(me, Role::remote_leader);
    if (remote_leader && *remote_leader >= 0) item.call.remote_leader = static_cast<Rank>(*remote_leader);
}

// An intercommunicator made from the local group's communicator and the remote group's first rank,
// or merged from one, as the program did: both need the parent replayed.
void RankStream::create_across(const Event& e, const CommunicatorTable& comms, size_t me, int64_t parent, int64_t made)
{
    const auto* local = comms.members(me_, parent);
    const auto remote_leader = value(me, Role::remote_leader);
    if (local == nullptr || (e.op == Op::Intercomm_create && (!remote_leader || *remote_leader < 0))) {
        not_replayed(e, false);
        return;
    }
    Item& item = add(ItemKind::create_comm, e);
    item.call.kind = CallKind::create_comm;
    item.call.op = e.op;
    item.call.comm = parent;
    item.call.new_comm = made;
    item.call.members = *comms.members(me_, made);
    if (e.op == Op::Intercomm_create) {
        item.call.remote_leader = static_cast<Rank>(*remote_leader);
    } else {
        // MPI orders the merged group low group first: this rank's group was high where it came second.
        const Rank first = item.call.members.front();
        item.call.high = std::find(local->begin(), local->end(), first) == local->end();
    }
}

void RankStream::release(const Event& e, const CommunicatorTable& comms, size_t me)
{
    const auto comm = value(me, Role::comm);
    if (!comm || comms.members(me_, *comm) == nullptr || *comm <= 1) return;
    Item& item = add(ItemKind::free_comm, e);
    item.call.kind = CallKind::free_comm;
    item.call.op = e.op == Op::Comm_disconnect ? Op::Comm_disconnect : Op::Comm_free;
    item.call.comm = *comm;
}

// The messages of sends whose cancel won, aimed at this rank: the latest such message not yet read
// on their channel is withdrawn (one within kWithdrawWindow items: peek keeps that many).
void RankStream::withdraw_cancelled(const Event& e, const std::vector<Rank>& participants,
                                    const CommunicatorTable& comms)
{
    for (size_t i = 0; i < participants.size(); ++i) {
        const Rank sender = participants[i];
        std::optional<int64_t> peer;
        std::optional<int64_t> tag;
        for (size_t k = 0; k < e.params.size(); ++k) {
            const Role role = e.params[k].role;
            if (role == Role::cancelled_peer) peer = value(i, k);
            if (role == Role::cancelled_tag) tag = value(i, k);
            if (role != Role::cancelled_comm) continue;
            const auto comm = value(i, k);
            const auto destination = comm && peer ? comms.world_peer(sender, *comm, *peer) : std::nullopt;
            const auto my_comm = comm && destination == me_ ? comms.local_id(me_, sender, *comm) : std::nullopt;
            if (!my_comm || !tag) continue;
            const auto members = comms.shared_members(me_, *my_comm);
            for (size_t k = items_.size(); k-- > 0;) {
                Item& item = items_[k];
                if (item.kind == ItemKind::incoming && item.call.peer == sender && item.call.tag == *tag &&
                    item.asked.comm.members == members) {
                    item.kind = ItemKind::withdrawn;
                    break;
                }
            }
        }
    }
}

// The buffer buffered sends go through. Where its size was drawn, it is attached as large as the
// largest the histogram holds: the sends drawn into it hand out the recorded sizes, and the run's
// largest buffer held what the run's sends needed at once. Where message sizes were drawn, it also
// holds the largest message (recv_bytes).
void RankStream::buffer(const Event& e, size_t me)
{
    const Value* size = e.find(Role::bytes);
    if (e.op == Op::Buffer_attach && size == nullptr) {  // a trace of format 14 or older: recorded by name only
        ++summary_.by_name_only;
        return;
    }
    Item& item = add(ItemKind::buffer, e);
    item.call.kind = CallKind::buffer;
    if (size != nullptr) item.call.bytes = size->is_histogram() ? largest(*size) : value(me, Role::bytes).value_or(0);
    if (message_sizes_drawn_) item.call.recv_bytes = largest_message_;
}

// A call that cannot be replayed still holds its place among the rank's requests if it made one.
void RankStream::not_replayed(const Event& e, bool creates)
{
    ++summary_.not_replayed[std::string(operation_name(e.op))];
    if (!creates) return;
    Item& item = add(ItemKind::request_only, e);
    item.creates_request = true;
}

}  // namespace htrace::replay
