#pragma once
// Draws from histograms without replacement: each histogram hands out its recorded values (bin by
// bin, as many times as the bin counted) in a random order, and starts a new round once all are out.
// A replay that meets a histogram as often as the traced run did therefore re-enacts exactly the
// recorded values, so totals (messages, iterations, bytes) come out as recorded, where independent
// draws would only match them on average. The order is Boost.Random's: the same on every rank.
// Equal histograms of one site share one pool: a loop the merge unrolled leaves a copy in every
// iteration, and together the copies hand out the recorded values once. The site (the caller's key
// of the call and the role the value plays) keeps apart histograms that are equal by chance, such as
// the counts of a loop of sends and of its matching loop of receives: sharing a pool, each would get
// a random part of the other's values, and totals would no longer hold.

#include "histogram/histogram.hpp"

#include <boost/random/mersenne_twister.hpp>

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace htrace {

class HistogramSampler {
public:
    explicit HistogramSampler(std::uint64_t seed) : engine_(seed) {}

    // The histogram must outlive the sampler (its address is remembered). `site` must be the same
    // on every rank for the same histogram of the trace. `takes`: how many of the recorded values
    // the draw stands for (one value for all the participants of an instance, which recorded one
    // each), so that the round still ends when the recorded values are used up.
    std::int64_t draw(const Histogram& histogram, std::uint64_t site, std::uint64_t takes = 1);
    // One value for `takes` participants that recorded different ones (not alike on every rank): the
    // mean of `takes` draws, rounded up with the probability of its fraction, so that what it stands
    // for (a count times what each iteration does) keeps the recorded total on average.
    std::int64_t draw_mean(const Histogram& histogram, std::uint64_t site, std::uint64_t takes);

private:
    struct Round {
        std::vector<std::uint64_t> left;  // per bin, values not yet handed out this round
        std::uint64_t total = 0;
    };

    Round& round_of(const Histogram& histogram, std::uint64_t site);

    boost::random::mt19937_64 engine_;
    std::map<std::vector<std::int64_t>, Round> rounds_;  // by the site, the bins' counts and ranges
    std::map<std::pair<const Histogram*, std::uint64_t>, Round*> known_;
};

}  // namespace htrace
