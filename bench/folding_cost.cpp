// Cost of folding calls into loops on the fly, per call, against the length of the loop body: the
// same number of calls (a random body repeated), bodies from 16 to 16,384 calls, at precision 100
// (every iteration equal) and 95 (sizes differ a little per iteration). Prints, per body length,
// the median nanoseconds per call over several runs and the folded size (top-level elements).
#include "merge/loop_folding.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

namespace {

htrace::RecordedCall call(uint64_t site, int64_t bytes)
{
    htrace::RecordedCall c;
    c.op = htrace::Op::Send;
    c.signature = site;
    c.add(htrace::Role::peer, 1);
    c.add(htrace::Role::tag, 0);
    c.add(htrace::Role::bytes, bytes);
    c.add(htrace::Role::comm, 0);
    return c;
}

// 64 call sites, each many times in a long body, with a few sizes; framed by sites of its own.
std::vector<htrace::RecordedCall> body_of(size_t length, std::mt19937& rng)
{
    std::vector<htrace::RecordedCall> body{call(1000, 8)};
    while (body.size() + 1 < length) body.push_back(call(rng() % 64, 1024 * int64_t(1 + rng() % 4)));
    body.push_back(call(1001, 8));
    return body;
}

}  // namespace

int main()
{
    constexpr size_t kCalls = 16384 * 120;  // whole iterations of every body length
    std::printf("precision,body_calls,median_ns_per_call,top_level_elements\n");
    for (int precision : {100, 95}) {
        for (size_t length : {16, 256, 1024, 4096, 16384}) {
            std::vector<double> times;
            size_t folded = 0;
            for (int run = 0; run < 5; ++run) {
                std::mt19937 rng(static_cast<unsigned>(run + 1));
                const auto body = body_of(length, rng);
                htrace::LoopFolder folder(htrace::MergeRule{precision, {}}, 0);
                const auto start = std::chrono::steady_clock::now();
                for (size_t i = 0; i < kCalls; ++i) {
                    htrace::RecordedCall c = body[i % length];
                    // Below 100, each iteration's message sizes differ by up to 2%: still within precision 95.
                    if (precision < 100 && c.param(2).value >= 1024) c = call(c.signature, c.param(2).value + int64_t(i / length % 20));
                    folder.append(c);
                }
                times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
                folded = folder.top_level_size();
                folder.finish();
            }
            std::sort(times.begin(), times.end());
            std::printf("%d,%zu,%.1f,%zu\n", precision, length, times[2] / double(kCalls) * 1e9, folded);
        }
    }
    return 0;
}
