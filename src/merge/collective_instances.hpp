#pragma once
// Which instance each collective of a sequence is, whatever call site made it. Every member of a
// communicator makes its collectives on it in one order (MPI requires it), so the k-th collective a
// rank makes on a communicator is the k-th that every other member makes there: one instance, which
// the merge must keep as one event. Windows and files order their own collectives the same way.
//
// A communicator is known by where it was made, which all its members agree on: the instance of its
// creation on its parent and its colour (for a split of an intercommunicator, the lower of its two
// groups' leaders); one made by MPI_Comm_create_group, which only its members call, by its parent,
// its members and how many such creations of that group the rank had made there; an intercommunicator made by
// MPI_Intercomm_create by the pair of its leaders and how many the rank had made between them. Its
// id is no use: ids count the creations each rank took part in, which differ between ranks.

#include "trace/event.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

namespace htrace {

// Collective instances numbered from `first` to before `end` on one stream (a communicator, window
// or file, as a stable identity); `known` false where a count drawn from a histogram hides them.
struct InstanceRange {
    int64_t first = 0;
    int64_t end = 0;
    bool known = true;
    bool operator==(const InstanceRange&) const = default;
};

using InstanceRanges = std::map<uint64_t, InstanceRange>;  // stream -> range

// Follows one rank at a time through a sequence: the stream and instance of each collective it
// makes, and which communicator, window and file each of its ids names.
class StreamTracker {
public:
    struct Place {
        uint64_t stream = 0;
        int64_t instance = -1;  // -1: unknown (after a count drawn from a histogram)
    };

    // Where `rank`'s call of `e` is (for a collective, creation or collective I/O: its instance on the
    // stream it is made on, and for a creation the first instance of what it made), and what it
    // makes or frees.
    std::vector<Place> take_part(const Event& e, Rank rank);
    // `rank` ran `body` `times` times beyond the one take_part saw (unknown: a drawn count).
    void repeat(const std::map<uint64_t, int64_t>& per_iteration, Rank rank, std::optional<int64_t> times);
    // The communicator `rank` calls `id`.
    uint64_t communicator(Rank rank, int64_t id) const;
    // Ranks a creation in sight gave the communicator `stream`; null for others.
    const std::vector<Rank>* members(uint64_t stream) const;
    // Where a communicator made by a split (or dup, create ...) was made: the creation's instance on
    // its parent, the same for every colour it made; likewise a window's or file's, and every rank's
    // MPI_COMM_SELF is one family (files each rank opens on it are colours of one); nullopt for
    // others.
    std::optional<uint64_t> birth(uint64_t stream) const;
    // Forgets what `rank` made since `mark()` (inside a loop, whose iterations each made their own):
    // its ids then name communicators no later call can place.
    size_t mark(Rank rank) const;
    void forget_made_since(Rank rank, size_t mark);

private:
    struct RankState {
        std::map<int64_t, uint64_t> comms, windows, files;  // id -> stream
        std::map<uint64_t, int64_t> next;                   // stream -> instances so far (-1: unknown)
        std::map<std::pair<uint64_t, int64_t>, int64_t> group_creations;  // (parent, colour) -> count
        std::map<std::pair<int64_t, int64_t>, int64_t> leader_pairs;       // Intercomm_create's
        std::vector<std::pair<char, int64_t>> made;  // (kind, id) in order, for forget_made_since
    };
    RankState& state(Rank rank) { return ranks_[rank]; }
    int64_t take_instance(RankState& s, uint64_t stream);
    // Each adds to `places` what `rank`'s call of `e` takes part in (take_part, by the kind of call).
    int64_t take_place(std::vector<Place>& places, RankState& s, uint64_t stream);
    void take_opening(std::vector<Place>& places, RankState& s, const Event& e, Rank rank, uint64_t parent);
    void take_on_handle(std::vector<Place>& places, RankState& s, std::map<int64_t, uint64_t>& ids,
                        std::optional<int64_t> id, bool frees);
    void take_creation(std::vector<Place>& places, RankState& s, const Event& e, Rank rank, uint64_t parent);
    // The stream of a window or file by the rank's id for it.
    uint64_t id_stream(const std::map<int64_t, uint64_t>& ids, int64_t id) const;

    std::map<Rank, RankState> ranks_;
    std::map<uint64_t, std::vector<Rank>> members_;
    mutable std::map<uint64_t, uint64_t> births_;
    uint64_t unknown(int64_t id) const;          // the stream of an id made before the sequence
    mutable std::set<uint64_t> unknown_;         // those streams
};

// For each top-level node of a sequence, the instances its collectives are on each stream (over all
// its ranks), and the members each creation in sight gave a communicator.
class CollectiveInstances {
public:
    explicit CollectiveInstances(const Sequence& seq);

    const InstanceRanges& of(size_t node) const { return nodes_[node]; }
    // The ranks that make collectives on `stream` in this sequence.
    const std::vector<Rank>& users(uint64_t stream) const;
    std::optional<uint64_t> birth(uint64_t stream) const { return tracker_.birth(stream); }
    // For a top-level collective event, its ranks by the stream each makes it on.
    const std::map<uint64_t, std::vector<Rank>>& ranks_by_stream(size_t node) const { return by_stream_[node]; }

private:
    StreamTracker tracker_;
    std::vector<InstanceRanges> nodes_;
    std::vector<std::map<uint64_t, std::vector<Rank>>> by_stream_;
    std::map<uint64_t, std::vector<Rank>> users_;
};

}  // namespace htrace
