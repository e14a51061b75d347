#pragma once
// Which of a rank's pending requests a completion call (Wait*, Test*) completed, stored as the values
// of the event's `completed_set` parameters (one or a few), so that replay completes the same
// requests at the same point of the rank's calls. `cancelled_set` names, the same way, those of them
// the rank had cancelled.
//
// Positions count the requests that modelled calls created (Isend, Irecv, non-blocking collectives
// ...) and that are still pending, newest first: 0 is the one created last. Completed requests
// leave the list, so a loop that posts requests and then completes them has the same positions in
// every iteration, and requests nobody ever completes (leaked, freed, cancelled by calls the trace
// does not model) only sit behind the ones that matter.
//
// Each value:
//   0                    nothing completed
//   1 .. 2^56 - 1        one position, the value minus 1 (a Wait, a Waitany, a Waitsome of one):
//                        small, so that a histogram of such values stays small and a draw from it
//                        still names one request
//   >= 2^56              a chunk: bits 56..62 say which run of 56 positions (c) plus 1, bit i of the
//                        low 56 bits that position 56c + i completed; a set of several positions has
//                        a value per chunk it touches
//   -k, 0 < k < 2^32     the k oldest pending requests, the one value of such a set: requests
//                        completed in the order they were made (a Waitany or Waitsome loop over
//                        requests that complete in order) give the same value every time, where
//                        their positions from the newest move down by one per completion
//   < 0 otherwise        -(first << 40 | stride << 32 | count), stride >= 1: `count` positions from
//                        `first`, `stride` apart, the one value of a set that is such a run (a
//                        Waitall over many requests)
//   kUnknownCompletedSet a set beyond these forms (replay then completes in walk order)
// Any other value (a histogram's draw) still decodes to some set; replay ignores positions that are
// not pending.

#include "trace/hot_path.hpp"

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <variant>
#include <vector>

namespace htrace {

inline constexpr int64_t kUnknownCompletedSet = INT64_MIN;

// The values of `positions` (ascending and distinct) into `values`, replacing what it held: at least
// one (0 for the empty set). `pending`: how many requests were pending before the call, so that the
// oldest ones can be named as such; 0 leaves that form out (a set read without the count: cancels).
void encode_completed_set(std::span<const uint32_t> positions, std::vector<int64_t>& values, size_t pending = 0);
std::vector<int64_t> encode_completed_set(std::span<const uint32_t> positions, size_t pending = 0);
// Ascending distinct positions; nullopt if a value is kUnknownCompletedSet. `pending`: how many
// requests were pending before the call (the oldest are counted from it); at most that many positions.
std::optional<std::vector<uint32_t>> decode_completed_set(std::span<const int64_t> values, uint32_t pending);
// The same into `positions` (replaced), for callers that decode call after call; false where the
// other returns nullopt.
bool decode_completed_set(std::span<const int64_t> values, uint32_t pending, std::vector<uint32_t>& positions);
// A value as trace formats before 12 wrote it (a single position was a chunk of one bit, chunks
// counted from 0), in today's form.
int64_t completed_set_value_before_12(int64_t value);
// How many requests `value` names, as the value that names that many of the oldest: 0 and
// kUnknownCompletedSet as they are. A completion merged across calls that completed different
// requests keeps this (merge/precision.cpp).
int64_t completed_set_as_oldest(int64_t value);
// Whether the values of a set encoded without the pending count name `position`.
bool completed_set_names(std::span<const int64_t> values, uint32_t position);

// A mirror of one rank's pending requests, oldest first, that names the positions of the ones a
// completion call completed. `Handle` is whatever identifies a request where the calls are seen
// (MPI_Request in the tracer). MPI libraries reuse the handles of completed requests, so a completed
// handle is looked for from the newest: an older entry with it is one the rank freed unseen. They
// also hand out one shared handle for every request complete when made (Open MPI for sends on
// MPI_PROC_NULL and small sends it completes at once, MPICH for its lightweight requests): which of
// those the rank meant the handle cannot say, and programs complete them mostly in the order they
// made them, so a shared handle is looked for from the oldest. Each request may carry a `Payload`,
// what its maker wants back when it completes (the tracer: where a send was going, in case it is
// cancelled).
template <typename Handle, typename Payload = std::monostate>
class PendingRequests {
public:
    // Beyond this many, the oldest are forgotten: positions count from the newest, so requests that
    // old are never completed in practice, and the list must not grow with leaked requests.
    static constexpr size_t kKept = 4096;
    static constexpr uint32_t kNotPending = UINT32_MAX;

    // Handles the MPI library gives several pending requests at once (see above).
    void set_shared_handles(std::vector<Handle> handles) { shared_ = std::move(handles); }

    HTRACE_HOT void created(const Handle& handle, const Payload& payload = {})
    {
        if (size() == kKept) forget_oldest();
        pending_.push_back({handle, payload});
    }

    // The positions of `completed` (ascending), which leave the pending list. Handles not pending
    // (requests of calls the trace does not model) are skipped. With `positions_of`, it also says
    // where each handle was (kNotPending for the skipped ones), and with `payloads_of` what each
    // carried (a default Payload for the skipped ones).
    HTRACE_HOT std::span<const uint32_t> complete(std::span<const Handle> completed,
                                                  std::vector<uint32_t>* positions_of = nullptr,
                                                  std::vector<Payload>* payloads_of = nullptr)
    {
        found_.clear();
        // Whether entry i is completed[k]'s (and not already another completed handle's).
        const auto takes = [&](size_t i, size_t k) {
            return pending_[i].handle == completed[k] &&
                   std::none_of(found_.begin(), found_.end(), [i](const auto& f) { return f.first == i; });
        };
        for (size_t k = 0; k < completed.size(); ++k) {
            size_t i = 0;
            bool found = false;
            if (std::find(shared_.begin(), shared_.end(), completed[k]) != shared_.end()) {
                for (i = oldest_; i < pending_.size() && !(found = takes(i, k)); ++i) {}
            } else {
                for (i = pending_.size(); i-- > oldest_ && !(found = takes(i, k));) {}
            }
            if (found) found_.emplace_back(i, k);
        }
        const size_t before = pending_.size();
        if (positions_of != nullptr) {
            positions_of->assign(completed.size(), kNotPending);
            for (const auto& [index, k] : found_) (*positions_of)[k] = static_cast<uint32_t>(before - 1 - index);
        }
        if (payloads_of != nullptr) {
            payloads_of->assign(completed.size(), Payload{});
            for (const auto& [index, k] : found_) (*payloads_of)[k] = pending_[index].payload;
        }
        positions_.clear();
        if (found_.empty()) return positions_;
        // Only the tail from the oldest completed request moves: completions touch the newest.
        if (found_.size() > 1) std::sort(found_.begin(), found_.end());
        size_t kept = found_.front().first;
        size_t next = 0;
        for (size_t i = found_.front().first; i < before; ++i) {
            if (next < found_.size() && found_[next].first == i) {
                positions_.push_back(static_cast<uint32_t>(before - 1 - i));
                ++next;
            } else {
                pending_[kept++] = pending_[i];
            }
        }
        pending_.resize(kept);
        std::reverse(positions_.begin(), positions_.end());
        return positions_;
    }

    size_t size() const { return pending_.size() - oldest_; }

private:
    struct Entry {
        Handle handle;
        Payload payload;
    };
    // Oldest first from `oldest_`; the entries before it are forgotten, and leave in one move once
    // they are as many as kKept (a vector: indexing a deque costs a division on every look).
    std::vector<Entry> pending_;
    size_t oldest_ = 0;
    void forget_oldest()
    {
        if (++oldest_ < kKept) return;
        pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(oldest_));
        oldest_ = 0;
    }
    std::vector<Handle> shared_;
    // Scratch of complete(), kept to avoid allocations on the tracer's path.
    std::vector<std::pair<size_t, size_t>> found_;  // index in pending_, index in `completed`
    std::vector<uint32_t> positions_;
};

}  // namespace htrace
