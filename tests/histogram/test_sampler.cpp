#include "histogram/sampler.hpp"

#include <doctest/doctest.h>

#include <map>

using htrace::Histogram;
using htrace::HistogramConfig;
using htrace::HistogramSampler;

namespace {

Histogram histogram_of(const std::map<int64_t, uint64_t>& counts, HistogramConfig config = {})
{
    Histogram h(config);
    for (const auto& [value, count] : counts) h.add(value, 0, count);
    return h;
}

}  // namespace

TEST_CASE("drawing as many values as a histogram counted hands out exactly the recorded values")
{
    const std::map<int64_t, uint64_t> recorded = {{38, 17}, {39, 15}, {40, 12}, {41, 23}, {42, 23}};
    const Histogram h = histogram_of(recorded);
    HistogramSampler sampler(7);
    for (int round = 0; round < 3; ++round) {
        std::map<int64_t, uint64_t> drawn;
        for (uint64_t i = 0; i < h.count(); ++i) ++drawn[sampler.draw(h, 1)];
        CHECK(drawn == recorded);
    }
}

TEST_CASE("a draw for several participants takes as many recorded values, and rounds still end exact")
{
    // Four ranks recorded the same sizes, each 3 x 32, 2 x 128 and 1 x 512: one draw per instance for
    // all four takes four values, so six draws hand out each rank's sizes exactly.
    const Histogram h = histogram_of({{32, 12}, {128, 8}, {512, 4}});
    HistogramSampler sampler(3);
    for (int round = 0; round < 3; ++round) {
        std::map<int64_t, uint64_t> drawn;
        for (int i = 0; i < 6; ++i) ++drawn[sampler.draw(h, 1, 4)];
        CHECK(drawn == std::map<int64_t, uint64_t>{{32, 3}, {128, 2}, {512, 1}});
    }
}

TEST_CASE("a count for participants that recorded different ones is their mean, rounded at random")
{
    // Four ranks looped 23, 95, 234 and 375 times around a collective: one draw for all takes all four
    // values, and gives 181 or 182 (the mean is 181.75), 182 three times in four on average.
    const Histogram h = histogram_of({{23, 1}, {95, 1}, {234, 1}, {375, 1}});
    HistogramSampler sampler(5);
    std::map<int64_t, uint64_t> drawn;
    for (int i = 0; i < 400; ++i) ++drawn[sampler.draw_mean(h, 1, 4)];
    CHECK(drawn.size() == 2);
    CHECK(drawn[181] + drawn[182] == 400);
    CHECK(drawn[182] > 250);
    CHECK(drawn[182] < 350);
}

TEST_CASE("equal histograms of one site share one pool of values, different ones do not")
{
    const Histogram a = histogram_of({{1, 2}, {5, 2}});
    const Histogram copy = a;
    const Histogram other = histogram_of({{1, 2}, {6, 2}});
    HistogramSampler sampler(3);
    std::map<int64_t, uint64_t> drawn;
    for (int i = 0; i < 2; ++i) ++drawn[sampler.draw(a, 1)];
    for (int i = 0; i < 2; ++i) ++drawn[sampler.draw(copy, 1)];
    CHECK(drawn == std::map<int64_t, uint64_t>{{1, 2}, {5, 2}});
    CHECK((sampler.draw(other, 1) == 1 || sampler.draw(other, 1) == 6));
}

TEST_CASE("the same seed draws the same sequence and another seed another one")
{
    const Histogram h = histogram_of({{10, 50}, {20, 50}, {30, 50}});
    auto sequence = [&](uint64_t seed) {
        HistogramSampler sampler(seed);
        std::vector<int64_t> out;
        for (int i = 0; i < 100; ++i) out.push_back(sampler.draw(h, 1));
        return out;
    };
    CHECK(sequence(1) == sequence(1));
    CHECK(sequence(1) != sequence(2));
}

TEST_CASE("equal histograms of different sites draw from pools of their own")
{
    // Ten values each, as a loop of sends and its matching loop of receives might record: drawn
    // alternately, each site must still hand out exactly its own recorded values.
    const std::map<int64_t, uint64_t> recorded = {{0, 4}, {3, 3}, {9, 2}, {14, 1}};
    const Histogram sends = histogram_of(recorded);
    const Histogram receives = histogram_of(recorded);
    HistogramSampler sampler(11);
    std::map<int64_t, uint64_t> sent, received;
    for (uint64_t i = 0; i < sends.count(); ++i) {
        ++sent[sampler.draw(sends, 1)];
        ++received[sampler.draw(receives, 2)];
    }
    CHECK(sent == recorded);
    CHECK(received == recorded);
}
