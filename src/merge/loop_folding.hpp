#pragma once
// Intra-node compression on the fly: each call is appended to the rank's sequence, and repeated
// sequences fold into loops (RSD), nested (PRSD), exactly as long as everything matches. Memory
// stays proportional to the folded sequence, not to the number of calls.

#include "merge/precision.hpp"
#include "trace/event.hpp"

#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace htrace {

// One call as the tracer hands it over: exact values only, kept inline so that a call repeating
// a loop body costs no allocation.
class RecordedCall {
public:
    Op op{};
    uint64_t signature = 0;
    double compute_seconds = 0;

    struct Slot {
        Role role;
        int64_t value;
    };

    void add(Role role, int64_t value)
    {
        if (size_ < kInline) {
            inline_[size_++] = {role, value};
        } else {
            add_more(role, value);
        }
    }
    size_t size() const { return size_; }
    Slot param(size_t i) const { return i < kInline ? inline_[i] : more_[i - kInline]; }

    // Same operation and call site, and values the rule lets merge with the event's.
    bool matches(const Event& e, const MergeRule& rule) const;
    Event to_event() const;

private:
    void add_more(Role role, int64_t value);  // kept out of line: rare, and it would bloat add()

    static constexpr size_t kInline = 12;
    // Left uninitialised (a trivial type): only the first size_ are set, and this is built per call.
    std::array<Slot, kInline> inline_;
    std::vector<Slot> more_;
    size_t size_ = 0;
};

class LoopFolder {
public:
    // `rank`: whose calls these are (histograms remember which rank gave their min and max).
    explicit LoopFolder(MergeRule rule = {}, Rank rank = 0);

    void append(const RecordedCall& call);
    void append(Event event);
    // The folded sequence; the folder is empty afterwards.
    Sequence finish();

    size_t top_level_size() const { return seq_.size(); }

    // A loop body at most this many top-level elements long is found; longer repeats stay unfolded.
    static constexpr size_t kMaxBody = 256;

private:
    struct Slot {
        uint64_t key;        // what must be equal for two elements to possibly match
        uint64_t prefix;     // polynomial hash of the keys up to and including this one
        int64_t prev_same;   // previous position with the same key, or -1
        uint64_t body_hash;  // loops: the hash of their body's keys
    };

    void push(Node node);
    void pop_back();
    void fold();
    bool extend_loop();
    bool fold_repeat();
    uint64_t range_hash(size_t begin, size_t end) const;
    void start_fast_path();
    bool fast_append(const RecordedCall& call);
    void leave_fast_path();

    Sequence seq_;
    std::vector<Slot> slots_;
    std::vector<size_t> loop_positions_;
    std::unordered_map<uint64_t, int64_t> last_with_key_;
    std::vector<uint64_t> powers_;

    // Fast path: while the sequence ends in a loop whose body is being repeated call by call, the
    // calls are checked against the body in place and only their times are kept until the
    // iteration completes.
    bool fast_ = false;
    size_t fast_next_ = 0;
    std::vector<double> fast_times_;
    std::vector<RecordedCall> fast_calls_;  // below precision 100 their values may differ

    MergeRule rule_;
    Rank rank_;
};

// What must be equal for two elements to possibly match (operation, call site, loop structure).
uint64_t node_key(const Node& node);
// Whether `a` and `b` may fold into one under the rule: same structure, values within precision.
bool nodes_match(const Node& a, const Node& b, const MergeRule& rule);
// Folds `from` into `into` (they match): times merge, differing values become histograms. The
// weights say how many calls each side's values stand for so far.
void absorb(Node& into, const Node& from, uint64_t into_weight, uint64_t from_weight, Rank rank,
            const MergeRule& rule);

}  // namespace htrace
