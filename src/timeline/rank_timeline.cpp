#include "timeline/rank_timeline.hpp"

#include <cstring>
#include <numeric>
#include <type_traits>

namespace htrace::timeline {

namespace {

using replay::CallKind;

template <typename T>
void put(std::string& out, const T& value)
{
    static_assert(std::is_trivially_copyable_v<T>);
    out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

// Reads in order from a byte string, failing once it runs out.
class Reader {
public:
    explicit Reader(const std::string& bytes) : bytes_(bytes) {}
    template <typename T>
    bool get(T& value)
    {
        static_assert(std::is_trivially_copyable_v<T>);
        if (bytes_.size() - position_ < sizeof value) return false;
        std::memcpy(&value, bytes_.data() + position_, sizeof value);
        position_ += sizeof value;
        return true;
    }
    // Whether `count` more items of `size` bytes could be there: no allocation beyond the input's size.
    bool room_for(uint64_t count, size_t size) const { return count <= (bytes_.size() - position_) / size; }
    bool at_end() const { return position_ == bytes_.size(); }

private:
    const std::string& bytes_;
    size_t position_ = 0;
};

}  // namespace

RankTimeline::RankTimeline(Rank rank, int32_t world_size, uint64_t most_calls) : rank_(rank), most_calls_(most_calls)
{
    std::vector<Rank> world(static_cast<size_t>(std::max(world_size, 0)));
    std::iota(world.begin(), world.end(), 0);
    index_by_id_[0] = index_of(world);
    index_by_id_[1] = index_of({rank});
}

uint32_t RankTimeline::index_of(const std::vector<Rank>& members)
{
    const auto [found, added] = index_by_members_.try_emplace(members, static_cast<uint32_t>(communicators_.size()));
    if (added) communicators_.push_back(members);
    return found->second;
}

uint32_t RankTimeline::communicator_of(int64_t comm)
{
    const auto found = index_by_id_.find(comm);
    return found == index_by_id_.end() ? 0 : found->second;
}

void RankTimeline::add(const replay::ScheduledCall& call, double start, double end)
{
    if (call.kind == CallKind::compute) return;
    if (call.kind == CallKind::create_comm && call.new_comm != kNoComm) {
        index_by_id_[call.new_comm] = index_of(call.members);
    }
    if (calls_.size() >= most_calls_) {
        ++dropped_;
        return;
    }
    TimedCall timed;
    // The program's operation where replay issues another of its kind (a ready send as a send, a
    // Cartesian communicator made by a split): the timeline shows what the program did.
    const bool traced_kind = call.event != nullptr && operation_kind(call.event->op) == operation_kind(call.op);
    timed.op = traced_kind ? call.event->op : call.op;
    timed.start = start;
    timed.end = end;
    timed.comm = communicator_of(call.comm);
    const auto world_peer = [](Rank peer) { return peer >= 0 ? peer : Rank{-1}; };
    if (call.kind == CallKind::send || call.kind == CallKind::receive || call.kind == CallKind::sendrecv) {
        timed.peer = world_peer(call.peer);
        timed.tag = call.tag;
    }
    if (call.kind == CallKind::sendrecv) {
        timed.source = world_peer(call.source);
        timed.recv_tag = call.recv_tag;
    }
    timed.root = call.root;
    timed.bytes = call.bytes;
    timed.recv_bytes = call.recv_bytes;
    timed.signature = call.event != nullptr ? call.event->signature : 0;
    calls_.push_back(timed);
}

std::string RankTimeline::serialize() const
{
    std::string out;
    put(out, rank_);
    put(out, dropped_);
    put(out, static_cast<uint64_t>(communicators_.size()));
    for (const auto& members : communicators_) {
        put(out, static_cast<uint64_t>(members.size()));
        out.append(reinterpret_cast<const char*>(members.data()), members.size() * sizeof(Rank));
    }
    put(out, static_cast<uint64_t>(calls_.size()));
    for (const TimedCall& call : calls_) put(out, call);
    return out;
}

std::string RankTimeline::deserialize(const std::string& bytes, RankTimeline& out)
{
    Reader in(bytes);
    uint64_t communicators = 0;
    if (!in.get(out.rank_) || !in.get(out.dropped_) || !in.get(communicators) || !in.room_for(communicators, 8)) {
        return "a rank's timeline is cut short in its header";
    }
    out.communicators_.assign(communicators, {});
    for (auto& members : out.communicators_) {
        uint64_t size = 0;
        if (!in.get(size) || !in.room_for(size, sizeof(Rank))) return "a rank's timeline is cut short in a communicator";
        members.resize(size);
        for (Rank& member : members) in.get(member);
    }
    uint64_t calls = 0;
    if (!in.get(calls) || !in.room_for(calls, sizeof(TimedCall))) return "a rank's timeline is cut short in its calls";
    out.calls_.resize(calls);
    for (TimedCall& call : out.calls_) in.get(call);
    if (!in.at_end()) return "a rank's timeline has bytes after its calls";
    for (const TimedCall& call : out.calls_) {
        if (call.comm >= out.communicators_.size()) return "a rank's call names a communicator it does not have";
    }
    return {};
}

}  // namespace htrace::timeline
