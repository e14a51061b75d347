#include "histogram/sampler.hpp"

#include <boost/random/uniform_int_distribution.hpp>
#include <boost/random/uniform_real_distribution.hpp>

#include <algorithm>
#include <cmath>

namespace htrace {

HistogramSampler::Round& HistogramSampler::round_of(const Histogram& histogram, std::uint64_t site)
{
    auto known = known_.find({&histogram, site});
    if (known != known_.end()) return *known->second;
    std::vector<std::int64_t> key{static_cast<std::int64_t>(site)};
    for (const auto& bin : histogram.bins()) {
        key.push_back(static_cast<std::int64_t>(bin.count));
        key.push_back(bin.min);
        key.push_back(bin.max);
    }
    Round& round = rounds_[key];
    known_.emplace(std::pair{&histogram, site}, &round);
    return round;
}

std::int64_t HistogramSampler::draw(const Histogram& histogram, std::uint64_t site, std::uint64_t takes)
{
    Round& round = round_of(histogram, site);
    if (round.total == 0) {
        round.left.clear();
        for (const auto& bin : histogram.bins()) {
            round.left.push_back(bin.count);
            round.total += bin.count;
        }
        if (round.total == 0) return 0;
    }
    boost::random::uniform_int_distribution<std::uint64_t> position_of(0, round.total - 1);
    std::uint64_t position = position_of(engine_);
    std::size_t bin = 0;
    while (position >= round.left[bin]) position -= round.left[bin++];
    const std::uint64_t taken = std::min(std::max<std::uint64_t>(takes, 1), round.left[bin]);
    round.left[bin] -= taken;
    round.total -= taken;
    return histogram.bin_value(bin);
}

std::int64_t HistogramSampler::draw_mean(const Histogram& histogram, std::uint64_t site, std::uint64_t takes)
{
    if (takes <= 1) return draw(histogram, site);
    double sum = 0;
    for (std::uint64_t i = 0; i < takes; ++i) sum += static_cast<double>(draw(histogram, site));
    const double mean = sum / static_cast<double>(takes);
    const double whole = std::floor(mean);
    boost::random::uniform_real_distribution<double> unit(0, 1);
    return static_cast<std::int64_t>(whole) + (unit(engine_) < mean - whole ? 1 : 0);
}

}  // namespace htrace
