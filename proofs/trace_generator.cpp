#include "proofs/trace_generator.hpp"

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <utility>

namespace htrace::proofs {
namespace {

using Engine = boost::random::mt19937_64;

std::vector<Rank> ranks_up_to(int32_t count)
{
    std::vector<Rank> ranks;
    for (Rank r = 0; r < count; ++r) ranks.push_back(r);
    return ranks;
}

// One value per rank, stored as the merge stores it: exact when all ranks agree, else per value
// the ranks that had it. `ranks` is ascending.
Value by_rank(const std::vector<Rank>& ranks, const std::function<int64_t(Rank)>& value_of)
{
    std::map<int64_t, std::vector<Rank>> ranks_by_value;
    for (Rank r : ranks) ranks_by_value[value_of(r)].push_back(r);
    if (ranks_by_value.size() == 1) return Value(ranks_by_value.begin()->first);
    std::vector<PerRankValue> entries;
    for (const auto& [value, holders] : ranks_by_value) entries.push_back({value, RankList::from_sorted(holders)});
    return Value(std::move(entries));
}

Param param(Role role, int64_t value) { return Param{role, Value(value)}; }
Param param(Role role, Value value) { return Param{role, std::move(value)}; }

Node loop_node(Value iterations, Sequence body) { return Node{Loop{std::move(iterations), std::move(body)}}; }

// Every rank taking part in some event of `seq`, ascending.
std::vector<Rank> participants_of(const Sequence& seq)
{
    std::set<Rank> found;
    std::function<void(const Sequence&)> collect = [&](const Sequence& s) {
        for (const auto& node : s) {
            if (node.is_loop()) {
                collect(node.loop().body);
            } else {
                for (Rank r : node.event().ranks.expand()) found.insert(r);
            }
        }
    };
    collect(seq);
    return {found.begin(), found.end()};
}

bool is_rooted(Op op)
{
    return op == Op::Bcast || op == Op::Ibcast || op == Op::Reduce || op == Op::Ireduce || op == Op::Gather ||
           op == Op::Igather || op == Op::Scatter || op == Op::Gatherv || op == Op::Scatterv;
}

// Collectives whose members each bring their own sizes (the trace keeps each member's total).
bool is_vector(Op op)
{
    return op == Op::Gatherv || op == Op::Scatterv || op == Op::Allgatherv || op == Op::Alltoallv ||
           op == Op::Ialltoallv;
}

// The communicators one creation made (or world, or self): per world rank its id and group.
struct Family {
    std::vector<int64_t> id;                 // per world rank; kNoComm where the rank holds none
    std::vector<int32_t> group;              // per world rank: index into groups, -1 where none
    std::vector<std::vector<Rank>> groups;   // members, in communicator rank order

    std::vector<Rank> holders() const
    {
        std::vector<Rank> ranks;
        for (size_t r = 0; r < group.size(); ++r) {
            if (group[r] >= 0) ranks.push_back(static_cast<Rank>(r));
        }
        return ranks;
    }
    // Those of `among` that hold one of these communicators.
    std::vector<Rank> holders_among(const std::vector<Rank>& among) const
    {
        std::vector<Rank> ranks;
        for (Rank r : among) {
            if (group[static_cast<size_t>(r)] >= 0) ranks.push_back(r);
        }
        return ranks;
    }
    const std::vector<Rank>& group_of(Rank r) const
    {
        return groups[static_cast<size_t>(group[static_cast<size_t>(r)])];
    }
    int64_t size_of(Rank r) const { return static_cast<int64_t>(group_of(r).size()); }
    int64_t position_of(Rank r) const
    {
        const auto& members = group_of(r);
        return std::find(members.begin(), members.end(), r) - members.begin();
    }
};

Family world_family(int32_t size)
{
    Family family;
    family.id.assign(static_cast<size_t>(size), 0);
    family.group.assign(static_cast<size_t>(size), 0);
    family.groups = {ranks_up_to(size)};
    return family;
}

Family self_family(int32_t size)
{
    Family family;
    family.id.assign(static_cast<size_t>(size), 1);
    for (Rank r = 0; r < size; ++r) {
        family.group.push_back(r);
        family.groups.push_back({r});
    }
    return family;
}

// Where point-to-point events may happen: who may take part, whether collectives may (not inside
// loops whose count can differ per rank, nor among a subset of the ranks), and how many times the
// enclosing loops repeat at most (to keep traces small).
struct Scope {
    std::vector<Rank> ranks;
    bool collectives = true;
    int64_t repeats = 1;
};

constexpr int kMaxDepth = 3;
constexpr int64_t kMaxRepeats = 12;
constexpr int64_t kMaxTag = 20;
constexpr int64_t kMaxBytes = 4096;

// Send and receive side of one member's collective, as recorded.
struct Sizes {
    int64_t bytes = 0;
    int64_t recv_bytes = 0;
};

class Generator {
public:
    explicit Generator(uint64_t seed) : engine_(seed) {}
    Trace trace();

private:
    int64_t pick(int64_t low, int64_t high);
    bool chance(int percent) { return pick(0, 99) < percent; }
    size_t pick_index(size_t count) { return static_cast<size_t>(pick(0, static_cast<int64_t>(count) - 1)); }
    template <class T>
    const T& pick_from(const std::vector<T>& items) { return items[pick_index(items.size())]; }
    size_t created_family() { return 2 + pick_index(families_.size() - 2); }
    std::vector<Rank> subset(const std::vector<Rank>& from);
    Event event(Op op, const std::vector<Rank>& ranks, std::vector<Param> params);

    Value number(const std::vector<Rank>& ranks, int64_t low, int64_t high);
    Value histogram(const std::vector<Rank>& ranks, const std::vector<int64_t>& values, bool keep_seen);
    Value peer(const Family& family, const std::vector<Rank>& ranks, bool wildcard);
    Value comm(const Family& family, const std::vector<Rank>& ranks);

    Sequence sequence(const Scope& scope, int depth);
    void block(Sequence& out, const Scope& scope, int depth);
    size_t family_for(const Scope& scope);
    void send(Sequence& out, const Scope& scope, size_t family);
    void receive(Sequence& out, const Scope& scope);
    void completion(Sequence& out, const std::vector<Rank>& ranks);
    void collective(Sequence& out, size_t family);
    std::vector<Sizes> recorded_sizes(Op op, size_t n, size_t root);
    void loop(Sequence& out, const Scope& scope, int depth);
    void diverging_groups(Sequence& out, int depth);
    void split_in_loop(Sequence& out, const Scope& scope);
    size_t create_family(Sequence& out, size_t parent);
    void free_family(Sequence& out, size_t index);

    Engine engine_;
    int32_t world_ = 1;
    HistogramConfig config_;
    uint64_t signature_ = 0;
    std::vector<Family> families_;               // world, self, then the live created ones
    std::vector<std::set<int64_t>> ids_in_use_;  // per rank, created communicators' ids
};

Trace Generator::trace()
{
    world_ = static_cast<int32_t>(pick(1, 12));
    config_.bins = static_cast<uint32_t>(pick(4, 32));
    families_ = {world_family(world_), self_family(world_)};
    ids_in_use_.assign(static_cast<size_t>(world_), {});
    Trace trace;
    trace.header.ranks = world_;
    trace.header.precision = static_cast<int32_t>(pick(0, 100));
    trace.header.histogram = config_;
    trace.body = sequence(Scope{ranks_up_to(world_), true, 1}, 0);
    while (families_.size() > 2 && chance(50)) free_family(trace.body, created_family());
    return trace;
}

int64_t Generator::pick(int64_t low, int64_t high)
{
    return boost::random::uniform_int_distribution<int64_t>(low, high)(engine_);
}

std::vector<Rank> Generator::subset(const std::vector<Rank>& from)
{
    if (from.empty()) return {};
    if (chance(30)) return from;
    std::vector<Rank> chosen;
    for (Rank r : from) {
        if (chance(50)) chosen.push_back(r);
    }
    if (chosen.empty()) chosen.push_back(pick_from(from));
    return chosen;
}

Event Generator::event(Op op, const std::vector<Rank>& ranks, std::vector<Param> params)
{
    Event e;
    e.op = op;
    e.signature = ++signature_;
    e.params = std::move(params);
    e.ranks = RankList::from_sorted(ranks);
    for (int64_t i = pick(1, 3); i > 0; --i) e.compute.add(static_cast<double>(pick(1, 1000)) * 1e-6);
    return e;
}

// Exact, one value per rank, or a histogram of a few values (each rank adding one or two).
Value Generator::number(const std::vector<Rank>& ranks, int64_t low, int64_t high)
{
    const int64_t form = pick(0, 3);
    if (form <= 1) return Value(pick(low, high));
    if (form == 2) return by_rank(ranks, [&](Rank) { return pick(low, high); });
    std::vector<int64_t> values;
    for (int64_t i = pick(1, 4); i > 0; --i) values.push_back(pick(low, high));
    return histogram(ranks, values, false);
}

Value Generator::histogram(const std::vector<Rank>& ranks, const std::vector<int64_t>& values, bool keep_seen)
{
    Histogram h(config_);
    if (keep_seen) h.keep_seen_values();  // endpoints: replay must only draw peers that occurred
    for (Rank r : ranks) {
        for (int64_t i = pick(1, 2); i > 0; --i) {
            h.add(pick_from(values), r, static_cast<uint64_t>(pick(1, 3)));
        }
    }
    // Now and then alike on every rank (trace format 13): replay draws it once per instance.
    return Value(std::move(h), chance(30));
}

// A relative peer in each rank's communicator: exact, per rank, or a histogram of seen values, with
// MPI_PROC_NULL (and for receives MPI_ANY_SOURCE) among them now and then.
Value Generator::peer(const Family& family, const std::vector<Rank>& ranks, bool wildcard)
{
    auto symbolic = [&]() -> std::optional<int64_t> {
        if (chance(8)) return kProcNull;
        if (wildcard && chance(10)) return kAnySource;
        return std::nullopt;
    };
    int64_t smallest = family.size_of(ranks.front());
    for (Rank r : ranks) smallest = std::min(smallest, family.size_of(r));
    const int64_t form = pick(0, 2);
    if (form == 0) return Value(symbolic().value_or(pick(0, smallest - 1)));
    if (form == 1) return by_rank(ranks, [&](Rank r) { return symbolic().value_or(pick(0, family.size_of(r) - 1)); });
    std::vector<int64_t> values;
    for (int64_t i = pick(1, 3); i > 0; --i) values.push_back(symbolic().value_or(pick(0, smallest - 1)));
    return histogram(ranks, values, true);
}

Value Generator::comm(const Family& family, const std::vector<Rank>& ranks)
{
    return by_rank(ranks, [&](Rank r) { return family.id[static_cast<size_t>(r)]; });
}

Sequence Generator::sequence(const Scope& scope, int depth)
{
    Sequence out;
    for (int64_t i = depth == 0 ? pick(3, 10) : pick(1, 4); i > 0; --i) block(out, scope, depth);
    return out;
}

void Generator::block(Sequence& out, const Scope& scope, int depth)
{
    enum Kind { send_kind, receive_kind, completion_kind, collective_kind, loop_kind, create_kind, free_kind,
                split_loop_kind, diverging_kind };
    std::vector<std::pair<int, Kind>> weights = {{30, send_kind}, {8, receive_kind}, {12, completion_kind}};
    const bool top = depth == 0;
    if (scope.collectives) weights.push_back({14, collective_kind});
    if (depth < kMaxDepth) weights.push_back({16, loop_kind});
    if (top) weights.push_back({5, create_kind});
    if (top && families_.size() > 2) weights.push_back({3, free_kind});
    if (scope.collectives && depth < kMaxDepth) weights.push_back({4, split_loop_kind});
    if (top && world_ >= 2) weights.push_back({5, diverging_kind});
    int total = 0;
    for (const auto& w : weights) total += w.first;
    int64_t roll = pick(0, total - 1);
    Kind kind = send_kind;
    for (const auto& w : weights) {
        if (roll < w.first) {
            kind = w.second;
            break;
        }
        roll -= w.first;
    }
    switch (kind) {
    case send_kind: send(out, scope, family_for(scope)); break;
    case receive_kind: receive(out, scope); break;
    case completion_kind: completion(out, scope.ranks); break;
    case collective_kind:
        // Mostly the world, sometimes self, else a created communicator.
        collective(out, chance(50) || families_.size() == 2 ? (chance(90) ? 0 : 1) : created_family());
        break;
    case loop_kind: loop(out, scope, depth); break;
    case create_kind: create_family(out, chance(60) || families_.size() == 2 ? 0 : created_family()); break;
    case free_kind: free_family(out, created_family()); break;
    case split_loop_kind: split_in_loop(out, scope); break;
    case diverging_kind: diverging_groups(out, depth); break;
    }
}

// A communicator some of the scope's ranks hold: mostly the world.
size_t Generator::family_for(const Scope& scope)
{
    std::vector<size_t> candidates;
    for (size_t i = 0; i < families_.size(); ++i) {
        for (Rank r : scope.ranks) {
            if (families_[i].group[static_cast<size_t>(r)] >= 0) {
                candidates.push_back(i);
                break;
            }
        }
    }
    if (chance(60)) return 0;
    return pick_from(candidates);
}

void Generator::send(Sequence& out, const Scope& scope, size_t family_index)
{
    static const std::vector<Op> ops = {Op::Send, Op::Send, Op::Isend, Op::Isend, Op::Ssend, Op::Issend,
                                        Op::Sendrecv, Op::Sendrecv, Op::Sendrecv_replace, Op::Bsend,
                                        Op::Rsend, Op::Ibsend, Op::Irsend};
    const Family& family = families_[family_index];
    const auto ranks = subset(family.holders_among(scope.ranks));
    if (ranks.empty()) return;
    const Op op = pick_from(ops);
    std::vector<Param> params = {param(Role::peer, peer(family, ranks, false)),
                                 param(Role::tag, number(ranks, 0, kMaxTag)),
                                 param(Role::bytes, number(ranks, 0, kMaxBytes))};
    if (op == Op::Sendrecv || op == Op::Sendrecv_replace) {
        params.push_back(param(Role::source, peer(family, ranks, true)));
        params.push_back(param(Role::recv_tag, number(ranks, 0, kMaxTag)));
        if (op == Op::Sendrecv) params.push_back(param(Role::recv_bytes, number(ranks, 0, kMaxBytes)));
    }
    params.push_back(param(Role::comm, comm(family, ranks)));
    out.push_back(Node{event(op, ranks, std::move(params))});
    const bool nonblocking = op == Op::Isend || op == Op::Issend || op == Op::Ibsend || op == Op::Irsend;
    if (nonblocking && chance(50)) out.push_back(Node{event(Op::Wait, ranks, {param(Role::requests, 1)})});
}

// What the application asked to receive or probe: replay posts no receive for it (a blocking
// receive only marks where replay completes the receives it posted itself).
void Generator::receive(Sequence& out, const Scope& scope)
{
    static const std::vector<Op> ops = {Op::Recv, Op::Recv, Op::Irecv, Op::Irecv, Op::Probe, Op::Iprobe};
    const Family& family = families_[family_for(scope)];
    const auto ranks = subset(family.holders_among(scope.ranks));
    if (ranks.empty()) return;
    const Op op = pick_from(ops);
    std::vector<Param> params = {param(Role::peer, peer(family, ranks, true)),
                                 param(Role::tag, chance(10) ? Value(kAnyTag) : number(ranks, 0, kMaxTag))};
    if (op == Op::Recv || op == Op::Irecv) params.push_back(param(Role::recv_bytes, number(ranks, 0, kMaxBytes)));
    if (op == Op::Iprobe) params.push_back(param(Role::completed, number(ranks, 0, 1)));
    params.push_back(param(Role::comm, comm(family, ranks)));
    out.push_back(Node{event(op, ranks, std::move(params))});
}

void Generator::completion(Sequence& out, const std::vector<Rank>& scope_ranks)
{
    static const std::vector<Op> ops = {Op::Wait, Op::Wait, Op::Waitall, Op::Waitall, Op::Test, Op::Test,
                                        Op::Testall, Op::Waitany, Op::Waitsome, Op::Testany, Op::Testsome};
    const auto ranks = subset(scope_ranks);
    const Op op = pick_from(ops);
    const bool single = op == Op::Wait || op == Op::Test;
    std::vector<Param> params = {param(Role::requests, single ? Value(int64_t{1}) : number(ranks, 1, 4))};
    if (op == Op::Test || op == Op::Testall || op == Op::Testany) {
        params.push_back(param(Role::completed, number(ranks, 0, 1)));
    }
    if (op == Op::Waitsome || op == Op::Testsome) params.push_back(param(Role::completed, number(ranks, 0, 2)));
    out.push_back(Node{event(op, ranks, std::move(params))});
}

// What the tracer records of each member of one communicator of `n` members with root `root`:
// send-side bytes only where MPI reads them (none with MPI_IN_PLACE), receive-side bytes likewise.
std::vector<Sizes> Generator::recorded_sizes(Op op, size_t n, size_t root)
{
    auto amount = [&] { return chance(15) ? int64_t{0} : pick(1, kMaxBytes); };
    std::vector<Sizes> sizes(n);
    const int64_t block = amount();
    const bool in_place = chance(25);
    std::vector<int64_t> own(n);
    for (auto& value : own) value = amount();
    int64_t total = 0;
    for (int64_t value : own) total += value;
    for (size_t i = 0; i < n; ++i) {
        Sizes& s = sizes[i];
        const bool at_root = i == root;
        switch (op) {
        case Op::Gather: case Op::Igather: s = {at_root && in_place ? 0 : block, at_root ? block : 0}; break;
        case Op::Scatter: s = {at_root ? block : 0, block}; break;
        case Op::Allgather: case Op::Iallgather: case Op::Alltoall: s = {in_place ? 0 : block, block}; break;
        case Op::Reduce_scatter_block: s = {0, block}; break;
        case Op::Gatherv: s = {at_root && in_place ? 0 : own[i], at_root ? total : 0}; break;
        case Op::Allgatherv: s = {in_place ? 0 : own[i], total}; break;
        case Op::Scatterv: s = {at_root ? total : 0, own[i]}; break;
        case Op::Alltoallv: case Op::Ialltoallv: break;  // below
        default: s = {block, 0}; break;
        }
    }
    if (op == Op::Alltoallv || op == Op::Ialltoallv) {
        for (size_t i = 0; i < n; ++i) {
            for (size_t j = 0; j < n; ++j) {
                const int64_t part = amount() / static_cast<int64_t>(n);
                sizes[i].bytes += part;
                sizes[j].recv_bytes += part;
            }
        }
    }
    return sizes;
}

// A collective on whole communicators of a family (often all of them, as one SPMD call site), with
// roots and buffer sizes that fit together within each communicator, as the tracer records them.
void Generator::collective(Sequence& out, size_t family_index)
{
    static const std::vector<Op> ops = {
        Op::Barrier, Op::Bcast, Op::Bcast, Op::Reduce, Op::Allreduce, Op::Allreduce, Op::Scan, Op::Exscan,
        Op::Allgather, Op::Alltoall, Op::Gather, Op::Scatter, Op::Reduce_scatter_block, Op::Gatherv,
        Op::Scatterv, Op::Allgatherv, Op::Alltoallv, Op::Ibarrier, Op::Ibcast, Op::Iallreduce, Op::Ireduce,
        Op::Iscan, Op::Igather, Op::Iallgather, Op::Ialltoallv};
    const Family& family = families_[family_index];
    std::vector<char> chosen(family.groups.size(), 1);
    if (chance(25)) {
        for (auto& c : chosen) c = chance(50);
        chosen[pick_index(chosen.size())] = 1;
    }
    const Op op = pick_from(ops);
    std::vector<Rank> ranks;
    std::map<Rank, Sizes> sizes;
    std::map<Rank, int64_t> roots;
    for (size_t g = 0; g < family.groups.size(); ++g) {
        if (!chosen[g]) continue;
        const auto& members = family.groups[g];
        const size_t root = pick_index(members.size());
        const auto recorded = recorded_sizes(op, members.size(), root);
        for (size_t i = 0; i < members.size(); ++i) {
            ranks.push_back(members[i]);
            sizes[members[i]] = recorded[i];
            roots[members[i]] = static_cast<int64_t>(root);
        }
    }
    std::sort(ranks.begin(), ranks.end());
    const bool has_bytes = op != Op::Barrier && op != Op::Ibarrier && op != Op::Reduce_scatter_block;
    const bool has_recv_bytes = op == Op::Allgather || op == Op::Iallgather || op == Op::Alltoall || op == Op::Gather ||
                                op == Op::Igather || op == Op::Scatter || op == Op::Reduce_scatter_block ||
                                is_vector(op) || op == Op::Allgatherv;
    Value bytes = by_rank(ranks, [&](Rank r) { return sizes[r].bytes; });
    Value recv_bytes = by_rank(ranks, [&](Rank r) { return sizes[r].recv_bytes; });
    if (chance(35)) {
        // Merged sizes: a histogram, drawn once for all members, or per member for v-collectives.
        const bool receive_side = !has_bytes || op == Op::Scatterv;
        std::vector<int64_t> values;
        for (Rank r : ranks) values.push_back(receive_side ? sizes[r].recv_bytes : sizes[r].bytes);
        (receive_side ? recv_bytes : bytes) = histogram(ranks, values, false);
    }
    std::vector<Param> params;
    if (has_bytes) params.push_back(param(Role::bytes, bytes));
    if (has_recv_bytes) params.push_back(param(Role::recv_bytes, recv_bytes));
    if (is_rooted(op)) params.push_back(param(Role::root, by_rank(ranks, [&](Rank r) { return roots[r]; })));
    params.push_back(param(Role::comm, comm(family, ranks)));
    out.push_back(Node{event(op, ranks, std::move(params))});
    const bool nonblocking = operation_name(op).substr(0, 5) == "MPI_I";
    if (nonblocking && chance(70)) out.push_back(Node{event(Op::Wait, ranks, {param(Role::requests, 1)})});
}

void Generator::loop(Sequence& out, const Scope& scope, int depth)
{
    constexpr int64_t most = 3;
    if (scope.repeats * most > kMaxRepeats) {
        send(out, scope, family_for(scope));
        return;
    }
    const int64_t form = pick(0, 2);
    // Some loops' last iteration leaves out the end of the body (phase folding's E (X E)^n): every
    // participant leaves out the same calls, so collectives in them still meet.
    const auto leaving_out = [&](Node loop) {
        const auto size = static_cast<int64_t>(loop.loop().body.size());
        if (chance(20)) loop.loop().last_leaves_out = static_cast<uint32_t>(pick(1, size));
        return loop;
    };
    if (form == 0) {
        const int64_t count = pick(1, most);
        Sequence body = sequence(Scope{scope.ranks, scope.collectives, scope.repeats * count}, depth + 1);
        if (!body.empty()) out.push_back(leaving_out(loop_node(Value(count), std::move(body))));
        return;
    }
    if (form == 1) {
        // Ranks iterate different numbers of times: the merge only allows that without collectives.
        Sequence body = sequence(Scope{scope.ranks, false, scope.repeats * most}, depth + 1);
        const auto ranks = participants_of(body);
        if (ranks.empty()) return;
        out.push_back(loop_node(by_rank(ranks, [&](Rank) { return pick(1, most); }), std::move(body)));
        return;
    }
    // A histogram count is drawn once per loop instance for every participant, so collectives stay.
    Sequence body = sequence(Scope{scope.ranks, scope.collectives, scope.repeats * most}, depth + 1);
    auto ranks = participants_of(body);
    if (ranks.empty()) return;
    const std::vector<int64_t> counts = chance(20) ? std::vector<int64_t>{0, 1, 2} : std::vector<int64_t>{1, 2, 3};
    out.push_back(leaving_out(loop_node(histogram(ranks, counts, false), std::move(body))));
}

// Two groups of ranks run different loops of point-to-point calls that reach across both groups,
// then meet in a collective (the paper's section 5.3): the merge cannot align their events, so they
// stand one group after the other in the trace.
void Generator::diverging_groups(Sequence& out, int depth)
{
    std::vector<Rank> first;
    std::vector<Rank> second;
    for (Rank r = 0; r < world_; ++r) (chance(50) ? first : second).push_back(r);
    if (first.empty()) {
        first.push_back(second.back());
        second.pop_back();
    }
    if (second.empty()) {
        second.push_back(first.back());
        first.pop_back();
    }
    std::sort(first.begin(), first.end());
    std::sort(second.begin(), second.end());
    for (const auto& group : {first, second}) {
        const int64_t count = pick(1, 3);
        Sequence body;
        send(body, Scope{group, false, count}, 0);
        if (chance(50)) completion(body, group);
        for (int64_t i = pick(0, 2); i > 0; --i) block(body, Scope{group, false, count * 2}, depth + 2);
        out.push_back(loop_node(Value(count), std::move(body)));
    }
    collective(out, 0);
}

// A loop that splits a communicator, uses the new one and frees it: its ids are the same every
// iteration, as the tracer would record them.
void Generator::split_in_loop(Sequence& out, const Scope& scope)
{
    constexpr int64_t most = 3;
    if (scope.repeats * most > kMaxRepeats || scope.ranks.size() != static_cast<size_t>(world_)) return;
    Sequence body;
    const size_t made = create_family(body, 0);
    for (int64_t i = pick(1, 3); i > 0; --i) {
        if (chance(50)) {
            collective(body, made);
        } else {
            send(body, Scope{scope.ranks, false, scope.repeats * most}, made);
        }
    }
    free_family(body, made);
    const auto ranks = participants_of(body);
    Value count = chance(50) ? Value(pick(1, most)) : histogram(ranks, {1, 2, 3}, false);
    out.push_back(loop_node(std::move(count), std::move(body)));
}

// MPI_Comm_split (or MPI_Comm_dup) over every member of the parent's communicators.
size_t Generator::create_family(Sequence& out, size_t parent_index)
{
    const Family parent = families_[parent_index];  // a copy: families_ grows below
    const auto ranks = parent.holders();
    const bool split = chance(75);
    Family made;
    made.id.assign(static_cast<size_t>(world_), kNoComm);
    made.group.assign(static_cast<size_t>(world_), -1);
    for (const auto& members : parent.groups) {
        const int64_t colors = split ? pick(1, 3) : 1;
        std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>> by_color;  // color -> (key, position)
        for (size_t position = 0; position < members.size(); ++position) {
            // MPI_UNDEFINED: this rank gets MPI_COMM_NULL (but every parent group makes one communicator).
            const bool last_chance = position + 1 == members.size() && by_color.empty();
            if (split && !last_chance && chance(10)) continue;
            by_color[pick(0, colors - 1)].emplace_back(split ? pick(0, 3) : 0, static_cast<int64_t>(position));
        }
        for (auto& [color, entries] : by_color) {
            std::sort(entries.begin(), entries.end());  // by key, ties by rank in the parent
            std::vector<Rank> group;
            for (const auto& entry : entries) group.push_back(members[static_cast<size_t>(entry.second)]);
            for (Rank r : group) {
                auto& in_use = ids_in_use_[static_cast<size_t>(r)];
                int64_t id = 2;
                while (in_use.count(id)) ++id;
                in_use.insert(id);
                made.id[static_cast<size_t>(r)] = id;
                made.group[static_cast<size_t>(r)] = static_cast<int32_t>(made.groups.size());
            }
            made.groups.push_back(group);
        }
    }
    auto holds = [&](Rank r) { return made.group[static_cast<size_t>(r)] >= 0; };
    std::vector<Param> params = {
        param(Role::comm, comm(parent, ranks)),
        param(Role::new_comm, by_rank(ranks, [&](Rank r) { return made.id[static_cast<size_t>(r)]; })),
        param(Role::color, by_rank(ranks, [&](Rank r) { return holds(r) ? made.group_of(r).front() : kNoComm; })),
        param(Role::key, by_rank(ranks, [&](Rank r) { return holds(r) ? made.position_of(r) : kNoComm; })),
    };
    out.push_back(Node{event(split ? Op::Comm_split : Op::Comm_dup, ranks, std::move(params))});
    families_.push_back(std::move(made));
    return families_.size() - 1;
}

void Generator::free_family(Sequence& out, size_t index)
{
    const Family& family = families_[index];
    const auto ranks = family.holders();
    if (!ranks.empty()) out.push_back(Node{event(Op::Comm_free, ranks, {param(Role::comm, comm(family, ranks))})});
    for (Rank r : ranks) ids_in_use_[static_cast<size_t>(r)].erase(family.id[static_cast<size_t>(r)]);
    families_.erase(families_.begin() + static_cast<std::ptrdiff_t>(index));
}

// ---- Hand-written cases ---------------------------------------------------------------------------

// Builds events with call sites numbered in order.
class Builder {
public:
    Event operator()(Op op, const std::vector<Rank>& ranks, std::vector<Param> params)
    {
        Event e;
        e.op = op;
        e.signature = ++signature_;
        e.params = std::move(params);
        e.ranks = RankList::from_sorted(ranks);
        e.compute.add(1e-6);
        return e;
    }

    // A send (or Sendrecv, with `source`) on communicator `comm` with `peer` relative to each rank.
    Node send(Op op, const std::vector<Rank>& ranks, Value peer, int64_t tag = 0, int64_t bytes = 8, int64_t comm = 0,
              Value source = Value(kProcNull))
    {
        std::vector<Param> params = {param(Role::peer, std::move(peer)), param(Role::tag, tag),
                                     param(Role::bytes, bytes)};
        if (op == Op::Sendrecv) {
            params.push_back(param(Role::source, std::move(source)));
            params.push_back(param(Role::recv_tag, tag));
            params.push_back(param(Role::recv_bytes, bytes));
        }
        params.push_back(param(Role::comm, comm));
        return Node{(*this)(op, ranks, std::move(params))};
    }

    Node recv(Op op, const std::vector<Rank>& ranks, Value peer, int64_t tag = 0, int64_t bytes = 8, int64_t comm = 0)
    {
        return Node{(*this)(op, ranks, {param(Role::peer, std::move(peer)), param(Role::tag, tag),
                                        param(Role::recv_bytes, bytes), param(Role::comm, comm)})};
    }

    Node wait(Op op, const std::vector<Rank>& ranks, int64_t requests = 1, std::optional<int64_t> completed = {})
    {
        std::vector<Param> params = {param(Role::requests, requests)};
        if (completed) params.push_back(param(Role::completed, *completed));
        return Node{(*this)(op, ranks, std::move(params))};
    }

    Node collective(Op op, const std::vector<Rank>& ranks, int64_t comm = 0, Value root = Value(int64_t{0}))
    {
        std::vector<Param> params;
        if (op != Op::Barrier && op != Op::Ibarrier) params.push_back(param(Role::bytes, 8));
        if (is_rooted(op)) params.push_back(param(Role::root, std::move(root)));
        params.push_back(param(Role::comm, comm));
        return Node{(*this)(op, ranks, std::move(params))};
    }

private:
    uint64_t signature_ = 0;
};

Value per_rank(std::vector<std::pair<int64_t, std::vector<Rank>>> entries)
{
    std::vector<PerRankValue> values;
    for (auto& [value, ranks] : entries) values.push_back({value, RankList::from_sorted(ranks)});
    return Value(std::move(values));
}

Value seen_histogram(const std::vector<std::pair<int64_t, Rank>>& values)
{
    Histogram h(HistogramConfig{});
    h.keep_seen_values();
    for (const auto& [value, rank] : values) h.add(value, rank);
    return Value(std::move(h));
}

Trace trace_of(int32_t ranks, Sequence body)
{
    Trace trace;
    trace.header.ranks = ranks;
    trace.body = std::move(body);
    return trace;
}

}  // namespace

Trace generate_trace(uint64_t seed)
{
    Generator generator(seed);
    return generator.trace();
}

namespace {

// A value every rank has.
Value same(int64_t value) { return Value(value); }

// Peers the tracer records as values of their own: the rank itself and MPI_PROC_NULL.
void add_special_peers(std::vector<NamedTrace>& cases)
{
    const Value zero(int64_t{0});
    {
        Builder b;
        const auto all = ranks_up_to(3);
        Sequence body = {
            b.send(Op::Send, all, zero),
            b.send(Op::Ssend, all, zero, 1),
            b.send(Op::Isend, all, zero, 2),
            b.wait(Op::Wait, all),
            b.send(Op::Sendrecv, all, zero, 3, 16, 0, zero),
            b.send(Op::Send, {1}, zero, 4, 8, 1),  // on MPI_COMM_SELF
            b.recv(Op::Recv, all, zero),
        };
        cases.push_back({"sends to self (relative peer 0)", trace_of(3, std::move(body))});
    }
    {
        Builder b;
        const auto all = ranks_up_to(4);
        Sequence body = {
            b.send(Op::Send, all, same(kProcNull)),
            b.send(Op::Isend, all, same(kProcNull)),
            b.wait(Op::Wait, all),
            b.send(Op::Sendrecv, all, same(kProcNull), 0, 8, 0, same(kProcNull)),
            b.send(Op::Ssend, all, seen_histogram({{kProcNull, 0}, {1, 1}, {kProcNull, 2}, {3, 3}})),
            b.collective(Op::Barrier, all),
        };
        cases.push_back({"sends to MPI_PROC_NULL", trace_of(4, std::move(body))});
    }
}

// Sends that meet each other: they need replay to post the receives first.
void add_head_to_head_sends(std::vector<NamedTrace>& cases)
{
    const Value one(int64_t{1});
    {
        // Both ranks send first and receive after: fine for small messages on a real MPI, a
        // deadlock for large ones unless replay posts the receives first.
        Builder b;
        Sequence body = {
            b.send(Op::Send, {0, 1}, one, 5, 1 << 20),
            b.recv(Op::Recv, {0, 1}, one, 5, 1 << 20),
            b.send(Op::Ssend, {0, 1}, one),
            b.recv(Op::Recv, {0, 1}, one),
        };
        cases.push_back({"head-to-head blocking sends between two ranks", trace_of(2, std::move(body))});
    }
    {
        Builder b;
        const auto all = ranks_up_to(6);
        Sequence body = {
            loop_node(same(3), {b.send(Op::Ssend, all, same(3), 7), b.recv(Op::Recv, all, same(3), 7)}),
            b.collective(Op::Allreduce, all),
        };
        cases.push_back({"head-to-head synchronous sends between rank pairs", trace_of(6, std::move(body))});
    }
}

void add_sendrecv_rings(std::vector<NamedTrace>& cases)
{
    const Value zero(int64_t{0});
    const Value one(int64_t{1});
    {
        Builder b;
        const auto all = ranks_up_to(5);
        Sequence body = {
            loop_node(same(3), {b.send(Op::Sendrecv, all, one, 0, 64, 0, same(4))}),
            loop_node(same(2), {b.send(Op::Sendrecv, all, same(4), 1, 64, 0, one)}),
            b.collective(Op::Barrier, all),
        };
        cases.push_back({"sendrecv rings both ways", trace_of(5, std::move(body))});
    }
    {
        Builder b;
        cases.push_back({"a sendrecv ring of one rank", trace_of(1, {b.send(Op::Sendrecv, {0}, zero, 0, 8, 0, zero)})});
    }
}

void add_diverging_groups(std::vector<NamedTrace>& cases)
{
    // The paper's section 5.3: ranks 0-3 loop twice over Irecv/Send/Wait (first to a partner
    // among 0-3, then to one among 4-7), ranks 4-7 once (to one among 0-3), then all Bcast.
    const std::vector<Rank> low = {0, 1, 2, 3};
    const std::vector<Rank> high = {4, 5, 6, 7};
    Builder b;
    const Value partner = seen_histogram({{1, 0}, {4, 0}, {7, 1}, {4, 1}, {1, 2}, {4, 2}, {7, 3}, {4, 3}});
    Sequence merged = {
        loop_node(same(2), {b.recv(Op::Irecv, low, same(kAnySource)), b.send(Op::Send, low, partner),
                            b.wait(Op::Wait, low)}),
        b.recv(Op::Irecv, high, same(4)),
        b.send(Op::Send, high, same(4)),
        b.wait(Op::Wait, high),
        b.collective(Op::Bcast, ranks_up_to(8)),
    };
    cases.push_back({"diverging groups before a collective (paper section 5.3)", trace_of(8, std::move(merged))});
    Builder e;
    const Value pairs = per_rank({{1, {0, 2}}, {7, {1, 3}}});
    Sequence lossless = {
        e.recv(Op::Irecv, low, pairs),
        e.send(Op::Send, low, pairs),
        e.wait(Op::Wait, low),
        e.recv(Op::Irecv, low, same(4)),
        e.send(Op::Send, low, same(4)),
        e.wait(Op::Wait, low),
        e.recv(Op::Irecv, high, same(4)),
        e.send(Op::Send, high, same(4)),
        e.wait(Op::Wait, high),
        e.collective(Op::Bcast, ranks_up_to(8)),
    };
    cases.push_back({"diverging groups before a collective, lossless", trace_of(8, std::move(lossless))});
}

void add_split_communicators(std::vector<NamedTrace>& cases)
{
    const Value zero(int64_t{0});
    const Value one(int64_t{1});
    // Evens and odds split the world (rank 5 opts out), broadcast from different roots, pass
    // messages around their own ring, and free their communicator.
    Builder b;
    const auto all = ranks_up_to(6);
    const std::vector<Rank> members = {0, 1, 2, 3, 4};
    const Value per_group = per_rank({{2, {0, 2, 4}}, {1, {1, 3}}});  // root, and left neighbour
    Event split = b(Op::Comm_split, all,
                    {param(Role::comm, 0), param(Role::new_comm, per_rank({{2, members}, {kNoComm, {5}}})),
                     param(Role::color, per_rank({{0, {0, 2, 4}}, {1, {1, 3}}, {kNoComm, {5}}})),
                     param(Role::key, per_rank({{0, {0, 1}}, {1, {2, 3}}, {2, {4}}, {kNoComm, {5}}}))});
    Sequence body = {
        Node{std::move(split)},
        b.collective(Op::Bcast, members, 2, per_group),
        b.send(Op::Sendrecv, members, one, 3, 8, 2, per_group),
        b.send(Op::Send, members, zero, 4, 8, 2),
        b.collective(Op::Allreduce, all),
        b.collective(Op::Barrier, members, 2),
        Node{b(Op::Comm_free, members, {param(Role::comm, 2)})},
        b.collective(Op::Barrier, all),
    };
    cases.push_back({"split communicators with their own roots and rings", trace_of(6, std::move(body))});
}

void add_polling_tests(std::vector<NamedTrace>& cases)
{
    const Value zero(int64_t{0});
    const Value one(int64_t{1});
    Builder b;
    const auto all = ranks_up_to(4);
    Sequence body = {
        b.send(Op::Isend, all, one),
        b.send(Op::Isend, all, same(3)),
        loop_node(seen_histogram({{3, 0}, {10, 1}, {1, 2}}), {b.wait(Op::Test, all, 1, 0)}),
        b.wait(Op::Test, all, 1, 1),
        b.wait(Op::Waitall, all, 2),
        b.collective(Op::Ibcast, all, 0, zero),
        b.send(Op::Isend, all, one, 9),
        b.wait(Op::Waitall, all, 2),
    };
    cases.push_back({"polling tests, then waits", trace_of(4, std::move(body))});
}

void add_world_of_one(std::vector<NamedTrace>& cases)
{
    const Value zero(int64_t{0});
    Builder b;
    Sequence body = {
        b.send(Op::Send, {0}, zero),
        b.send(Op::Isend, {0}, zero),
        b.wait(Op::Wait, {0}),
        b.collective(Op::Bcast, {0}),
        b.collective(Op::Allreduce, {0}, 1),
        b.send(Op::Ssend, {0}, zero, 2, 8, 1),
    };
    cases.push_back({"a world of one rank", trace_of(1, std::move(body))});
}

// Loop counts that differ between ranks around point-to-point calls and collectives.
void add_loops_around_messages(std::vector<NamedTrace>& cases)
{
    const Value one(int64_t{1});
    {
        Builder b;
        Sequence body = {
            loop_node(per_rank({{3, {0}}, {2, {1}}}), {b.send(Op::Send, {0, 1}, one), b.recv(Op::Recv, {0, 1}, one)}),
            b.collective(Op::Barrier, {0, 1}),
        };
        cases.push_back({"blocking sends in a loop whose count differs per rank", trace_of(2, std::move(body))});
    }
    {
        Builder b;
        const auto all = ranks_up_to(4);
        Sequence loop_body = {
            b.collective(Op::Allreduce, all),
            b.send(Op::Isend, all, one),
            b.send(Op::Send, {0, 2}, same(2)),
            b.wait(Op::Wait, all),
        };
        Sequence body = {loop_node(seen_histogram({{1, 0}, {2, 1}, {3, 2}, {2, 3}}), std::move(loop_body))};
        cases.push_back({"collectives in a loop with a histogram count", trace_of(4, std::move(body))});
    }
}

}  // namespace

std::vector<NamedTrace> edge_case_traces()
{
    std::vector<NamedTrace> cases;
    add_special_peers(cases);
    add_head_to_head_sends(cases);
    add_sendrecv_rings(cases);
    add_diverging_groups(cases);
    add_split_communicators(cases);
    add_polling_tests(cases);
    add_world_of_one(cases);
    add_loops_around_messages(cases);
    return cases;
}

}  // namespace htrace::proofs
