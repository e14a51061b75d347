#pragma once
// A communicator's topology, as a trace keeps it, for neighbourhood collectives: a Cartesian grid (its
// dimensions, and which are periodic), or the neighbours a graph gives one rank (its sources and
// destinations, in the order MPI lists them, each relative to the rank modulo the communicator's
// size, so that ranks with the same neighbourhood, a ring's or a stencil's, share one). The header
// holds each once, as text; creations name theirs by a key derived from the text.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace htrace {

struct Topology {
    bool cartesian = false;
    std::vector<int64_t> dims;       // cartesian: the grid's extent in each dimension
    std::vector<int64_t> periods;    //   and whether it wraps (1) or not (0)
    std::vector<int64_t> sources;    // graph: relative ranks of the neighbours it receives from
    std::vector<int64_t> destinations;  //  and sends to
    bool operator==(const Topology&) const = default;
};

// "cart dims=4,2 periods=1,0", "graph sources=1,3 destinations=1,3".
std::string topology_text(const Topology& topology);
// Nullopt for text that is not one (a damaged trace), or a grid or neighbour list larger than a job.
std::optional<Topology> parse_topology(std::string_view text);
// The key creations name a topology's text by (never negative: kNoComm says "none").
int64_t topology_key(std::string_view text);

// One rank's neighbours in the order neighbourhood collectives use them, as ranks of the
// communicator: a Cartesian grid's negative then positive neighbour in each dimension (kProcNull,
// -2, past an edge that does not wrap), a graph's as listed.
struct Neighbours {
    std::vector<int64_t> sources;
    std::vector<int64_t> destinations;
};
Neighbours neighbours_of(const Topology& topology, int64_t rank, int64_t size);

// Which of `sender`'s destination slots delivers into `receiver`'s source slot `slot`: in a grid, the
// slot of the other direction in the same dimension; in a graph, the k-th time the sender lists the
// receiver, where `slot` is the k-th time the receiver lists the sender. Nullopt where none does.
std::optional<size_t> sending_slot(bool cartesian, const Neighbours& receiver, size_t slot, int64_t receiver_rank,
                                   const Neighbours& sender);

}  // namespace htrace
