#include "merge/loop_folding.hpp"

#include "trace/hash.hpp"

#include <algorithm>

namespace htrace {
namespace {

constexpr uint64_t kHashBase = 0x9E3779B97F4A7C15ull;
constexpr size_t kMaxCandidates = 32;

}  // namespace

uint64_t node_key(const Node& node)
{
    if (node.is_event()) {
        const Event& e = node.event();
        return mix64(e.signature ^ (uint64_t(static_cast<uint16_t>(e.op)) << 48) ^ 0x1234567ull);
    }
    uint64_t h = 0x51ed27ull;
    for (const auto& child : node.loop().body) h = h * kHashBase + node_key(child);
    return mix64(h ^ 0xabcdefull);
}

bool nodes_match(const Node& a, const Node& b, const MergeRule& rule)
{
    if (a.is_event() != b.is_event()) return false;
    if (a.is_event()) {
        const Event& x = a.event();
        const Event& y = b.event();
        if (x.op != y.op || x.signature != y.signature || x.params.size() != y.params.size()) return false;
        for (size_t i = 0; i < x.params.size(); ++i) {
            if (x.params[i].role != y.params[i].role ||
                !may_merge(x.params[i].value, y.params[i].value, x.params[i].role, rule)) {
                return false;
            }
        }
        return true;
    }
    const Loop& x = a.loop();
    const Loop& y = b.loop();
    if (!may_merge_iterations(x.iterations, y.iterations, rule) || x.body.size() != y.body.size()) return false;
    for (size_t i = 0; i < x.body.size(); ++i) {
        if (!nodes_match(x.body[i], y.body[i], rule)) return false;
    }
    return true;
}

namespace {

void merge_into(Value& into, const Value& from, uint64_t into_weight, uint64_t from_weight, Role role, Rank rank,
                const MergeRule& rule)
{
    if (into == from && !into.is_histogram()) return;
    if (into.is_histogram() && from.is_exact()) {
        into.histogram().add(from.exact(), rank, std::max<uint64_t>(from_weight, 1));  // in place: loops do this a lot
        return;
    }
    into = merge_values({into, into_weight, rank}, {from, from_weight, rank}, role, rule);
}

}  // namespace

void absorb(Node& into, const Node& from, uint64_t into_weight, uint64_t from_weight, Rank rank, const MergeRule& rule)
{
    if (into.is_event()) {
        Event& e = into.event();
        const Event& other = from.event();
        // An event's time statistics count its calls exactly, also under loops counted by histograms.
        const uint64_t calls_into = e.compute.count > 0 ? e.compute.count : into_weight;
        const uint64_t calls_from = other.compute.count > 0 ? other.compute.count : from_weight;
        for (size_t i = 0; i < e.params.size(); ++i) {
            merge_into(e.params[i].value, other.params[i].value, calls_into, calls_from, e.params[i].role, rank, rule);
        }
        e.compute.merge(other.compute);
        return;
    }
    Loop& loop = into.loop();
    const Loop& other = from.loop();
    // What the bodies stand for is weighed with the iterations before they merge.
    const uint64_t body_into = into_weight * expected_iterations(loop.iterations);
    const uint64_t body_from = from_weight * expected_iterations(other.iterations);
    merge_into(loop.iterations, other.iterations, into_weight, from_weight, Role::requests, rank, rule);
    for (size_t i = 0; i < loop.body.size(); ++i) absorb(loop.body[i], other.body[i], body_into, body_from, rank, rule);
}

LoopFolder::LoopFolder(MergeRule rule, Rank rank) : rule_(rule), rank_(rank)
{
    powers_.resize(2 * kMaxBody + 2);
    powers_[0] = 1;
    for (size_t i = 1; i < powers_.size(); ++i) powers_[i] = powers_[i - 1] * kHashBase;
}

uint64_t LoopFolder::range_hash(size_t begin, size_t end) const
{
    const uint64_t before = begin == 0 ? 0 : slots_[begin - 1].prefix;
    return slots_[end - 1].prefix - before * powers_[end - begin];
}

void LoopFolder::push(Node node)
{
    Slot slot{};
    slot.key = node_key(node);
    slot.prefix = (slots_.empty() ? 0 : slots_.back().prefix) * kHashBase + slot.key;
    auto [it, inserted] = last_with_key_.try_emplace(slot.key, -1);
    slot.prev_same = it->second;
    it->second = static_cast<int64_t>(seq_.size());
    if (node.is_loop()) {
        uint64_t h = 0;
        for (const auto& child : node.loop().body) h = h * kHashBase + node_key(child);
        slot.body_hash = h;
        loop_positions_.push_back(seq_.size());
    }
    seq_.push_back(std::move(node));
    slots_.push_back(slot);
}

void LoopFolder::pop_back()
{
    const Slot& slot = slots_.back();
    if (slot.prev_same < 0) {
        last_with_key_.erase(slot.key);
    } else {
        last_with_key_[slot.key] = slot.prev_same;
    }
    if (!loop_positions_.empty() && loop_positions_.back() == seq_.size() - 1) loop_positions_.pop_back();
    seq_.pop_back();
    slots_.pop_back();
}

// The sequence ends in a loop followed by exactly one more copy of its body: count it.
bool LoopFolder::extend_loop()
{
    const size_t n = seq_.size();
    for (auto it = loop_positions_.rbegin(); it != loop_positions_.rend(); ++it) {
        const size_t q = *it;
        if (n - 1 - q > kMaxBody) break;
        Loop& loop = seq_[q].loop();
        const size_t m = loop.body.size();
        if (q + 1 + m != n) continue;
        if (range_hash(q + 1, n) != slots_[q].body_hash) continue;
        for (size_t i = 0; i < m; ++i) {
            if (!nodes_match(loop.body[i], seq_[q + 1 + i], rule_)) return false;
        }
        if (!loop.iterations.is_exact()) return false;
        const auto done = static_cast<uint64_t>(loop.iterations.exact());
        for (size_t i = 0; i < m; ++i) absorb(loop.body[i], seq_[q + 1 + i], done, 1, rank_, rule_);
        loop.iterations = Value(loop.iterations.exact() + 1);
        for (size_t i = 0; i < m; ++i) pop_back();
        return true;
    }
    return false;
}

// The sequence ends in X X: fold it into loop(2) { X }.
bool LoopFolder::fold_repeat()
{
    const size_t n = seq_.size();
    int64_t p = slots_.back().prev_same;
    for (size_t tried = 0; p >= 0 && tried < kMaxCandidates; ++tried, p = slots_[static_cast<size_t>(p)].prev_same) {
        const size_t len = n - 1 - static_cast<size_t>(p);
        if (len > kMaxBody) break;
        if (2 * len > n) continue;
        const size_t first = n - 2 * len;
        if (range_hash(first, first + len) != range_hash(first + len, n)) continue;
        bool same = true;
        for (size_t i = 0; i < len && same; ++i) same = nodes_match(seq_[first + i], seq_[first + len + i], rule_);
        if (!same) continue;
        Loop loop;
        loop.iterations = Value(int64_t{2});
        loop.body.reserve(len);
        for (size_t i = 0; i < len; ++i) {
            absorb(seq_[first + i], seq_[first + len + i], 1, 1, rank_, rule_);
            loop.body.push_back(std::move(seq_[first + i]));
        }
        while (seq_.size() > first) pop_back();
        push(Node{std::move(loop)});
        return true;
    }
    return false;
}

void LoopFolder::fold()
{
    while (!seq_.empty() && (extend_loop() || fold_repeat())) {
    }
}

void LoopFolder::start_fast_path()
{
    fast_ = !seq_.empty() && seq_.back().is_loop() && seq_.back().loop().iterations.is_exact();
    fast_next_ = 0;
    fast_times_.clear();
}

bool LoopFolder::fast_append(const RecordedCall& call)
{
    Loop& loop = seq_.back().loop();
    const Node& expected = loop.body[fast_next_];
    if (!expected.is_event() || !call.matches(expected.event(), rule_)) return false;
    fast_times_.push_back(call.compute_seconds);
    if (rule_.precision < 100) fast_calls_.push_back(call);
    if (++fast_next_ < loop.body.size()) return true;
    const auto done = static_cast<uint64_t>(loop.iterations.exact());
    for (size_t i = 0; i < loop.body.size(); ++i) {
        Event& e = loop.body[i].event();
        e.compute.add(fast_times_[i]);
        if (fast_calls_.empty()) continue;
        for (size_t p = 0; p < e.params.size(); ++p) {
            merge_into(e.params[p].value, Value(fast_calls_[i].param(p).value), done, 1, e.params[p].role, rank_, rule_);
        }
    }
    loop.iterations = Value(loop.iterations.exact() + 1);
    fast_next_ = 0;
    fast_times_.clear();
    fast_calls_.clear();
    return true;
}

// The calls seen so far of an unfinished iteration become ordinary elements again.
void LoopFolder::leave_fast_path()
{
    fast_ = false;
    if (fast_next_ == 0) return;
    const Loop& loop = seq_.back().loop();
    std::vector<Node> partial;
    for (size_t i = 0; i < fast_next_; ++i) {
        if (!fast_calls_.empty()) {
            partial.push_back(Node{fast_calls_[i].to_event()});
            continue;
        }
        Event copy = loop.body[i].event();  // at precision 100 the calls were equal to the body
        copy.compute = TimeStats{};
        copy.compute.add(fast_times_[i]);
        partial.push_back(Node{std::move(copy)});
    }
    fast_next_ = 0;
    fast_times_.clear();
    fast_calls_.clear();
    for (auto& node : partial) {
        push(std::move(node));
        fold();
    }
}

void LoopFolder::append(const RecordedCall& call)
{
    if (fast_) {
        if (fast_append(call)) return;
        // A loop in the body, or a call that breaks the pattern: fold the slow way, which also
        // finds nested loops.
        leave_fast_path();
    }
    push(Node{call.to_event()});
    fold();
    start_fast_path();
}

void LoopFolder::append(Event event)
{
    RecordedCall call;
    call.op = event.op;
    call.signature = event.signature;
    call.compute_seconds = event.compute.mean;
    for (const auto& p : event.params) {
        if (!p.value.is_exact()) {
            if (fast_) leave_fast_path();
            push(Node{std::move(event)});
            fold();
            start_fast_path();
            return;
        }
        call.add(p.role, p.value.exact());
    }
    append(call);
}

void RecordedCall::add_more(Role role, int64_t value)
{
    more_.push_back({role, value});
    ++size_;
}

bool RecordedCall::matches(const Event& e, const MergeRule& rule) const
{
    if (e.op != op || e.signature != signature || e.params.size() != size_) return false;
    for (size_t i = 0; i < size_; ++i) {
        const auto [role, value] = param(i);
        const Param& p = e.params[i];
        if (p.role != role) return false;
        if (p.value.is_exact() && p.value.exact() == value) continue;
        if (!may_merge(p.value, Value(value), role, rule)) return false;
    }
    return true;
}

Event RecordedCall::to_event() const
{
    Event e;
    e.op = op;
    e.signature = signature;
    e.params.reserve(size_);
    for (size_t i = 0; i < size_; ++i) {
        const auto [role, value] = param(i);
        e.params.push_back({role, Value(value)});
    }
    e.compute.add(compute_seconds);
    return e;
}

Sequence LoopFolder::finish()
{
    if (fast_) leave_fast_path();
    Sequence out = std::move(seq_);
    seq_.clear();
    slots_.clear();
    loop_positions_.clear();
    last_with_key_.clear();
    return out;
}

}  // namespace htrace
