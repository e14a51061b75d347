#include "replay/neighbour_exchange.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <numeric>

namespace htrace::replay {
namespace {

// A flow network small enough for augmenting paths found breadth first (Edmonds and Karp): nodes are
// the members as senders, the members as receivers, and "nowhere" on each side.
class FlowNetwork {
public:
    explicit FlowNetwork(size_t nodes) : out_(nodes) {}

    size_t add(size_t from, size_t to, int64_t capacity)
    {
        out_[from].push_back(edges_.size());
        edges_.push_back({to, capacity, 0});
        out_[to].push_back(edges_.size());
        edges_.push_back({from, 0, 0});
        return edges_.size() - 2;
    }
    int64_t capacity(size_t edge) const { return edges_[edge].capacity; }
    int64_t flow(size_t edge) const { return edges_[edge].flow; }

    void push_all(size_t source, size_t sink)
    {
        std::vector<size_t> via(out_.size());
        for (;;) {
            std::vector<char> seen(out_.size(), 0);
            std::deque<size_t> frontier{source};
            seen[source] = 1;
            while (!frontier.empty() && !seen[sink]) {
                const size_t node = frontier.front();
                frontier.pop_front();
                for (size_t e : out_[node]) {
                    const Edge& edge = edges_[e];
                    if (seen[edge.to] || edge.capacity - edge.flow <= 0) continue;
                    seen[edge.to] = 1;
                    via[edge.to] = e;
                    frontier.push_back(edge.to);
                }
            }
            if (!seen[sink]) return;
            int64_t most = std::numeric_limits<int64_t>::max();
            for (size_t node = sink; node != source; node = edges_[via[node] ^ 1].to) {
                most = std::min(most, edges_[via[node]].capacity - edges_[via[node]].flow);
            }
            for (size_t node = sink; node != source; node = edges_[via[node] ^ 1].to) {
                edges_[via[node]].flow += most;
                edges_[via[node] ^ 1].flow -= most;
            }
        }
    }

private:
    struct Edge {
        size_t to;
        int64_t capacity;
        int64_t flow;
    };
    std::vector<Edge> edges_;  // each followed by its reverse
    std::vector<std::vector<size_t>> out_;
};

bool real(int64_t rank, size_t members) { return rank >= 0 && static_cast<size_t>(rank) < members; }

// Every member must send exactly its total and receive exactly its total: a flow whose edges from
// the source to each sender and from each receiver to the sink carry exactly that much, found as a
// feasible flow with those lower bounds (a circulation through a second source and sink). Bytes for
// a missing neighbour go to "nowhere" and come from it, without bound.
constexpr size_t kSource = 0;
constexpr size_t kSink = 1;
constexpr size_t kLowerSource = 2;
constexpr size_t kLowerSink = 3;
constexpr size_t kFromNowhere = 4;
constexpr size_t kToNowhere = 5;
constexpr size_t kFirstSender = 6;  // then the receivers

struct ExchangeFlows {
    explicit ExchangeFlows(size_t n) : network(kFirstSender + 2 * n), pair(n), to_nowhere(n), from_nowhere(n) {}

    FlowNetwork network;
    std::vector<size_t> bounds;  // edges from the second source: all full, or no plan meets the totals
    std::vector<std::map<int64_t, size_t>> pair;  // sender -> receiver -> edge
    std::vector<std::optional<size_t>> to_nowhere;
    std::vector<std::optional<size_t>> from_nowhere;
};

void add_exchange_edges(const std::vector<Neighbours>& neighbours, const std::vector<int64_t>& sent,
                        const std::vector<int64_t>& received, ExchangeFlows& f)
{
    const size_t n = neighbours.size();
    const auto sender = [](size_t r) { return kFirstSender + r; };
    const auto receiver = [n](size_t q) { return kFirstSender + n + q; };
    const int64_t unbounded = std::accumulate(sent.begin(), sent.end(), int64_t{0}) +
                              std::accumulate(received.begin(), received.end(), int64_t{0}) + 1;
    for (size_t r = 0; r < n; ++r) {
        f.bounds.push_back(f.network.add(kLowerSource, sender(r), std::max<int64_t>(sent[r], 0)));
        f.network.add(kSource, kLowerSink, std::max<int64_t>(sent[r], 0));
        f.bounds.push_back(f.network.add(kLowerSource, kSink, std::max<int64_t>(received[r], 0)));
        f.network.add(receiver(r), kLowerSink, std::max<int64_t>(received[r], 0));
        for (int64_t q : neighbours[r].destinations) {
            if (!real(q, n)) {
                if (!f.to_nowhere[r]) f.to_nowhere[r] = f.network.add(sender(r), kToNowhere, unbounded);
            } else if (!f.pair[r].count(q)) {
                f.pair[r][q] = f.network.add(sender(r), receiver(static_cast<size_t>(q)), unbounded);
            }
        }
        for (int64_t s : neighbours[r].sources) {
            if (!real(s, n) && !f.from_nowhere[r]) {
                f.from_nowhere[r] = f.network.add(kFromNowhere, receiver(r), unbounded);
            }
        }
    }
    f.network.add(kToNowhere, kSink, unbounded);
    f.network.add(kSource, kFromNowhere, unbounded);
    f.network.add(kSink, kSource, unbounded);
}

// `member`'s slots, from the flows: each pair's bytes go through the first slot that joins them; the
// rest carry none.
SlotCounts member_slots(const std::vector<const Topology*>& topologies, const std::vector<Neighbours>& neighbours,
                        ExchangeFlows& f, int64_t member)
{
    const size_t n = neighbours.size();
    const auto me = static_cast<size_t>(member);
    const Neighbours& mine = neighbours[me];
    SlotCounts counts{std::vector<int64_t>(mine.destinations.size(), 0), std::vector<int64_t>(mine.sources.size(), 0)};
    std::map<int64_t, bool> given;
    bool nowhere_given = false;
    for (size_t j = 0; j < mine.destinations.size(); ++j) {
        const int64_t q = mine.destinations[j];
        if (!real(q, n)) {
            if (!nowhere_given) counts.send[j] = f.network.flow(*f.to_nowhere[me]);
            nowhere_given = true;
        } else if (!given[q]) {
            counts.send[j] = f.network.flow(f.pair[me][q]);
            given[q] = true;
        }
    }
    bool nowhere_taken = false;
    for (size_t k = 0; k < mine.sources.size(); ++k) {
        const int64_t s = mine.sources[k];
        if (!real(s, n)) {
            if (!nowhere_taken) counts.receive[k] = f.network.flow(*f.from_nowhere[me]);
            nowhere_taken = true;
            continue;
        }
        const Neighbours& theirs = neighbours[static_cast<size_t>(s)];
        const auto slot = sending_slot(topologies[me]->cartesian, mine, k, member, theirs);
        const auto first = std::find(theirs.destinations.begin(), theirs.destinations.end(), member);
        if (slot && first != theirs.destinations.end() &&
            *slot == static_cast<size_t>(first - theirs.destinations.begin())) {
            counts.receive[k] = f.network.flow(f.pair[static_cast<size_t>(s)][member]);
        }
    }
    return counts;
}

}  // namespace

std::optional<SlotCounts> exact_exchange(const std::vector<const Topology*>& topologies,
                                         const std::vector<int64_t>& sent, const std::vector<int64_t>& received,
                                         int64_t member)
{
    const size_t n = topologies.size();
    if (sent.size() != n || received.size() != n || !real(member, n)) return std::nullopt;
    std::vector<Neighbours> neighbours;
    for (size_t r = 0; r < n; ++r) neighbours.push_back(neighbours_of(*topologies[r], static_cast<int64_t>(r), static_cast<int64_t>(n)));
    ExchangeFlows flows(n);
    add_exchange_edges(neighbours, sent, received, flows);
    flows.network.push_all(kLowerSource, kLowerSink);
    for (size_t e : flows.bounds) {
        if (flows.network.flow(e) != flows.network.capacity(e)) return std::nullopt;
    }
    return member_slots(topologies, neighbours, flows, member);
}

}  // namespace htrace::replay
