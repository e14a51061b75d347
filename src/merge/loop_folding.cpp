#include "merge/loop_folding.hpp"

#include "merge/phase_folding.hpp"
#include "merge/unroll.hpp"
#include "merge/world_steps.hpp"
#include "trace/hash.hpp"
#include "trace/hot_path.hpp"

#include <algorithm>

namespace htrace {
namespace {

constexpr uint64_t kHashBase = 0x9E3779B97F4A7C15ull;

uint64_t value_key(const Value& v)
{
    if (v.is_exact()) return mix64(static_cast<uint64_t>(v.exact()) ^ 0x7e57ull);
    return v.is_histogram() ? 0x4157ull : 0x9e12ull;
}

}  // namespace

bool nodes_match(const Node& a, const Node& b, const MergeRule& rule, bool exact_step_counts)
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
    if (exact_step_counts && x.iterations != y.iterations &&
        std::any_of(x.body.begin(), x.body.end(), holds_step_collective)) {
        return false;
    }
    for (size_t i = 0; i < x.body.size(); ++i) {
        if (!nodes_match(x.body[i], y.body[i], rule, exact_step_counts)) return false;
    }
    return true;
}

namespace {

void merge_into(Value& into, const Value& from, uint64_t into_weight, uint64_t from_weight, Role role, Rank rank,
                const MergeRule& rule)
{
    if (into == from && !into.is_histogram()) return;
    if (into.is_histogram() && from.is_exact()) {
        // In place: loops do this a lot.
        into.histogram().add(histogram_value(from.exact(), role), rank, std::max<uint64_t>(from_weight, 1));
        return;
    }
    into = merge_values({into, into_weight, rank}, {from, from_weight, rank}, role, rule);
}

// One more call's times.
void add_times(Event& e, double compute_seconds, double in_call_seconds)
{
    e.compute.add(compute_seconds);
    if (in_call_seconds != RecordedCall::kNotMeasured) e.in_call.add(in_call_seconds);
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
        e.in_call.merge(other.in_call);
        return;
    }
    Loop& loop = into.loop();
    const Loop& other = from.loop();
    // What the bodies stand for is weighed with the iterations before they merge.
    const uint64_t body_into = body_runs(loop.iterations, into_weight);
    const uint64_t body_from = body_runs(other.iterations, from_weight);
    merge_into(loop.iterations, other.iterations, into_weight, from_weight, Role::requests, rank, rule);
    for (size_t i = 0; i < loop.body.size(); ++i) absorb(loop.body[i], other.body[i], body_into, body_from, rank, rule);
}

LoopFolder::LoopFolder(MergeRule rule, Rank rank)
    : rule_(rule), rank_(rank), folds_world_steps_(may_merge_iterations(Value(1), Value(0), rule))
{
}

bool LoopFolder::exact_step_counts() const { return folds_world_steps_ && seq_.size() < kMaxStepsTopLevel; }

// What push() keys a node by: a loop's body hash is the polynomial hash of its body's keys, as
// range_hash gives it for the copy a loop was folded from.
uint64_t LoopFolder::node_key(const Node& node) const
{
    return node.is_loop() ? mix64(body_hash(node.loop().body) ^ 0xabcdefull) : event_key(node.event());
}

uint64_t LoopFolder::body_hash(const Sequence& body) const
{
    uint64_t h = 0;
    for (const auto& node : body) h = h * kHashBase + node_key(node);
    return h;
}

// The rule held loops around the world's collectives back from bodies that do not end in one, so
// that the folder turned them round: X (Y X)^n Y for (X Y)^(n+1). Where the steps are not cut at
// those collectives after all, they are turned back, X and Y taken into the body, so that ranks
// whose steps the rule turned differently fold alike again.
Sequence LoopFolder::turned_back(Sequence seq) const
{
    Sequence out;
    for (size_t i = 0; i < seq.size(); ++i) {
        Node& node = seq[i];
        if (!node.is_loop() || !holds_step_collective(node) || !node.loop().iterations.is_exact() ||
            node.loop().last_leaves_out > 0) {
            out.push_back(std::move(node));
            continue;
        }
        Loop& loop = node.loop();
        const size_t length = loop.body.size();
        const auto matches = [&](const Node& outside, size_t at) { return nodes_match(outside, loop.body[at], rule_, true); };
        size_t turn = 0;  // how many nodes at the end of the body come before the loop
        for (size_t k = 1; k < length && turn == 0; ++k) {
            if (out.size() < k || i + (length - k) >= seq.size()) continue;
            bool fits = true;
            for (size_t j = 0; j < k && fits; ++j) fits = matches(out[out.size() - k + j], length - k + j);
            for (size_t j = 0; j < length - k && fits; ++j) fits = matches(seq[i + 1 + j], j);
            if (fits) turn = k;
        }
        if (turn == 0) {
            out.push_back(std::move(node));
            continue;
        }
        const auto runs = static_cast<uint64_t>(loop.iterations.exact());
        Loop turned{Value(loop.iterations.exact() + 1), {}};
        for (size_t j = length - turn; j < length; ++j) turned.body.push_back(std::move(loop.body[j]));
        for (size_t j = 0; j < length - turn; ++j) turned.body.push_back(std::move(loop.body[j]));
        for (size_t j = 0; j < turn; ++j) absorb(turned.body[j], out[out.size() - turn + j], runs, 1, rank_, rule_);
        for (size_t j = 0; j < length - turn; ++j) absorb(turned.body[turn + j], seq[i + 1 + j], runs, 1, rank_, rule_);
        out.resize(out.size() - turn);
        out.push_back(Node{std::move(turned)});
        i += length - turn;
    }
    return out;
}

Sequence LoopFolder::refolded(Sequence seq) const
{
    // The rule held back only loops around collectives on the world, or loops of several of them.
    const bool held_back =
        std::count_if(seq.begin(), seq.end(), [](const Node& n) { return is_step_collective(n); }) >= 2 ||
        std::any_of(seq.begin(), seq.end(), [](const Node& n) { return n.is_loop() && holds_step_collective(n); });
    if (!folds_world_steps_ || !held_back) return seq;
    LoopFolder again(rule_, rank_);
    again.folds_world_steps_ = false;
    for (auto& node : turned_back(std::move(seq))) {
        const uint64_t hash = node.is_loop() ? again.body_hash(node.loop().body) : 0;
        again.push(std::move(node), hash);
        again.fold();
    }
    return std::move(again.seq_);
}

// What must be equal for two calls to possibly match: operation, call site, and the values that
// must be equal to merge (all of them at precision 100), so that a hash match is almost always a fold.
uint64_t LoopFolder::event_key(const Event& e) const
{
    uint64_t h = mix64(e.signature ^ (uint64_t(static_cast<uint16_t>(e.op)) << 48) ^ 0x1234567ull);
    for (const auto& p : e.params) {
        if (rule_.precision >= 100 || role_is_categorical(p.role)) h = mix64(h * kHashBase + value_key(p.value));
    }
    return h;
}

uint64_t LoopFolder::range_hash(size_t begin, size_t end) const
{
    const uint64_t before = begin == 0 ? 0 : slots_[begin - 1].prefix;
    return slots_[end - 1].prefix - before * powers_[end - begin];
}

void LoopFolder::push(Node node, uint64_t body_hash)
{
    const size_t at = seq_.size();
    if (powers_.empty()) powers_.push_back(1);
    while (powers_.size() <= at + 1) powers_.push_back(powers_.back() * kHashBase);

    Slot slot{};
    // A loop's key is its body's structure (the hash of its body's keys); its count is left out,
    // since the last loop's count grows in place.
    slot.key = node.is_loop() ? mix64(body_hash ^ 0xabcdefull) : event_key(node.event());
    slot.prefix = (slots_.empty() ? 0 : slots_.back().prefix) * kHashBase + slot.key;
    slot.prev_same = last_with_key_.exchange(slot.key, static_cast<int64_t>(at));
    slot.prev_same_gram = -1;
    if (node.is_loop()) {
        slot.body_hash = body_hash;
        slot.next_body_end = at + 1 + node.loop().body.size();
        loops_ending_at_[slot.next_body_end].push_back(at);
    }
    seq_.push_back(std::move(node));
    slots_.push_back(slot);
    if (at + 1 >= kGram) {
        Slot& last = slots_.back();
        last.gram = range_hash(at + 1 - kGram, at + 1) | 1;  // never 0, which means "no gram"
        last.prev_same_gram = last_with_gram_.exchange(last.gram, static_cast<int64_t>(at));
    }
}

void LoopFolder::pop_back()
{
    const size_t at = seq_.size() - 1;
    const Slot& slot = slots_.back();
    if (slot.prev_same < 0) {
        last_with_key_.erase(slot.key);
    } else {
        last_with_key_.exchange(slot.key, slot.prev_same);
    }
    if (slot.gram != 0) {
        if (slot.prev_same_gram < 0) {
            last_with_gram_.erase(slot.gram);
        } else {
            last_with_gram_.exchange(slot.gram, slot.prev_same_gram);
        }
    }
    if (slot.next_body_end != 0) {  // a loop (perhaps moved from: its body is not looked at)
        auto ending = loops_ending_at_.find(slot.next_body_end);
        std::erase(ending->second, at);
        if (ending->second.empty()) loops_ending_at_.erase(ending);
    }
    seq_.pop_back();
    slots_.pop_back();
    ++generation_;
}

// The sequence ends in a loop followed by exactly one more copy of its body: count it.
bool LoopFolder::extend_loop()
{
    const size_t n = seq_.size();
    const auto ending = loops_ending_at_.find(n);
    if (ending == loops_ending_at_.end()) return false;
    // The most recent loop first: the innermost repetition is counted before an enclosing one.
    const std::vector<size_t>& candidates = ending->second;
    for (auto it = candidates.rbegin(); it != candidates.rend(); ++it) {
        Loop& loop = seq_[*it].loop();
        if (range_hash(*it + 1, n) != slots_[*it].body_hash || !loop.iterations.is_exact()) continue;
        const size_t body_start = *it + 1;
        bool same = true;
        for (size_t i = 0; i < loop.body.size() && same; ++i) same = nodes_match(loop.body[i], seq_[body_start + i], rule_, exact_step_counts());
        if (!same) continue;
        const auto done = static_cast<uint64_t>(loop.iterations.exact());
        for (size_t i = 0; i < loop.body.size(); ++i) absorb(loop.body[i], seq_[body_start + i], done, 1, rank_, rule_);
        loop.iterations = Value(loop.iterations.exact() + 1);
        while (seq_.size() > body_start) pop_back();  // may change `candidates`: nothing of it is used after
        return true;
    }
    return false;
}

// The sequence ends in X X with X `len` long: fold it into loop(2) { X }.
bool LoopFolder::fold_period(size_t len)
{
    const size_t n = seq_.size();
    const size_t first = n - 2 * len;
    if (range_hash(first, first + len) != range_hash(first + len, n)) return false;
    // Steps are cut after each collective on the world (world_steps.hpp): a body that holds one
    // ends with one, so that no call outside it is left at the body's level.
    if (exact_step_counts() && !is_step_collective(seq_[first + len - 1]) &&
        std::any_of(seq_.begin() + static_cast<ptrdiff_t>(first), seq_.begin() + static_cast<ptrdiff_t>(first + len),
                    holds_step_collective)) {
        return false;
    }
    if (auto known = mismatches_.find(len);
        known != mismatches_.end() && known->second.generation == generation_ && n <= known->second.until) {
        return false;
    }
    for (size_t i = 0; i < len; ++i) {
        if (!nodes_match(seq_[first + i], seq_[first + len + i], rule_, exact_step_counts())) {
            mismatches_[len] = {first + i + 2 * len, generation_};
            return false;
        }
    }
    const uint64_t body_hash = range_hash(first, first + len);  // the keys stay: absorb changes no key
    Loop loop;
    loop.iterations = Value(int64_t{2});
    loop.body.reserve(len);
    for (size_t i = 0; i < len; ++i) {
        absorb(seq_[first + i], seq_[first + len + i], 1, 1, rank_, rule_);
        loop.body.push_back(std::move(seq_[first + i]));
    }
    while (seq_.size() > first) pop_back();
    push(Node{std::move(loop)}, body_hash);
    return true;
}

bool LoopFolder::fold_repeat()
{
    const size_t n = seq_.size();
    // Short periods, shortest first: earlier positions of the last element's key.
    for (int64_t p = slots_.back().prev_same; p >= 0; p = slots_[static_cast<size_t>(p)].prev_same) {
        const size_t len = n - 1 - static_cast<size_t>(p);
        if (len >= kGram || 2 * len > n) break;
        if (fold_period(len)) return true;
    }
    // Longer periods: earlier positions of the last kGram keys.
    int64_t p = slots_.back().prev_same_gram;
    for (size_t tried = 0; p >= 0 && tried < kMaxCandidates; ++tried, p = slots_[static_cast<size_t>(p)].prev_same_gram) {
        const size_t len = n - 1 - static_cast<size_t>(p);
        if (2 * len > n) break;
        if (len >= kGram && fold_period(len)) return true;
    }
    return false;
}

void LoopFolder::fold()
{
    while (!seq_.empty() && (extend_loop() || fold_repeat())) {
    }
}

HTRACE_INLINE void LoopFolder::start_fast_path()
{
    fast_ = !seq_.empty() && seq_.back().is_loop() && seq_.back().loop().iterations.is_exact();
    cursor_.clear();
    if (fast_) cursor_.push_back({&seq_.back().loop(), 0, 0});
    fast_times_.clear();
    fast_calls_.clear();
}

// The body event the next call must repeat, entering nested loops; nullptr where the body holds a
// loop whose count is not one number (then only the slow way can tell).
HTRACE_INLINE Event* LoopFolder::next_expected()
{
    for (;;) {
        Cursor& at = cursor_.back();
        Node& node = at.loop->body[at.position];
        if (node.is_event()) return &node.event();
        if (!node.loop().iterations.is_exact() || node.loop().iterations.exact() < 1) return nullptr;
        cursor_.push_back({&node.loop(), 0, 0});
    }
}

// Past the call just matched: on to the next body element, closing inner loops that ran their count.
HTRACE_INLINE void LoopFolder::advance()
{
    ++cursor_.back().position;
    while (cursor_.size() > 1 && cursor_.back().position == cursor_.back().loop->body.size()) {
        Cursor& inner = cursor_.back();
        if (++inner.iteration < inner.loop->iterations.exact()) {
            inner.position = 0;
            return;
        }
        cursor_.pop_back();
        ++cursor_.back().position;
    }
}

HTRACE_HOT void LoopFolder::complete_iteration()
{
    for (size_t i = 0; i < fast_times_.size(); ++i) {
        Event& e = *fast_times_[i].expected;
        if (!fast_calls_.empty()) {
            // Weighed by the calls the event stood for so far, as absorb() does.
            const uint64_t done = std::max<uint64_t>(e.compute.count, 1);
            for (size_t p = 0; p < e.params.size(); ++p) {
                merge_into(e.params[p].value, Value(fast_calls_[i].param(p).value), done, 1, e.params[p].role, rank_, rule_);
            }
        }
        add_times(e, fast_times_[i].compute_seconds, fast_times_[i].in_call_seconds);
    }
    Loop& loop = *cursor_.front().loop;
    loop.iterations = Value(loop.iterations.exact() + 1);
    ++generation_;  // the loop's count changed in place
    start_fast_path();
}

HTRACE_INLINE bool LoopFolder::fast_append(const RecordedCall& call)
{
    Event* expected = next_expected();
    if (expected == nullptr || !call.matches(*expected, rule_)) return false;
    fast_times_.push_back({expected, call.compute_seconds, call.in_call_seconds});
    if (rule_.precision < 100) fast_calls_.push_back(call);
    advance();
    if (cursor_.size() == 1 && cursor_.front().position == cursor_.front().loop->body.size()) complete_iteration();
    return true;
}

// The calls seen so far of an unfinished iteration become ordinary elements again.
std::vector<Node> LoopFolder::partial_iteration() const
{
    std::vector<Node> partial;
    for (size_t i = 0; i < fast_times_.size(); ++i) {
        if (!fast_calls_.empty()) {
            partial.push_back(Node{fast_calls_[i].to_event()});
            continue;
        }
        Event copy = *fast_times_[i].expected;  // at precision 100 the calls were equal to the body
        copy.compute = TimeStats{};
        copy.in_call = TimeStats{};
        add_times(copy, fast_times_[i].compute_seconds, fast_times_[i].in_call_seconds);
        partial.push_back(Node{std::move(copy)});
    }
    return partial;
}

void LoopFolder::leave_fast_path()
{
    fast_ = false;
    std::vector<Node> partial = partial_iteration();
    cursor_.clear();
    fast_times_.clear();
    fast_calls_.clear();
    for (auto& node : partial) {
        push(std::move(node));
        fold();
    }
}

HTRACE_HOT void LoopFolder::append(const RecordedCall& call)
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
    if (event.in_call.count > 0) call.in_call_seconds = event.in_call.mean;
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

HTRACE_INLINE bool RecordedCall::matches(const Event& e, const MergeRule& rule) const
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
    add_times(e, compute_seconds, in_call_seconds);
    return e;
}

Sequence LoopFolder::finish()
{
    if (fast_) leave_fast_path();
    Sequence out = std::move(seq_);
    seq_.clear();
    slots_.clear();
    loops_ending_at_.clear();
    last_with_key_.clear();
    last_with_gram_.clear();
    mismatches_.clear();
    if (rule_.precision >= 100) out = rejoined_last_iterations(std::move(out));
    return fold_phases(std::move(out), rule_, rank_, [this](Sequence seq) { return refolded(std::move(seq)); });
}

// Folding on the fly matches each call against the loop it expects. Where an outer loop's
// iteration ends in an inner loop, one more inner iteration than the outer loop holds comes too
// late to fold: the outer iteration is already complete and the call does not start another. So
// steps of 42, 41, 41, 39, 41, 41 and 40 iterations, each ended by a collective d, fold into 42,
// then (d 41 d 41 d 39) twice, then a loose 40th iteration and the last d. Here such an iteration
// rejoins its loop: the outer loop's last iteration is taken out and its inner loop counts one
// more. Without this, ranks that ran the same steps fold differently, and the merge across ranks
// keeps their loose calls apart. (Below precision 100 loops of other counts fold into one, and
// phase_folding.cpp refolds the steps.)
Sequence LoopFolder::rejoined_last_iterations(Sequence seq) const
{
    Sequence out;
    out.reserve(seq.size());
    size_t next = 0;
    while (next < seq.size()) {
        Node node = std::move(seq[next++]);
        if (node.is_loop()) node.loop().body = rejoined_last_iterations(std::move(node.loop().body));
        out.push_back(std::move(node));
        while (rejoin_after(out, seq, next)) {
        }
    }
    return out;
}

// Whether the calls of `rest` from `next` on are more iterations of the loop `out` ends with, or of
// the inner loop that ends that loop's body: one more (a copy of its body), or a loop of them with
// the same body (the folder re-folds a partial iteration call by call, and an outer loop can take in
// the inner loop at a count it only passed through); if so they join it, and `next` moves past them.
bool LoopFolder::rejoin_after(Sequence& out, const Sequence& rest, size_t& next) const
{
    // Loops whose every iteration runs the whole body, the same number of times on every rank.
    const auto plain = [](const Node& node) {
        return node.is_loop() && node.loop().iterations.is_exact() && node.loop().last_leaves_out == 0;
    };
    const auto same_calls = [&](const Sequence& body, const Sequence& other, size_t from) {
        if (body.empty() || body.size() > other.size() - from) return false;
        for (size_t j = 0; j < body.size(); ++j) {
            if (!nodes_match(body[j], other[from + j], rule_)) return false;
        }
        return true;
    };
    const auto loop_of_more = [&](const Loop& loop) {
        return next < rest.size() && plain(rest[next]) && rest[next].loop().body.size() == loop.body.size() &&
               same_calls(loop.body, rest[next].loop().body, 0);
    };
    const auto one_more_of = [&](const Node& node) {
        return plain(node) && (loop_of_more(node.loop()) || same_calls(node.loop().body, rest, next));
    };
    const auto join = [&](Loop& loop) {
        const int64_t ran = loop.iterations.exact();
        if (loop_of_more(loop)) {
            const Loop& more = rest[next].loop();
            for (size_t j = 0; j < loop.body.size(); ++j) {
                absorb(loop.body[j], more.body[j], static_cast<uint64_t>(ran), static_cast<uint64_t>(more.iterations.exact()),
                       rank_, rule_);
            }
            loop.iterations = Value(ran + more.iterations.exact());
            ++next;
            return;
        }
        for (size_t j = 0; j < loop.body.size(); ++j) {
            absorb(loop.body[j], rest[next + j], static_cast<uint64_t>(ran), 1, rank_, rule_);
        }
        next += loop.body.size();
        loop.iterations = Value(ran + 1);
    };
    Node& last = out.back();
    if (one_more_of(last)) {
        join(last.loop());
        return true;
    }
    if (!plain(last) || last.loop().body.empty() || !one_more_of(last.loop().body.back())) {
        return false;
    }
    Loop outer = std::move(last.loop());
    out.pop_back();
    const int64_t outer_ran = outer.iterations.exact();
    Sequence final_iteration = outer.body;
    keep_share(final_iteration, 1, static_cast<uint64_t>(outer_ran));
    keep_share(outer.body, static_cast<uint64_t>(outer_ran - 1), static_cast<uint64_t>(outer_ran));
    if (outer_ran == 2) {
        for (Node& node : outer.body) out.push_back(std::move(node));
    } else if (outer_ran > 2) {
        outer.iterations = Value(outer_ran - 1);
        out.push_back(Node{std::move(outer)});
    }
    join(final_iteration.back().loop());
    for (Node& node : final_iteration) out.push_back(std::move(node));
    return true;
}

Sequence LoopFolder::snapshot() const
{
    Sequence out = seq_;
    if (fast_) {
        for (Node& node : partial_iteration()) out.push_back(std::move(node));
    }
    return fold_phases(std::move(out), rule_, rank_, [this](Sequence seq) { return refolded(std::move(seq)); });
}

}  // namespace htrace
