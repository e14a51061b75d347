#include "timeline/wait_states.hpp"

#include "trace/render.hpp"

#include <algorithm>
#include <sstream>

namespace htrace::timeline {

namespace {

bool is_blocking_receive(Op op) { return is_one_of(op, {Op::Recv, Op::Sendrecv, Op::Sendrecv_replace}); }

// Who a rank waits for at a collective: everyone, the root, or (at the root) the others.
enum class Waits { for_all, for_root, root_for_all };

Waits waits_at(Op op)
{
    if (is_one_of(op, {Op::Bcast, Op::Scatter, Op::Scatterv})) return Waits::for_root;
    if (is_one_of(op, {Op::Gather, Op::Gatherv, Op::Reduce})) return Waits::root_for_all;
    return Waits::for_all;
}

}  // namespace

const char* wait_kind_name(WaitKind kind)
{
    switch (kind) {
    case WaitKind::late_sender: return "late_sender";
    case WaitKind::late_receiver: return "late_receiver";
    case WaitKind::wait_at_collective: return "wait_at_collective";
    }
    return "?";
}

void WaitStates::add(const RankTimeline& rank)
{
    const Rank r = rank.rank();
    if (per_rank_.size() <= static_cast<size_t>(r)) per_rank_.resize(static_cast<size_t>(r) + 1);
    calls_ += rank.calls().size();
    calls_left_out_ += rank.dropped();
    std::vector<uint64_t> instances(rank.communicators().size(), 0);
    for (const TimedCall& timed : rank.calls()) {
        const Call call{r, timed.op, timed.start, timed.end, timed.signature, -1};
        const OperationKind kind = operation_kind(timed.op);
        if ((kind == OperationKind::send || kind == OperationKind::sendrecv) && timed.peer >= 0) {
            sends_[{r, timed.peer, timed.tag}].push_back(call);
        }
        if (kind == OperationKind::recv && timed.peer >= 0) receives_[{timed.peer, r, timed.tag}].push_back(call);
        if (kind == OperationKind::sendrecv && timed.source >= 0) {
            receives_[{timed.source, r, timed.recv_tag}].push_back(call);
        }
        // A non-blocking collective returns at once; its wait, if any, is in the completion call.
        if ((kind == OperationKind::collective || kind == OperationKind::comm_create) && !creates_request(timed.op)) {
            const std::vector<Rank>& members = rank.communicators()[timed.comm];
            const uint32_t comm =
                communicators_.try_emplace(members, static_cast<uint32_t>(communicators_.size())).first->second;
            Call member = call;
            if (timed.root >= 0 && static_cast<size_t>(timed.root) < members.size()) member.root = members[timed.root];
            collectives_[{comm, instances[timed.comm]++}].push_back(member);
        }
    }
}

void WaitStates::wait(const Call& call, WaitKind kind, double until)
{
    const double seconds = std::min(until, call.end) - call.start;
    if (seconds <= 0) return;
    if (per_rank_.size() <= static_cast<size_t>(call.rank)) per_rank_.resize(static_cast<size_t>(call.rank) + 1);
    per_rank_[static_cast<size_t>(call.rank)][static_cast<size_t>(kind)] += seconds;
    by_site_[{call.signature, call.op, kind}][call.rank] += seconds;
}

std::string WaitStates::finish()
{
    for (const auto& [key, receives] : receives_) {
        const auto sends = sends_.find(key);
        if (sends == sends_.end()) continue;
        for (size_t i = 0; i < receives.size() && i < sends->second.size(); ++i) {
            const Call& receive = receives[i];
            const Call& send = sends->second[i];
            if (is_blocking_receive(receive.op)) wait(receive, WaitKind::late_sender, send.start);
            if (send.op == Op::Ssend) wait(send, WaitKind::late_receiver, receive.start);
        }
    }
    for (const auto& [key, members] : collectives_) {
        double last = 0;
        for (const Call& member : members) last = std::max(last, member.start);
        for (const Call& member : members) {
            switch (waits_at(member.op)) {
            case Waits::for_all:
                wait(member, WaitKind::wait_at_collective, last);
                break;
            case Waits::for_root:
                for (const Call& root : members) {
                    if (root.rank == member.root && root.rank != member.rank) {
                        wait(member, WaitKind::wait_at_collective, root.start);
                    }
                }
                break;
            case Waits::root_for_all:
                if (member.rank == member.root) wait(member, WaitKind::wait_at_collective, last);
                break;
            }
        }
    }
    for (const auto& [key, ranks] : by_site_) {
        Site site{std::get<0>(key), std::get<1>(key), std::get<2>(key)};
        for (const auto& [rank, seconds] : ranks) {
            site.seconds += seconds;
            ++site.ranks;
            if (seconds > site.most) {
                site.most = seconds;
                site.most_rank = rank;
            }
        }
        sites_.push_back(site);
    }
    std::stable_sort(sites_.begin(), sites_.end(), [](const Site& a, const Site& b) { return a.seconds > b.seconds; });
    return {};
}

std::string WaitStates::json(size_t top) const
{
    std::ostringstream out;
    out.precision(9);
    std::array<double, kWaitKinds> total{};
    for (const auto& rank : per_rank_) {
        for (size_t k = 0; k < kWaitKinds; ++k) total[k] += rank[k];
    }
    const auto kinds = [&](const std::array<double, kWaitKinds>& seconds) {
        std::ostringstream text;
        text.precision(9);
        for (size_t k = 0; k < kWaitKinds; ++k) {
            text << (k ? ", " : "") << '"' << wait_kind_name(static_cast<WaitKind>(k)) << "\": " << seconds[k];
        }
        return text.str();
    };
    out << "{\"calls\": " << calls_ << ", \"calls_left_out\": " << calls_left_out_ << ", \"total\": {" << kinds(total)
        << "}, \"per_rank\": [";
    for (size_t r = 0; r < per_rank_.size(); ++r) {
        out << (r ? ", " : "") << "{\"rank\": " << r << ", " << kinds(per_rank_[r]) << "}";
    }
    out << "], \"sites\": [";
    for (size_t i = 0; i < sites_.size() && i < top; ++i) {
        const Site& site = sites_[i];
        out << (i ? ", " : "") << "{\"site\": \"" << render_signature(site.signature) << "\", \"op\": \""
            << operation_name(site.op) << "\", \"kind\": \"" << wait_kind_name(site.kind)
            << "\", \"seconds\": " << site.seconds << ", \"ranks\": " << site.ranks
            << ", \"most_rank\": " << site.most_rank << ", \"most_seconds\": " << site.most << "}";
    }
    out << "]}";
    return out.str();
}

}  // namespace htrace::timeline
