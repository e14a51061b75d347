// How many bins, and how often to rebalance: for value streams like the ones traces see, the
// distance between what a histogram's samples look like and the values that went in (two-sample
// Kolmogorov-Smirnov statistic, 0 = same distribution) against the bytes the histogram takes in a
// trace file. Prints CSV.
#include "histogram/histogram.hpp"
#include "trace/trace_file.hpp"

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace {

using Stream = std::vector<int64_t>;

Stream make(const std::string& kind, boost::random::mt19937& rng)
{
    Stream s;
    boost::random::normal_distribution<double> normal(0.0, 1.0);
    boost::random::uniform_int_distribution<int64_t> uniform(0, 1'000'000);
    for (int i = 0; i < 20000; ++i) {
        if (kind == "message sizes (log-normal)") s.push_back(std::llround(std::exp(8.0 + normal(rng))));
        if (kind == "drifting sizes (growing)") s.push_back(800 + i / 44);
        if (kind == "two regions (80 or 90 bytes with noise)") s.push_back((i % 2 ? 80 : 90) + std::llround(3 * normal(rng)));
        if (kind == "wide uniform") s.push_back(uniform(rng));
        if (kind == "compute ns (skewed with outliers)") {
            s.push_back(std::llround(1000 * std::exp(0.3 * normal(rng))) + (i % 997 == 0 ? 50'000 : 0));
        }
    }
    return s;
}

double ks_distance(Stream a, Stream b)
{
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    size_t i = 0, j = 0;
    double worst = 0;
    while (i < a.size() && j < b.size()) {
        const int64_t x = std::min(a[i], b[j]);
        while (i < a.size() && a[i] == x) ++i;
        while (j < b.size() && b[j] == x) ++j;
        worst = std::max(worst, std::fabs(double(i) / double(a.size()) - double(j) / double(b.size())));
    }
    return worst;
}

size_t file_bytes(const htrace::Histogram& h)
{
    htrace::Event e;
    e.params = {{htrace::Role::bytes, htrace::Value(h)}};
    htrace::Event plain;
    plain.params = {{htrace::Role::bytes, htrace::Value(int64_t{0})}};
    return htrace::encode_sequence({htrace::Node{e}}).size() - htrace::encode_sequence({htrace::Node{plain}}).size();
}

}  // namespace

int main()
{
    const std::vector<std::string> kinds{"message sizes (log-normal)", "drifting sizes (growing)",
                                         "two regions (80 or 90 bytes with noise)", "wide uniform",
                                         "compute ns (skewed with outliers)"};
    std::printf("bins,rebalance,stream,ks_distance,file_bytes\n");
    for (uint32_t bins : {8u, 16u, 32u, 64u, 128u}) {
        for (uint32_t rebalance : {16u, 64u, 256u, 1024u}) {
            for (const auto& kind : kinds) {
                boost::random::mt19937 rng(42);
                const Stream values = make(kind, rng);
                htrace::Histogram h(htrace::HistogramConfig{bins, rebalance});
                for (size_t i = 0; i < values.size(); ++i) h.add(values[i], static_cast<int32_t>(i % 64));
                Stream samples;
                for (size_t i = 0; i < values.size(); ++i) samples.push_back(h.sample(rng));
                std::printf("%u,%u,%s,%.4f,%zu\n", bins, rebalance, kind.c_str(), ks_distance(values, samples),
                            file_bytes(h));
            }
        }
    }
    return 0;
}
