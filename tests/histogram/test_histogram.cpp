#include "histogram/histogram.hpp"

#include <doctest/doctest.h>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <boost/random/uniform_real_distribution.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

template <>
struct doctest::StringMaker<htrace::Histogram::Extreme> {
    static doctest::String convert(const htrace::Histogram::Extreme& e) {
        return ("{" + std::to_string(e.value) + " at rank " + std::to_string(e.rank) + "}").c_str();
    }
};

namespace {

using htrace::Histogram;
using htrace::HistogramConfig;

struct Value {
    std::int64_t value;
    std::int32_t rank;
};

enum class Shape { small_range, wide_range, skewed, few_distinct, far_narrow_band };

const Shape all_shapes[] = {Shape::small_range, Shape::wide_range, Shape::skewed, Shape::few_distinct,
                            Shape::far_narrow_band};

std::string name(Shape shape) {
    switch (shape) {
    case Shape::small_range: return "uniform small range";
    case Shape::wide_range: return "uniform wide range";
    case Shape::skewed: return "skewed";
    case Shape::few_distinct: return "few distinct values";
    case Shape::far_narrow_band: return "narrow band far from zero";
    }
    return "?";
}

std::vector<Value> stream(Shape shape, std::uint32_t seed, std::size_t n) {
    boost::random::mt19937 engine(seed);
    boost::random::uniform_int_distribution<std::int32_t> rank(0, 63);
    boost::random::uniform_int_distribution<std::int64_t> small(-50, 150);
    boost::random::uniform_int_distribution<std::int64_t> wide(-1'000'000'000'000'000, 1'000'000'000'000'000);
    boost::random::uniform_real_distribution<double> unit(0.0, 1.0);
    boost::random::uniform_int_distribution<int> percent(0, 99);
    boost::random::uniform_int_distribution<std::int64_t> band(0, 1000);
    std::vector<Value> values;
    for (std::size_t i = 0; i < n; ++i) {
        std::int64_t v = 0;
        switch (shape) {
        case Shape::small_range: v = small(engine); break;
        case Shape::wide_range: v = wide(engine); break;
        case Shape::skewed: v = static_cast<std::int64_t>(std::pow(unit(engine), 6.0) * 1e7); break;
        case Shape::few_distinct: {
            const int p = percent(engine);
            v = p < 60 ? 8 : p < 85 ? 64 : p < 95 ? 4096 : p < 99 ? 65536 : 1 << 20;
            break;
        }
        case Shape::far_narrow_band: v = 1'000'000'000'000 + band(engine); break;
        }
        values.push_back({v, rank(engine)});
    }
    return values;
}

// Statistics of a value stream computed independently of the histogram (Welford in long double).
struct Reference {
    std::uint64_t count = 0;
    Histogram::Extreme min;
    Histogram::Extreme max;
    long double mean = 0;
    long double m2 = 0;

    void add(Value v) {
        if (count == 0 || v.value < min.value || (v.value == min.value && v.rank < min.rank))
            min = {v.value, v.rank};
        if (count == 0 || v.value > max.value || (v.value == max.value && v.rank < max.rank))
            max = {v.value, v.rank};
        ++count;
        const long double delta = static_cast<long double>(v.value) - mean;
        mean += delta / static_cast<long double>(count);
        m2 += delta * (static_cast<long double>(v.value) - mean);
    }
    long double variance() const { return count == 0 ? 0 : m2 / static_cast<long double>(count); }
};

Reference reference_of(const std::vector<Value>& values) {
    Reference reference;
    for (const Value& v : values)
        reference.add(v);
    return reference;
}

Histogram histogram_of(const std::vector<Value>& values, HistogramConfig config) {
    Histogram histogram(config);
    for (const Value& v : values)
        histogram.add(v.value, v.rank);
    return histogram;
}

void check_matches(const Histogram& h, const Reference& ref) {
    CHECK(h.count() == ref.count);
    CHECK(h.min().value == ref.min.value);
    CHECK(h.min().rank == ref.min.rank);
    CHECK(h.max().value == ref.max.value);
    CHECK(h.max().rank == ref.max.rank);
    const double mean = static_cast<double>(ref.mean);
    const double variance = static_cast<double>(ref.variance());
    CAPTURE(mean);
    CAPTURE(variance);
    CAPTURE(h.mean());
    CAPTURE(h.variance());
    // The mean's rounding error scales with the values' magnitude and spread, not with the mean itself.
    CHECK(std::abs(h.mean() - mean) <= 1e-9 * std::max({std::abs(mean), std::sqrt(variance), 1.0}));
    CHECK(std::abs(h.variance() - variance) <= 1e-9 * std::max(variance, 1.0));
}

void check_invariants(const Histogram& h) {
    const auto& bins = h.bins();
    CHECK(bins.size() <= h.config().bins);
    CHECK(h.added_since_rebalance() < h.config().rebalance_interval);
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < bins.size(); ++i) {
        const Histogram::Bin& bin = bins[i];
        CAPTURE(i);
        CAPTURE(bin.min);
        CAPTURE(bin.max);
        CAPTURE(bin.mean_offset);
        CAPTURE(bin.m2);
        CHECK(bin.count > 0);
        CHECK(bin.min <= bin.max);
        CHECK(bin.mean_offset >= 0.0);
        CHECK(bin.mean_offset <= static_cast<double>(static_cast<std::uint64_t>(bin.max) -
                                                     static_cast<std::uint64_t>(bin.min)));
        CHECK(bin.m2 >= 0.0);
        if (bin.min == bin.max) {
            CHECK(bin.mean_offset == 0.0);
            CHECK(bin.m2 == 0.0);
        }
        if (i > 0)
            CHECK(bins[i - 1].max < bin.min);
        total += bin.count;
    }
    CHECK(total == h.count());
    if (!bins.empty()) {
        CHECK(bins.front().min == h.min().value);
        CHECK(bins.back().max == h.max().value);
    }
}

// Index of the bin whose range holds `value`, or bins().size() if none does.
std::size_t bin_holding(const Histogram& h, std::int64_t value) {
    const auto& bins = h.bins();
    const auto it = std::upper_bound(bins.begin(), bins.end(), value,
                                     [](std::int64_t v, const Histogram::Bin& bin) { return v < bin.min; });
    if (it == bins.begin() || std::prev(it)->max < value)
        return bins.size();
    return static_cast<std::size_t>(std::prev(it) - bins.begin());
}

// Upper 99.9% quantile of the chi-square distribution, by the Wilson-Hilferty approximation
// (within a few percent of the tables for every df, slightly above them for small df).
double chi_square_999(double df) {
    const double z = 3.0902;  // standard normal 99.9% quantile
    const double c = 2.0 / (9.0 * df);
    return df * std::pow(1.0 - c + z * std::sqrt(c), 3.0);
}

}  // namespace

TEST_CASE("an empty histogram has no values, no extremes and counts as exact") {
    const Histogram h;
    CHECK(h.empty());
    CHECK(h.count() == 0);
    CHECK(h.mean() == 0.0);
    CHECK(h.variance() == 0.0);
    CHECK(h.exact());
    CHECK(h.min() == Histogram::Extreme{});
    CHECK(h.max() == Histogram::Extreme{});
    CHECK(h.config() == HistogramConfig{32, 64});
    CHECK_FALSE(h.keeps_seen_values());
}

TEST_CASE("a histogram is exact while its distinct values fit in the bins") {
    for (const std::uint32_t bins : {1u, 8u, 32u}) {
        for (std::uint32_t seed = 1; seed <= 5; ++seed) {
            CAPTURE(bins);
            CAPTURE(seed);
            boost::random::mt19937 engine(seed);
            boost::random::uniform_int_distribution<std::int64_t> any(-1'000'000'000, 1'000'000'000);
            std::set<std::int64_t> distinct;
            while (distinct.size() < bins)
                distinct.insert(any(engine));
            const std::vector<std::int64_t> values(distinct.begin(), distinct.end());
            // Skewed choice, so some values are rare: rebalancing must not touch them either.
            boost::random::uniform_real_distribution<double> unit(0.0, 1.0);
            Histogram h({bins, 4});
            std::map<std::int64_t, std::uint64_t> truth;
            for (int i = 0; i < 3000; ++i) {
                const double skewed = std::pow(unit(engine), 3.0);
                const auto pick = static_cast<std::size_t>(skewed * static_cast<double>(bins));
                const std::int64_t v = values[std::min<std::size_t>(pick, bins - 1)];
                h.add(v, i % 17);
                ++truth[v];
            }
            check_invariants(h);
            REQUIRE(h.exact());
            REQUIRE(h.bins().size() == truth.size());
            for (const Histogram::Bin& bin : h.bins()) {
                CAPTURE(bin.min);
                CHECK(bin.min == bin.max);
                CHECK(bin.count == truth[bin.min]);
                CHECK(bin.mean_offset == 0.0);
            }
            // One distinct value more than the bins hold loses the exactness.
            h.add(values.back() + 1, 0);
            CHECK_FALSE(h.exact());
            check_invariants(h);
        }
    }
}

TEST_CASE("a new value joins the nearest bin once all bins are in use, ties to the lower bin") {
    Histogram h({3, 1'000'000});
    h.add(0, 0);
    h.add(10, 0);
    h.add(20, 0);
    h.add(14, 0);  // nearer to 10
    h.add(5, 0);   // as near to 0 as to 10: the lower bin
    h.add(-3, 0);  // below every bin
    h.add(25, 0);  // above every bin
    REQUIRE(h.bins().size() == 3);
    CHECK(h.bins()[0].min == -3);
    CHECK(h.bins()[0].max == 5);
    CHECK(h.bins()[0].count == 3);
    CHECK(h.bins()[1].min == 10);
    CHECK(h.bins()[1].max == 14);
    CHECK(h.bins()[2].min == 20);
    CHECK(h.bins()[2].max == 25);
    check_invariants(h);
}

TEST_CASE("adding a value with a weight equals adding it that many times") {
    SUBCASE("exact histograms are equal as a whole") {
        Histogram weighted({8, 16});
        Histogram repeated({8, 16});
        const Value values[] = {{5, 1}, {-7, 2}, {5, 0}, {1000, 3}, {42, 9}};
        const std::uint64_t weights[] = {1, 37, 100, 3, 64};
        for (std::size_t i = 0; i < std::size(values); ++i) {
            weighted.add(values[i].value, values[i].rank, weights[i]);
            for (std::uint64_t k = 0; k < weights[i]; ++k)
                repeated.add(values[i].value, values[i].rank);
        }
        CHECK(weighted.exact());
        CHECK(weighted == repeated);
    }
    SUBCASE("inexact histograms have equal count, extremes and moments") {
        for (const Shape shape : all_shapes) {
            CAPTURE(name(shape));
            const std::vector<Value> values = stream(shape, 11, 500);
            Histogram weighted = histogram_of(values, {8, 16});
            Histogram repeated = weighted;
            Reference ref = reference_of(values);
            const Value heavy{values[7].value + 3, 5};
            weighted.add(heavy.value, heavy.rank, 1000);
            for (int k = 0; k < 1000; ++k) {
                repeated.add(heavy.value, heavy.rank);
                ref.add(heavy);
            }
            check_invariants(weighted);
            check_matches(weighted, ref);
            check_matches(repeated, ref);
        }
    }
}

TEST_CASE("rebalancing keeps the count, the extremes and the moments") {
    for (const Shape shape : all_shapes) {
        for (const std::uint32_t seed : {1u, 2u, 3u}) {
            CAPTURE(name(shape));
            CAPTURE(seed);
            const std::vector<Value> values = stream(shape, seed, 4000);
            Histogram h({8, 4});
            Reference ref;
            for (std::size_t i = 0; i < values.size(); ++i) {
                h.add(values[i].value, values[i].rank);
                ref.add(values[i]);
                if (i % 97 == 0 || i + 1 == values.size()) {
                    CAPTURE(i);
                    check_matches(h, ref);
                    check_invariants(h);
                }
            }
        }
    }
}

TEST_CASE("rebalancing evens out the bins of a sorted stream") {
    // Ascending values all land in the last bin once the bins are in use; only rebalancing spreads them.
    const auto fullest_share = [](std::uint32_t interval) {
        Histogram h({8, interval});
        for (std::int64_t v = 0; v < 10'000; ++v)
            h.add(v, 0);
        check_invariants(h);
        std::uint64_t fullest = 0;
        for (const Histogram::Bin& bin : h.bins())
            fullest = std::max(fullest, bin.count);
        return static_cast<double>(fullest) / static_cast<double>(h.count());
    };
    const double without = fullest_share(1'000'000);
    const double with = fullest_share(64);
    CAPTURE(without);
    CAPTURE(with);
    CHECK(without > 0.99);
    CHECK(with < 0.3);
}

TEST_CASE("merging histograms equals building one from all their values") {
    for (const Shape shape : all_shapes) {
        for (const std::uint32_t seed : {1u, 2u, 3u}) {
            for (const std::size_t parts : {2u, 3u, 8u}) {
                CAPTURE(name(shape));
                CAPTURE(seed);
                CAPTURE(parts);
                const std::vector<Value> values = stream(shape, seed, 3000);
                // Uneven random split: part p gets about twice as many values as part p + 1.
                boost::random::mt19937 engine(seed * 7919);
                boost::random::uniform_real_distribution<double> unit(0.0, 1.0);
                std::vector<Histogram> histograms(parts, Histogram({16, 8}));
                for (const Value& v : values) {
                    std::size_t p = 0;
                    while (p + 1 < parts && unit(engine) < 0.5)
                        ++p;
                    histograms[p].add(v.value, v.rank);
                }
                // Pairwise, as over the binomial tree of ranks.
                for (std::size_t step = 1; step < parts; step *= 2)
                    for (std::size_t i = 0; i + step < parts; i += 2 * step)
                        histograms[i].merge(histograms[i + step]);
                check_invariants(histograms[0]);
                check_matches(histograms[0], reference_of(values));
            }
        }
    }
}

TEST_CASE("merging is symmetric and an empty histogram changes nothing") {
    for (const Shape shape : all_shapes) {
        for (const std::uint32_t seed : {4u, 5u}) {
            CAPTURE(name(shape));
            CAPTURE(seed);
            const Histogram a = histogram_of(stream(shape, seed, 700), {8, 8});
            const Histogram b = histogram_of(stream(shape, seed + 100, 300), {8, 8});
            Histogram ab = a;
            ab.merge(b);
            Histogram ba = b;
            ba.merge(a);
            CHECK(ab == ba);

            Histogram empty_then_a({8, 8});
            empty_then_a.merge(a);
            CHECK(empty_then_a == a);
            Histogram a_then_empty = a;
            a_then_empty.merge(Histogram({8, 8}));
            CHECK(a_then_empty == a);
        }
    }
}

TEST_CASE("merging a histogram with itself doubles every count") {
    Histogram h = histogram_of(stream(Shape::skewed, 3, 500), {8, 8});
    const Histogram before = h;
    h.merge(h);
    CHECK(h.count() == 2 * before.count());
    CHECK(h.min() == before.min());
    CHECK(h.max() == before.max());
    CHECK(std::abs(h.variance() - before.variance()) <= 1e-9 * before.variance());
}

TEST_CASE("merging exact histograms whose distinct values fit stays exact") {
    Histogram a({6, 4});
    Histogram b({6, 4});
    std::map<std::int64_t, std::uint64_t> truth;
    const std::int64_t in_a[] = {1, 2, 3, 7};
    const std::int64_t in_b[] = {3, 7, 100, 250};
    for (int i = 0; i < 200; ++i) {
        const std::int64_t va = in_a[i % 4];
        const std::int64_t vb = in_b[(i * i) % 4];
        a.add(va, i);
        b.add(vb, i);
        ++truth[va];
        ++truth[vb];
    }
    a.merge(b);
    check_invariants(a);
    REQUIRE(a.exact());
    REQUIRE(a.bins().size() == truth.size());
    for (const Histogram::Bin& bin : a.bins()) {
        CAPTURE(bin.min);
        CHECK(bin.count == truth[bin.min]);
    }
}

TEST_CASE("ties in the extremes keep the lower rank") {
    Histogram a;
    a.add(5, 7);
    a.add(5, 3);
    a.add(5, 9);
    CHECK(a.min() == Histogram::Extreme{5, 3});
    CHECK(a.max() == Histogram::Extreme{5, 3});

    Histogram b;
    b.add(-1, 12);
    b.add(10, 4);
    Histogram c;
    c.add(-1, 11);
    c.add(10, 2);
    c.add(10, 6);
    Histogram bc = b;
    bc.merge(c);
    Histogram cb = c;
    cb.merge(b);
    CHECK(bc.min() == Histogram::Extreme{-1, 11});
    CHECK(bc.max() == Histogram::Extreme{10, 2});
    CHECK(cb.min() == bc.min());
    CHECK(cb.max() == bc.max());
}

TEST_CASE("sampled frequencies match the bin frequencies") {
    for (const Shape shape : all_shapes) {
        for (const std::uint32_t seed : {1u, 2u, 3u}) {
            CAPTURE(name(shape));
            CAPTURE(seed);
            const Histogram h = histogram_of(stream(shape, seed, 5000), {16, 8});
            const auto& bins = h.bins();
            const int draws = 20'000;
            std::vector<std::uint64_t> observed(bins.size(), 0);
            boost::random::mt19937 engine(seed + 1000);
            for (int i = 0; i < draws; ++i) {
                const std::int64_t v = h.sample(engine);
                const std::size_t bin = bin_holding(h, v);
                CAPTURE(v);
                REQUIRE(bin < bins.size());
                ++observed[bin];
            }
            // Pearson's chi-square; bins expecting fewer than 5 draws are pooled into one category.
            double chi2 = 0;
            int categories = 0;
            double pooled_expected = 0;
            double pooled_observed = 0;
            for (std::size_t i = 0; i < bins.size(); ++i) {
                const double expected =
                    draws * static_cast<double>(bins[i].count) / static_cast<double>(h.count());
                if (expected < 5) {
                    pooled_expected += expected;
                    pooled_observed += static_cast<double>(observed[i]);
                    continue;
                }
                const double diff = static_cast<double>(observed[i]) - expected;
                chi2 += diff * diff / expected;
                ++categories;
            }
            if (pooled_expected > 0) {
                const double diff = pooled_observed - pooled_expected;
                chi2 += diff * diff / pooled_expected;
                ++categories;
            }
            REQUIRE(categories >= 2);
            const double bound = chi_square_999(categories - 1);
            CAPTURE(categories);
            CAPTURE(chi2);
            CAPTURE(bound);
            CHECK(chi2 < bound);
        }
    }
}

TEST_CASE("the same engine seed gives the same samples") {
    const Histogram h = histogram_of(stream(Shape::skewed, 9, 2000), {8, 8});
    const Histogram rebuilt = *Histogram::from_parts(h.config(), h.bins(), h.min(), h.max(), std::nullopt,
                                                     h.added_since_rebalance());
    boost::random::mt19937 first(77);
    boost::random::mt19937 second(77);
    boost::random::mt19937 other(78);
    std::vector<std::int64_t> a, b, c;
    for (int i = 0; i < 1000; ++i) {
        a.push_back(h.sample(first));
        b.push_back(rebuilt.sample(second));
        c.push_back(h.sample(other));
    }
    CHECK(a == b);
    CHECK(a != c);
}

TEST_CASE("sampling draws a pinned sequence from a pinned seed") {
    // Replay on every platform and with every later build must draw these: a change here changes
    // what existing traces replay as.
    using Bin = Histogram::Bin;
    const std::vector<Bin> bins = {{32, 0, 1013, 326.6, 1.0},
                                   {30, 1014, 3889, 1222.0, 1.0},
                                   {17, 3890, 6258, 1051.4, 1.0},
                                   {21, 6259, 9801, 1684.4, 1.0}};
    const Histogram h = *Histogram::from_parts({4, 8}, bins, {0, 0}, {9801, 99}, std::nullopt, 0);
    boost::random::mt19937 engine(2024);
    std::vector<std::int64_t> drawn;
    for (int i = 0; i < 12; ++i)
        drawn.push_back(h.sample(engine));
    const std::vector<std::int64_t> pinned = {2236, 4941, 4941, 4941, 327, 2236,
                                              327,  7943, 327,  7943, 327, 327};
    CHECK(drawn == pinned);
}

TEST_CASE("merged seen values are the union of the inputs' values") {
    for (const std::uint32_t seed : {1u, 2u, 3u, 4u}) {
        CAPTURE(seed);
        boost::random::mt19937 engine(seed);
        // Relative endpoints in a 64-rank communicator: more distinct values than bins.
        boost::random::uniform_int_distribution<std::int64_t> peer(0, 63);
        Histogram a({4, 4});
        Histogram b({4, 4});
        REQUIRE(a.keep_seen_values());
        REQUIRE(b.keep_seen_values());
        std::set<std::int64_t> truth;
        for (int i = 0; i < 40; ++i) {
            const std::int64_t va = peer(engine);
            const std::int64_t vb = peer(engine) / 2;
            a.add(va, i);
            b.add(vb, i);
            truth.insert(va);
            truth.insert(vb);
        }
        CHECK_FALSE(a.exact());
        a.merge(b);
        CHECK(a.keeps_seen_values());
        CHECK(a.seen_values() == std::vector<std::int64_t>(truth.begin(), truth.end()));
        check_invariants(a);
    }
}

TEST_CASE("samples are always seen values") {
    for (const std::uint32_t seed : {1u, 2u, 3u}) {
        CAPTURE(seed);
        boost::random::mt19937 engine(seed);
        // Sparse values with wide gaps, so bin means fall between seen values.
        const std::int64_t sparse[] = {1, 9, 17, 40, 41, 63, 100, 1000, 1001, 5000, 70'000};
        boost::random::uniform_int_distribution<std::size_t> pick(0, std::size(sparse) - 1);
        Histogram a({4, 2});
        Histogram b({4, 2});
        a.keep_seen_values();
        b.keep_seen_values();
        for (int i = 0; i < 500; ++i) {
            a.add(sparse[pick(engine)], i % 8);
            b.add(sparse[pick(engine) / 2], i % 8);
        }
        a.merge(b);
        const std::set<std::int64_t> allowed(std::begin(sparse), std::end(sparse));
        for (int i = 0; i < 5000; ++i) {
            const std::int64_t v = a.sample(engine);
            CAPTURE(v);
            REQUIRE(allowed.count(v) == 1);
        }
    }
}

TEST_CASE("merging with a histogram without seen values keeps them only while nothing was lost") {
    Histogram keeping({4, 4});
    keeping.keep_seen_values();
    keeping.add(3, 0);
    keeping.add(9, 1);

    Histogram exact_plain({4, 4});
    exact_plain.add(5, 2);
    exact_plain.add(9, 3);

    Histogram lossy_plain({4, 4});
    for (std::int64_t v = 0; v < 20; ++v)
        lossy_plain.add(v, 4);
    REQUIRE_FALSE(lossy_plain.exact());

    Histogram kept = keeping;
    kept.merge(exact_plain);
    CHECK(kept.keeps_seen_values());
    CHECK(kept.seen_values() == std::vector<std::int64_t>{3, 5, 9});
    Histogram kept_other_way = exact_plain;
    kept_other_way.merge(keeping);
    CHECK(kept_other_way == kept);

    Histogram dropped = keeping;
    dropped.merge(lossy_plain);
    CHECK_FALSE(dropped.keeps_seen_values());
    CHECK(dropped.seen_values().empty());

    // Turning the set on late works only while the bins still name every value.
    Histogram late = exact_plain;
    CHECK(late.keep_seen_values());
    CHECK(late.seen_values() == std::vector<std::int64_t>{5, 9});
    Histogram too_late = lossy_plain;
    CHECK_FALSE(too_late.keep_seen_values());
    CHECK(too_late == lossy_plain);
}

TEST_CASE("a histogram rebuilt from its parts equals the original") {
    std::vector<Histogram> originals;
    originals.emplace_back(HistogramConfig{8, 8});
    originals.push_back(histogram_of(stream(Shape::few_distinct, 1, 100), {8, 8}));
    originals.push_back(histogram_of(stream(Shape::wide_range, 2, 1000), {8, 5}));
    Histogram with_seen({4, 3});
    with_seen.keep_seen_values();
    for (const Value& v : stream(Shape::small_range, 3, 200))
        with_seen.add(v.value, v.rank);
    originals.push_back(with_seen);

    for (const Histogram& h : originals) {
        CAPTURE(h.count());
        std::optional<std::vector<std::int64_t>> seen;
        if (h.keeps_seen_values())
            seen = h.seen_values();
        const std::optional<Histogram> rebuilt =
            Histogram::from_parts(h.config(), h.bins(), h.min(), h.max(), seen, h.added_since_rebalance());
        REQUIRE(rebuilt.has_value());
        CHECK(*rebuilt == h);
    }
}

TEST_CASE("rebuilding from inconsistent parts fails") {
    using Bin = Histogram::Bin;
    const HistogramConfig config{4, 8};
    const std::vector<Bin> good = {{2, 0, 0, 0.0, 0.0}, {3, 5, 9, 2.0, 10.0}};
    const Histogram::Extreme low{0, 1};
    const Histogram::Extreme high{9, 2};
    REQUIRE(Histogram::from_parts(config, good, low, high, std::nullopt, 0).has_value());

    CHECK_FALSE(Histogram::from_parts({0, 8}, good, low, high, std::nullopt, 0));
    CHECK_FALSE(Histogram::from_parts({1, 8}, good, low, high, std::nullopt, 0));  // too many bins
    CHECK_FALSE(Histogram::from_parts(config, good, low, high, std::nullopt, 8));  // clock past interval
    CHECK_FALSE(Histogram::from_parts(config, {good[1], good[0]}, low, high, std::nullopt, 0));
    CHECK_FALSE(Histogram::from_parts(config, {{2, 0, 5, 1.0, 1.0}, good[1]}, low, high, std::nullopt, 0));
    CHECK_FALSE(Histogram::from_parts(config, {{0, 0, 0, 0.0, 0.0}, good[1]}, low, high, std::nullopt, 0));
    CHECK_FALSE(Histogram::from_parts(config, {{2, 0, 0, 0.0, -1.0}, good[1]}, low, high, std::nullopt, 0));
    CHECK_FALSE(Histogram::from_parts(config, {{2, 0, 0, 0.0, 3.0}, good[1]}, low, high, std::nullopt, 0));
    CHECK_FALSE(Histogram::from_parts(config, {good[0], {3, 5, 9, 4.5, 10.0}}, low, high, std::nullopt, 0));
    CHECK_FALSE(Histogram::from_parts(config, good, {1, 1}, high, std::nullopt, 0));
    CHECK_FALSE(Histogram::from_parts(config, {}, low, high, std::nullopt, 0));
    CHECK_FALSE(Histogram::from_parts(config, good, low, high, std::vector<std::int64_t>{0, 7, 5, 9}, 0));
    CHECK_FALSE(Histogram::from_parts(config, good, low, high, std::vector<std::int64_t>{0, 5}, 0));
    CHECK(Histogram::from_parts(config, good, low, high, std::vector<std::int64_t>{0, 5, 9}, 0));
}

TEST_CASE("values at the ends of the int64 range neither overflow nor leave the range") {
    using limits = std::numeric_limits<std::int64_t>;
    Histogram h({4, 2});
    h.keep_seen_values();
    Reference ref;
    boost::random::mt19937 engine(5);
    boost::random::uniform_int_distribution<std::int64_t> any(limits::min(), limits::max());
    for (int i = 0; i < 2000; ++i) {
        const std::int64_t v = i % 3 == 0 ? limits::min() : i % 3 == 1 ? limits::max() : any(engine);
        h.add(v, i % 5);
        ref.add({v, i % 5});
    }
    check_invariants(h);
    CHECK(h.count() == ref.count);
    CHECK(h.min() == Histogram::Extreme{limits::min(), 0});
    CHECK(h.max() == Histogram::Extreme{limits::max(), 0});
    for (int i = 0; i < 1000; ++i) {
        const std::int64_t v = h.sample(engine);
        CAPTURE(v);
        CHECK(std::binary_search(h.seen_values().begin(), h.seen_values().end(), v));
    }
}
