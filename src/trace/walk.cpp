#include "trace/walk.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

namespace htrace {

CommunicatorTable::CommunicatorTable(int32_t world_size) : by_rank_(static_cast<size_t>(std::max(world_size, 0)))
{
    auto world = std::make_shared<std::vector<Rank>>();
    for (Rank r = 0; r < world_size; ++r) world->push_back(r);
    for (Rank r = 0; r < world_size; ++r) {
        by_rank_[static_cast<size_t>(r)][0] = world;
        by_rank_[static_cast<size_t>(r)][1] = std::make_shared<std::vector<Rank>>(std::vector<Rank>{r});
    }
}

const std::vector<Rank>* CommunicatorTable::members(Rank rank, int64_t comm) const
{
    if (rank < 0 || static_cast<size_t>(rank) >= by_rank_.size()) return nullptr;
    const auto& comms = by_rank_[static_cast<size_t>(rank)];
    auto found = comms.find(comm);
    return found == comms.end() ? nullptr : found->second.get();
}

std::optional<Rank> CommunicatorTable::world_peer(Rank caller, int64_t comm, int64_t relative) const
{
    if (relative < 0) return std::nullopt;
    const auto* group = members(caller, comm);
    if (group == nullptr || group->empty()) return std::nullopt;
    auto me = std::find(group->begin(), group->end(), caller);
    if (me == group->end()) return std::nullopt;
    const auto size = static_cast<int64_t>(group->size());
    const int64_t index = (static_cast<int64_t>(me - group->begin()) + relative) % size;
    return (*group)[static_cast<size_t>(index)];
}

std::optional<Rank> CommunicatorTable::world_rank(Rank caller, int64_t comm, int64_t index) const
{
    const auto* group = members(caller, comm);
    if (group == nullptr || index < 0 || index >= static_cast<int64_t>(group->size())) return std::nullopt;
    return (*group)[static_cast<size_t>(index)];
}

void CommunicatorTable::create(const Event& creation, const std::vector<Rank>& participants)
{
    const Value* new_comm = creation.find(Role::new_comm);
    const Value* color = creation.find(Role::color);
    const Value* key = creation.find(Role::key);
    if (new_comm == nullptr || color == nullptr || key == nullptr) return;
    // Members of one new communicator share a color (the world rank of its rank 0); order by key.
    std::map<int64_t, std::vector<std::pair<int64_t, Rank>>> groups;
    for (Rank r : participants) {
        auto c = color->value_for(r);
        auto k = key->value_for(r);
        if (!c || !k || *c == kNoComm) continue;
        groups[*c].emplace_back(*k, r);
    }
    for (auto& [c, entries] : groups) {
        std::sort(entries.begin(), entries.end());
        auto members = std::make_shared<std::vector<Rank>>();
        for (const auto& entry : entries) members->push_back(entry.second);
        for (const auto& entry : entries) {
            auto id = new_comm->value_for(entry.second);
            if (id && static_cast<size_t>(entry.second) < by_rank_.size()) {
                by_rank_[static_cast<size_t>(entry.second)][*id] = members;
            }
        }
    }
}

void CommunicatorTable::free(const Event& release, const std::vector<Rank>& participants)
{
    const Value* comm = release.find(Role::comm);
    if (comm == nullptr) return;
    for (Rank r : participants) {
        auto id = comm->value_for(r);
        if (id && static_cast<size_t>(r) < by_rank_.size()) by_rank_[static_cast<size_t>(r)].erase(*id);
    }
}

TraceWalker::TraceWalker(const Trace& trace, CallVisitor on_call)
    : trace_(trace), on_call_(std::move(on_call)), communicators_(trace.header.ranks)
{
}

void TraceWalker::run()
{
    std::vector<char> all(static_cast<size_t>(std::max(trace_.header.ranks, 0)), 1);
    walk(trace_.body, all, 1.0);
}

void TraceWalker::walk(const Sequence& seq, const std::vector<char>& active, double weight)
{
    for (const auto& node : seq) {
        if (node.is_event()) {
            visit(node.event(), active, weight);
            continue;
        }
        const Loop& loop = node.loop();
        if (loop.iterations.is_histogram()) {
            walk(loop.body, active, weight * loop.iterations.histogram().mean());
            continue;
        }
        if (loop.iterations.is_exact()) {
            for (int64_t i = 0; i < loop.iterations.exact(); ++i) walk(loop.body, active, weight);
            continue;
        }
        // Ranks that iterate different numbers of times walk the body together while each is
        // still inside its own count.
        int64_t most = 0;
        for (const auto& entry : loop.iterations.per_rank()) most = std::max(most, entry.value);
        for (int64_t i = 0; i < most; ++i) {
            std::vector<char> still(active.size(), 0);
            for (const auto& entry : loop.iterations.per_rank()) {
                if (entry.value <= i) continue;
                for (Rank r : entry.ranks.expand()) {
                    if (static_cast<size_t>(r) < still.size()) still[static_cast<size_t>(r)] = active[static_cast<size_t>(r)];
                }
            }
            walk(loop.body, still, weight);
        }
    }
}

void TraceWalker::visit(const Event& event, const std::vector<char>& active, double weight)
{
    std::vector<Rank> participants;
    for (Rank r : event.ranks.expand()) {
        if (static_cast<size_t>(r) < active.size() && active[static_cast<size_t>(r)]) participants.push_back(r);
    }
    for (Rank r : participants) on_call_(event, r, communicators_, weight);
    const auto kind = operation_kind(event.op);
    if (kind == OperationKind::comm_create) communicators_.create(event, participants);
    if (kind == OperationKind::comm_free) communicators_.free(event, participants);
}

}  // namespace htrace
