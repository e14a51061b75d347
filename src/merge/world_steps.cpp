#include "merge/world_steps.hpp"

#include "merge/rank_merge.hpp"
#include "merge/unroll.hpp"
#include "trace/hash.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <span>

namespace htrace {
namespace {

// Calls of a collective on the world a rank may make for its steps to be cut here (the skeleton is
// expanded call by call: its keys only, 8 bytes each).
constexpr uint64_t kMaxUnits = uint64_t(1) << 18;
// The longest body of units whose repetition is looked for.
constexpr size_t kMaxPeriod = 64;

bool is_step_collective(const Event& e)
{
    if (operation_kind(e.op) != OperationKind::collective || creates_request(e.op) || is_window_collective(e.op)) {
        return false;
    }
    const Value* comm = e.find(Role::comm);
    return comm != nullptr && *comm == Value(kWorldComm);
}

// What units may not merge: other collectives (a loop around one would be drawn for its ranks
// alone), and the handles that steps must make and free call for call.
bool keeps_steps_apart(const Event& e)
{
    const OperationKind kind = operation_kind(e.op);
    if (is_collective_or_creation(e.op)) return !is_step_collective(e);
    return kind == OperationKind::comm_free || kind == OperationKind::one_sided || kind == OperationKind::buffer ||
           kind == OperationKind::persistent_init;
}

bool is_prologue(const Node& node)
{
    if (!node.is_event()) return false;
    const OperationKind kind = operation_kind(node.event().op);
    return kind == OperationKind::init || kind == OperationKind::opaque;
}

// The calls of one unit (those before its collective, the collective, and for the last unit of a
// body those after), and how many runs of them it stands for.
struct Unit {
    Sequence calls;
    uint64_t runs;
};

// A rank's sequence as units once each, and how the loops around them repeat them.
struct Pattern {
    struct Item {
        size_t unit = 0;          // where body is empty and count is 0
        int64_t count = 0;        // a loop's
        std::vector<Item> body;
    };
    std::vector<Unit> units;
    std::vector<uint64_t> keys;  // by unit
    std::vector<Item> items;
};

// Units of one call site merge only where their collectives' categorical values (root,
// communicator) agree: those never become histograms.
uint64_t unit_key(const Event& e)
{
    uint64_t h = mix64(static_cast<uint64_t>(e.op) * 0x100000001b3ull ^ e.signature);
    for (const auto& p : e.params) {
        if (!role_is_categorical(p.role)) continue;
        const uint64_t value = p.value.is_exact() ? static_cast<uint64_t>(p.value.exact()) : 0x4157ull;
        h = mix64(h * 0x9E3779B97F4A7C15ull + (static_cast<uint64_t>(p.role) << 32 ^ value));
    }
    return h;
}

// Where the calls outside every unit go at top level: those before the first unit where a loop
// comes first, and those after the last unit (the end of the run), both kept as they are.
struct Ends {
    Sequence start;
    Sequence end;
};

// The items of `body`, which runs `runs` times in all. Calls between units go to the unit before;
// those before the first unit of a loop's body to its last (the body turned round: the counts stay
// right, the first iteration's order does not). At top level `ends` takes what no unit does.
bool add_items(std::span<const Node> body, uint64_t runs, Pattern& pattern, std::vector<Pattern::Item>& items,
               Ends* ends)
{
    Sequence pending;
    Sequence head;
    std::optional<size_t> last;  // unit at this level
    const auto settle = [&] {
        Sequence& to = last ? pattern.units[*last].calls : head;
        to.insert(to.end(), std::make_move_iterator(pending.begin()), std::make_move_iterator(pending.end()));
        pending.clear();
    };
    for (const auto& node : body) {
        if (is_step_collective(node)) {
            pending.push_back(node);
            last = pattern.units.size();
            pattern.units.push_back({std::move(pending), runs});
            pattern.keys.push_back(unit_key(node.event()));
            pending.clear();
            items.push_back({*last, 0, {}});
        } else if (node.is_loop() && holds_step_collective(node)) {
            const Loop& loop = node.loop();
            if (!loop.iterations.is_exact() || loop.iterations.exact() < 1 || loop.last_leaves_out > 0) return false;
            settle();
            Pattern::Item item{0, loop.iterations.exact(), {}};
            if (!add_items(loop.body, runs * static_cast<uint64_t>(item.count), pattern, item.body, nullptr)) return false;
            items.push_back(std::move(item));
        } else {
            pending.push_back(node);
        }
    }
    if (ends != nullptr) {
        ends->start = std::move(head);
        ends->end = std::move(pending);
        return true;
    }
    if (!last) return head.empty() && pending.empty();
    settle();
    Sequence& tail = pattern.units[*last].calls;
    tail.insert(tail.end(), std::make_move_iterator(head.begin()), std::make_move_iterator(head.end()));
    return true;
}

uint64_t calls_of(const std::vector<Pattern::Item>& items)
{
    uint64_t calls = 0;
    for (const auto& item : items) {
        calls += item.body.empty() ? 1 : static_cast<uint64_t>(item.count) * calls_of(item.body);
        if (calls > kMaxUnits) return kMaxUnits + 1;
    }
    return calls;
}

// The skeleton folded: a unit stands for the calls (indices into the expanded skeleton) it was
// made of; a loop for its instances' counts, its body merged item by item.
struct Folded {
    uint64_t key = 0;
    std::vector<uint32_t> calls;   // a unit's
    std::vector<int64_t> counts;   // a loop's, one per instance
    std::vector<Folded> body;

    bool is_loop() const { return !body.empty(); }
};

// A loop of one unit has that unit's key: a step made once aligns with it made several times.
uint64_t loop_key(const std::vector<Folded>& body)
{
    if (body.size() == 1 && !body.front().is_loop()) return body.front().key;
    uint64_t h = 0x5eed1009ull;
    for (const auto& item : body) h = mix64(h * 31 + item.key);
    return h;
}

// A unit as a loop of one iteration in each of the instances it stands for.
void as_loop(Folded& item)
{
    if (item.is_loop()) return;
    Folded unit = std::move(item);
    item = Folded{unit.key, {}, std::vector<int64_t>(unit.calls.size(), 1), {}};
    item.body.push_back(std::move(unit));
}

void absorb(Folded& into, Folded&& from)
{
    if (into.is_loop() != from.is_loop()) {
        as_loop(into);
        as_loop(from);
    }
    if (!into.is_loop()) {
        into.calls.insert(into.calls.end(), from.calls.begin(), from.calls.end());
        return;
    }
    into.counts.insert(into.counts.end(), from.counts.begin(), from.counts.end());
    for (size_t k = 0; k < into.body.size(); ++k) absorb(into.body[k], std::move(from.body[k]));
}

bool same_keys(const std::vector<Folded>& items, size_t a, size_t b, size_t length)
{
    for (size_t k = 0; k < length; ++k) {
        if (items[a + k].key != items[b + k].key) return false;
    }
    return true;
}

bool same_keys(const std::vector<Folded>& body, const std::vector<Folded>& items, size_t from)
{
    for (size_t k = 0; k < body.size(); ++k) {
        if (body[k].key != items[from + k].key) return false;
    }
    return true;
}

// After each append: the end repeats the body of the loop before it (one more iteration), or ends
// in two equal halves X X (a loop of 2); the shortest first, until nothing folds.
void fold_end(std::vector<Folded>& items)
{
    for (bool folded = true; folded;) {
        folded = false;
        const size_t n = items.size();
        for (size_t length = 1; length <= kMaxPeriod && length < n && !folded; ++length) {
            Folded& loop = items[n - length - 1];
            if (!loop.is_loop() || loop.body.size() != length || !same_keys(loop.body, items, n - length)) continue;
            for (size_t k = 0; k < length; ++k) absorb(loop.body[k], std::move(items[n - length + k]));
            ++loop.counts.back();
            items.resize(n - length);
            folded = true;
        }
        for (size_t length = 1; length <= kMaxPeriod && 2 * length <= n && !folded; ++length) {
            if (!same_keys(items, n - 2 * length, n - length, length)) continue;
            Folded loop{0, {}, {2}, {}};
            loop.body.assign(std::make_move_iterator(items.begin() + static_cast<ptrdiff_t>(n - 2 * length)),
                             std::make_move_iterator(items.begin() + static_cast<ptrdiff_t>(n - length)));
            for (size_t k = 0; k < length; ++k) absorb(loop.body[k], std::move(items[n - length + k]));
            loop.key = loop_key(loop.body);
            items.resize(n - 2 * length);
            items.push_back(std::move(loop));
            folded = true;
        }
    }
}

// The expanded skeleton: unit index per call, in call order.
void expand(const std::vector<Pattern::Item>& items, std::vector<uint32_t>& calls)
{
    for (const auto& item : items) {
        if (item.body.empty()) {
            calls.push_back(static_cast<uint32_t>(item.unit));
            continue;
        }
        for (int64_t k = 0; k < item.count; ++k) expand(item.body, calls);
    }
}

class Builder {
public:
    Builder(Pattern& pattern, std::vector<uint32_t> calls, const MergeRule& rule, Rank rank,
            const std::function<Sequence(Sequence)>& fold_calls)
        : pattern_(pattern),
          calls_(std::move(calls)),
          rule_(rule),
          rank_(rank),
          fold_calls_(fold_calls),
          home_(pattern.units.size(), kNowhere)
    {
    }

    // Whether every unit's calls land in one unit of the skeleton (a unit inside a loop of the
    // folder's runs several times: all must be the same unit of the skeleton, since its values
    // stand for all its runs at once), and a unit that cancels a request merges with no other
    // (which request a cancel hits is that unit's own history, which calls made optional lose).
    bool place(const std::vector<Folded>& items)
    {
        for (const auto& item : items) {
            if (item.is_loop()) {
                if (!place(item.body)) return false;
                continue;
            }
            const size_t here = next_place_++;
            for (const uint32_t call : item.calls) {
                size_t& home = home_[calls_[call]];
                if (home != kNowhere && home != here) return false;
                home = here;
                if (calls_[call] != calls_[item.calls.front()] && (cancels(item.calls.front()) || cancels(call))) {
                    return false;
                }
            }
        }
        return true;
    }

    Sequence build(std::vector<Folded>& items)
    {
        Sequence out;
        for (auto& item : items) {
            if (!item.is_loop()) {
                Sequence calls = merged_units(item);
                out.insert(out.end(), std::make_move_iterator(calls.begin()), std::make_move_iterator(calls.end()));
                continue;
            }
            out.push_back(Node{Loop{count_of(item.counts), build(item.body)}});
        }
        return out;
    }

private:
    static constexpr size_t kNowhere = ~size_t(0);

    bool cancels(uint32_t call) const { return cancels_requests(pattern_.units[calls_[call]].calls); }

    // The calls of the units `item` stands for, merged: with the steps within each unit folded
    // where that keeps the calls the units stand for (units whose steps fold into loops of other
    // counts merge into nested drawn counts, which stand for their calls only on average).
    Sequence merged_units(const Folded& item)
    {
        std::vector<uint32_t> units;
        for (const uint32_t call : item.calls) {
            if (!taken_[calls_[call]]) units.push_back(calls_[call]);
            taken_[calls_[call]] = true;
        }
        const auto merge = [&](bool fold) {
            const auto calls = [&](uint32_t unit) {
                Sequence own = pattern_.units[unit].calls;
                return fold ? folded_calls(std::move(own)) : own;
            };
            Sequence merged = calls(units.front());
            uint64_t runs = pattern_.units[units.front()].runs;
            for (size_t k = 1; k < units.size(); ++k) {
                const uint64_t more = pattern_.units[units[k]].runs;
                merged = merge_iterations(std::move(merged), calls(units[k]), runs, more, rule_, rank_);
                runs += more;
            }
            return merged;
        };
        Sequence as_called = merge(false);
        Sequence folded = merge(true);
        if (nested_size(folded) < nested_size(as_called) && calls_per_site(folded) == calls_per_site(as_called)) {
            return folded;
        }
        return as_called;
    }

    // Calls per operation and call site that `seq` stands for, a drawn loop count by its mean (as
    // h-dump counts them), rounded to a millionth.
    static std::map<std::pair<Op, uint64_t>, int64_t> calls_per_site(const Sequence& seq)
    {
        std::map<std::pair<Op, uint64_t>, double> calls;
        const std::function<void(const Sequence&, double)> count = [&](const Sequence& body, double runs) {
            for (const auto& node : body) {
                if (node.is_event()) {
                    calls[{node.event().op, node.event().signature}] += runs;
                    continue;
                }
                const Value& n = node.loop().iterations;
                count(node.loop().body, runs * (n.is_exact() ? static_cast<double>(n.exact()) : n.histogram().mean()));
            }
        };
        count(seq, 1.0);
        std::map<std::pair<Op, uint64_t>, int64_t> rounded;
        for (const auto& [site, n] : calls) rounded[site] = std::llround(n * 1e6);
        return rounded;
    }

    // The calls before the unit's collective and those after it, each folded.
    Sequence folded_calls(Sequence calls) const
    {
        const auto at = std::find_if(calls.begin(), calls.end(), [](const Node& n) { return is_step_collective(n); });
        Sequence out = fold_calls_(Sequence(std::make_move_iterator(calls.begin()), std::make_move_iterator(at)));
        out.push_back(std::move(*at));
        Sequence after = fold_calls_(Sequence(std::make_move_iterator(at + 1), std::make_move_iterator(calls.end())));
        out.insert(out.end(), std::make_move_iterator(after.begin()), std::make_move_iterator(after.end()));
        return out;
    }

    Value count_of(const std::vector<int64_t>& counts) const
    {
        Value count(counts.front());
        for (size_t k = 1; k < counts.size(); ++k) {
            const Value next(counts[k]);
            if (count == next) continue;
            count = merge_values({count, k, rank_}, {next, 1, rank_}, Role::requests, rule_);
        }
        return count;
    }

    Pattern& pattern_;
    std::vector<uint32_t> calls_;
    const MergeRule& rule_;
    Rank rank_;
    const std::function<Sequence(Sequence)>& fold_calls_;
    std::vector<size_t> home_;
    size_t next_place_ = 0;
    std::vector<bool> taken_ = std::vector<bool>(pattern_.units.size());  // units merged into a skeleton unit
};

}  // namespace

bool is_step_collective(const Node& node) { return node.is_event() && is_step_collective(node.event()); }

bool holds_step_collective(const Node& node)
{
    return any_event(node, [](const Event& e) { return is_step_collective(e); });
}

std::optional<Sequence> fold_world_steps(const Sequence& seq, const MergeRule& rule, Rank rank,
                                         const std::function<Sequence(Sequence)>& fold_calls)
{
    if (any_event(seq, keeps_steps_apart)) return std::nullopt;
    Sequence out;
    size_t start = 0;
    while (start < seq.size() && is_prologue(seq[start])) out.push_back(seq[start++]);

    Pattern pattern;
    Ends ends;
    if (!add_items(std::span<const Node>(seq).subspan(start), 1, pattern, pattern.items, &ends) ||
        pattern.units.size() < 2 || calls_of(pattern.items) > kMaxUnits) {
        return std::nullopt;
    }
    std::vector<uint32_t> calls;
    expand(pattern.items, calls);
    std::vector<Folded> skeleton;
    for (size_t call = 0; call < calls.size(); ++call) {
        skeleton.push_back(Folded{pattern.keys[calls[call]], {static_cast<uint32_t>(call)}, {}, {}});
        fold_end(skeleton);
    }
    Builder builder(pattern, std::move(calls), rule, rank, fold_calls);
    if (!builder.place(skeleton)) return std::nullopt;
    Sequence steps = builder.build(skeleton);
    ends.start = fold_calls(std::move(ends.start));
    ends.end = fold_calls(std::move(ends.end));
    for (Sequence* part : {&ends.start, &steps, &ends.end}) {
        out.insert(out.end(), std::make_move_iterator(part->begin()), std::make_move_iterator(part->end()));
    }
    return out;
}

}  // namespace htrace
