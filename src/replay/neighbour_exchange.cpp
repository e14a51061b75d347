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

}  // namespace

std::optional<SlotCounts> exact_exchange(const std::vector<const Topology*>& topologies,
                                         const std::vector<int64_t>& sent, const std::vector<int64_t>& received,
                                         int64_t member)
{
    const size_t n = topologies.size();
    if (sent.size() != n || received.size() != n || !real(member, n)) return std::nullopt;
    std::vector<Neighbours> neighbours;
    for (size_t r = 0; r < n; ++r) neighbours.push_back(neighbours_of(*topologies[r], static_cast<int64_t>(r), static_cast<int64_t>(n)));
    // Every member must send exactly its total and receive exactly its total: a flow whose edges from
    // the source to each sender and from each receiver to the sink carry exactly that much, found as
    // a feasible flow with those lower bounds (a circulation through a second source and sink).
    // Bytes for a missing neighbour go to "nowhere" and come from it, without bound.
    const size_t source = 0;
    const size_t sink = 1;
    const size_t lower_source = 2;
    const size_t lower_sink = 3;
    const size_t from_nowhere_node = 4;
    const size_t to_nowhere_node = 5;
    const auto sender = [](size_t r) { return 6 + r; };
    const auto receiver = [n](size_t q) { return 6 + n + q; };
    const int64_t unbounded = std::accumulate(sent.begin(), sent.end(), int64_t{0}) +
                              std::accumulate(received.begin(), received.end(), int64_t{0}) + 1;
    FlowNetwork network(6 + 2 * n);
    std::vector<size_t> bounds;  // edges from the second source: all full, or no plan meets the totals
    std::vector<std::map<int64_t, size_t>> pair(n);  // sender -> receiver -> edge
    std::vector<std::optional<size_t>> to_nowhere(n);
    std::vector<std::optional<size_t>> from_nowhere(n);
    for (size_t r = 0; r < n; ++r) {
        bounds.push_back(network.add(lower_source, sender(r), std::max<int64_t>(sent[r], 0)));
        network.add(source, lower_sink, std::max<int64_t>(sent[r], 0));
        bounds.push_back(network.add(lower_source, sink, std::max<int64_t>(received[r], 0)));
        network.add(receiver(r), lower_sink, std::max<int64_t>(received[r], 0));
        for (int64_t q : neighbours[r].destinations) {
            if (!real(q, n)) {
                if (!to_nowhere[r]) to_nowhere[r] = network.add(sender(r), to_nowhere_node, unbounded);
            } else if (!pair[r].count(q)) {
                pair[r][q] = network.add(sender(r), receiver(static_cast<size_t>(q)), unbounded);
            }
        }
        for (int64_t s : neighbours[r].sources) {
            if (!real(s, n) && !from_nowhere[r]) {
                from_nowhere[r] = network.add(from_nowhere_node, receiver(r), unbounded);
            }
        }
    }
    network.add(to_nowhere_node, sink, unbounded);
    network.add(source, from_nowhere_node, unbounded);
    network.add(sink, source, unbounded);
    network.push_all(lower_source, lower_sink);
    for (size_t e : bounds) {
        if (network.flow(e) != network.capacity(e)) return std::nullopt;
    }
    // Each pair's bytes go through the first slot that joins them; the rest carry none.
    const auto me = static_cast<size_t>(member);
    const Neighbours& mine = neighbours[me];
    SlotCounts counts{std::vector<int64_t>(mine.destinations.size(), 0), std::vector<int64_t>(mine.sources.size(), 0)};
    std::map<int64_t, bool> given;
    bool nowhere_given = false;
    for (size_t j = 0; j < mine.destinations.size(); ++j) {
        const int64_t q = mine.destinations[j];
        if (!real(q, n)) {
            if (!nowhere_given) counts.send[j] = network.flow(*to_nowhere[me]);
            nowhere_given = true;
        } else if (!given[q]) {
            counts.send[j] = network.flow(pair[me][q]);
            given[q] = true;
        }
    }
    bool nowhere_taken = false;
    for (size_t k = 0; k < mine.sources.size(); ++k) {
        const int64_t s = mine.sources[k];
        if (!real(s, n)) {
            if (!nowhere_taken) counts.receive[k] = network.flow(*from_nowhere[me]);
            nowhere_taken = true;
            continue;
        }
        const Neighbours& theirs = neighbours[static_cast<size_t>(s)];
        const auto slot = sending_slot(topologies[me]->cartesian, mine, k, member, theirs);
        const auto first = std::find(theirs.destinations.begin(), theirs.destinations.end(), member);
        if (slot && first != theirs.destinations.end() &&
            *slot == static_cast<size_t>(first - theirs.destinations.begin())) {
            counts.receive[k] = network.flow(pair[static_cast<size_t>(s)][member]);
        }
    }
    return counts;
}

}  // namespace htrace::replay
