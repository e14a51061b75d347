#pragma once
// Intra-node compression on the fly: each call is appended to the rank's sequence, and repeated
// sequences fold into loops (RSD), nested (PRSD), exactly as long as everything matches, whatever the
// length of the loop body. Memory stays proportional to the folded sequence, not to the number of
// calls; the work per call is bounded (see LoopFolder).

#include "merge/position_table.hpp"
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
    double in_call_seconds = kNotMeasured;  // from entering the MPI library to its return
    static constexpr double kNotMeasured = -1;

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

    // Same operation and call site, and values the rule lets merge with the event's. Inline in
    // loop_folding.cpp, its one user: it runs on every recorded call.
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

// Finds repetition at the end of the sequence after each append: the sequence ending in one more
// copy of the body of the loop before it (the loop counts one more iteration), or in two equal
// halves X X (they become a loop of 2). Candidate periods come from where the last element's key
// occurred before (periods shorter than kGram) and where its last kGram keys occurred before
// (longer ones, at most kMaxCandidates of them), compared by polynomial hashes of the keys, so an
// append costs a bounded number of hash comparisons whatever the body length. A hash match is
// verified node by node: a fold pays for the copy it removes, and a mismatch rules its period out
// until the window has moved past the mismatching pair, so no pair is compared twice for a period.
class LoopFolder {
public:
    // `rank`: whose calls these are (histograms remember which rank gave their min and max).
    explicit LoopFolder(MergeRule rule = {}, Rank rank = 0);

    void append(const RecordedCall& call);
    void append(Event event);
    // The folded sequence, with its phases folded where the rule allows (phase_folding.hpp); the
    // folder is empty afterwards.
    Sequence finish();
    // What finish() would give now, the folder left as it is (a rank's partial file while it runs):
    // the calls of an iteration in progress follow their loop unfolded.
    Sequence snapshot() const;

    size_t top_level_size() const { return seq_.size(); }

    // Periods shorter than this are found from the last element's key alone, longer ones from the
    // hash of the last kGram keys.
    static constexpr size_t kGram = 8;
    // How many earlier occurrences of the last kGram keys are tried as the start of a period.
    static constexpr size_t kMaxCandidates = 32;

private:
    struct Slot {
        uint64_t key;             // what must be equal for two elements to possibly match
        uint64_t prefix;          // polynomial hash of the keys up to and including this one
        int64_t prev_same;        // previous position with the same key, or -1
        uint64_t gram;            // hash of the kGram keys ending here (0 while fewer came before)
        int64_t prev_same_gram;   // previous position whose kGram keys are the same, or -1
        uint64_t body_hash;       // loops: the hash of their body's keys
        size_t next_body_end;     // loops: the sequence length at which one more copy of the body ends
    };
    // Where a period was last found not to repeat: until the sequence is `until` long the window of
    // two periods still holds the mismatching pair. Valid while nothing before the end changed.
    struct Mismatch {
        size_t until;
        uint64_t generation;
    };

    uint64_t event_key(const Event& e) const;
    // Appends an element; a loop comes with the hash of its body's keys (range_hash of the copy it
    // was folded from).
    void push(Node node, uint64_t body_hash = 0);
    void pop_back();
    void fold();
    bool extend_loop();
    bool fold_repeat();
    bool fold_period(size_t len);
    uint64_t range_hash(size_t begin, size_t end) const;
    void start_fast_path();
    bool fast_append(const RecordedCall& call);
    void leave_fast_path();
    std::vector<Node> partial_iteration() const;

    Sequence seq_;
    std::vector<Slot> slots_;
    std::unordered_map<size_t, std::vector<size_t>> loops_ending_at_;  // sequence length -> loop positions
    PositionTable last_with_key_;
    PositionTable last_with_gram_;
    std::vector<uint64_t> powers_;
    std::unordered_map<size_t, Mismatch> mismatches_;  // by period
    uint64_t generation_ = 0;  // counts changes to elements before the end

    // Fast path: while the sequence ends in a loop whose body is being repeated call by call, the
    // calls are checked in place against the body, nested loops included (a cursor walks them with
    // their recorded counts), and only their times are kept until the iteration completes.
    struct Cursor {
        Loop* loop;
        size_t position;     // in loop->body
        int64_t iteration;   // of this loop, within the current iteration of the enclosing one
    };
    struct FastCall {
        Event* expected;  // the body event the call repeats
        double compute_seconds;
        double in_call_seconds;
    };
    Event* next_expected();
    void advance();
    void complete_iteration();

    bool fast_ = false;
    std::vector<Cursor> cursor_;   // outermost (the last loop of the sequence) first
    std::vector<FastCall> fast_times_;
    std::vector<RecordedCall> fast_calls_;  // below precision 100 their values may differ

    // Where phases fold (p = 0), loops around the world's collectives keep exact counts while the
    // sequence is shorter than this (world_steps.hpp); a longer one merges them, as other loops.
    static constexpr size_t kMaxStepsTopLevel = 4096;
    bool exact_step_counts() const;
    // `seq` folded again at top level with loops of any counts merging, for a rank whose steps
    // cannot be cut at the world's collectives (phase_folding.hpp).
    Sequence refolded(Sequence seq) const;
    Sequence turned_back(Sequence seq) const;
    Sequence rejoined_last_iterations(Sequence seq) const;
    bool rejoin_after(Sequence& out, const Sequence& rest, size_t& next) const;
    uint64_t node_key(const Node& node) const;
    uint64_t body_hash(const Sequence& body) const;

    MergeRule rule_;
    Rank rank_;
    bool folds_world_steps_;
};

// Whether `a` and `b` may fold into one under the rule: same structure, values within precision.
// `exact_step_counts`: loops around blocking collectives on the world fold only with equal counts
// (world_steps.hpp needs each rank's steps call by call).
bool nodes_match(const Node& a, const Node& b, const MergeRule& rule, bool exact_step_counts = false);
// Folds `from` into `into` (they match): times merge, differing values become histograms. The
// weights say how many calls each side's values stand for so far.
void absorb(Node& into, const Node& from, uint64_t into_weight, uint64_t from_weight, Rank rank,
            const MergeRule& rule);

}  // namespace htrace
