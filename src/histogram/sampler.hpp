#pragma once
// Draws from histograms without replacement: each histogram hands out its recorded values (bin by
// bin, as many times as the bin counted) in a random order, and starts a new round once all are out.
// A replay that meets a histogram as often as the traced run did therefore re-enacts exactly the
// recorded values, so totals (messages, iterations, bytes) come out as recorded, where independent
// draws would only match them on average. The order is Boost.Random's: the same on every rank.
// Equal histograms share one pool: a loop the merge unrolled leaves a copy in every iteration, and
// together the copies hand out the recorded values once.

#include "histogram/histogram.hpp"

#include <boost/random/mersenne_twister.hpp>

#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

namespace htrace {

class HistogramSampler {
public:
    explicit HistogramSampler(std::uint64_t seed) : engine_(seed) {}

    // The histogram must outlive the sampler (its address is remembered).
    std::int64_t draw(const Histogram& histogram);

private:
    struct Round {
        std::vector<std::uint64_t> left;  // per bin, values not yet handed out this round
        std::uint64_t total = 0;
    };

    Round& round_of(const Histogram& histogram);

    boost::random::mt19937_64 engine_;
    std::map<std::vector<std::int64_t>, Round> rounds_;  // by the bins' counts and ranges
    std::unordered_map<const Histogram*, Round*> known_;
};

}  // namespace htrace
