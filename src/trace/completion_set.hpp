#pragma once
// Which of a rank's pending requests a completion call (Wait*, Test*) completed, stored as the one
// value of the event's `completed_set` parameter, so that replay completes the same requests at the
// same point of the rank's calls.
//
// Positions count the requests that modelled calls created (Isend, Irecv, non-blocking collectives
// ...) and that are still pending, newest first: 0 is the one created last. Completed requests
// leave the list, so a loop that posts requests and then completes them has the same positions in
// every iteration, and requests nobody ever completes (leaked, freed, cancelled by calls the trace
// does not model) only sit behind the ones that matter.
//
// The value:
//   0                    nothing completed
//   > 0                  bit i set: position i completed (positions 0..61)
//   < 0                  -(first << 40 | stride << 32 | count): `count` positions from `first`,
//                        `stride` apart (large sets: Waitall over many requests)
//   kUnknownCompletedSet a set neither form holds (replay then completes in walk order)
// Any other value (a histogram's draw) still decodes to some set; replay ignores positions that
// are not pending.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <vector>

namespace htrace {

inline constexpr int64_t kUnknownCompletedSet = INT64_MIN;

// `positions` ascending and distinct.
int64_t encode_completed_set(std::span<const uint32_t> positions);
// Ascending positions; nullopt for kUnknownCompletedSet. Never more than `limit` positions.
std::optional<std::vector<uint32_t>> decode_completed_set(int64_t value, uint32_t limit = 1u << 20);

// A mirror of one rank's pending requests, oldest first, that names the positions of the ones a
// completion call completed. `Handle` is whatever identifies a request where the calls are seen
// (MPI_Request in the tracer). MPI libraries hand out one handle for several requests (Open MPI's
// MPI_PROC_NULL sends) and reuse handles: a completed handle is looked for from the newest.
template <typename Handle>
class PendingRequests {
public:
    // Beyond this many, the oldest are forgotten: positions count from the newest, so requests that
    // old are never completed in practice, and the list must not grow with leaked requests.
    static constexpr size_t kKept = 4096;

    void created(const Handle& handle)
    {
        if (pending_.size() == kKept) pending_.pop_front();
        pending_.push_back(handle);
    }

    // `completed` as one value (see above), and the pending list without them. Handles not pending
    // (requests of calls the trace does not model) are skipped.
    int64_t complete(std::span<const Handle> completed)
    {
        found_.clear();
        for (const Handle& handle : completed) {
            for (size_t i = pending_.size(); i-- > 0;) {
                if (pending_[i] == handle && std::find(found_.begin(), found_.end(), i) == found_.end()) {
                    found_.push_back(i);
                    break;
                }
            }
        }
        if (found_.empty()) return 0;
        // Only the tail from the oldest completed request moves: completions touch the newest.
        std::sort(found_.begin(), found_.end());
        positions_.clear();
        size_t kept = found_.front();
        size_t next = 0;
        for (size_t i = found_.front(); i < pending_.size(); ++i) {
            if (next < found_.size() && found_[next] == i) {
                positions_.push_back(static_cast<uint32_t>(pending_.size() - 1 - i));
                ++next;
            } else {
                pending_[kept++] = pending_[i];
            }
        }
        pending_.resize(kept);
        std::reverse(positions_.begin(), positions_.end());
        return encode_completed_set(positions_);
    }

    size_t size() const { return pending_.size(); }

private:
    std::deque<Handle> pending_;
    // Scratch of complete(), kept to avoid allocations on the tracer's path.
    std::vector<size_t> found_;
    std::vector<uint32_t> positions_;
};

}  // namespace htrace
