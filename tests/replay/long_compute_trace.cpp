// Writes a 2-rank trace whose every call is preceded by 10^6 s of computation (issue 26: replay of
// such a trace spun for ever), for check_max_compute.py. It prints how many computation gaps the
// trace holds per rank and how long each is, the truth the replay's report is checked against.
//
//     long_compute_trace OUT
#include "support/trace_builders.hpp"
#include "trace/trace_file.hpp"

#include <cstdio>

using namespace htrace;

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: long_compute_trace OUT\n");
        return 2;
    }
    constexpr double kGap = 1e6;
    constexpr int64_t kSteps = 3;
    Trace trace;
    trace.header.ranks = 2;
    // What the run claims: long enough for its gaps, or the reader refuses them (a gap longer than
    // the run is damage). The replay's default bound would then be this long, hence --max-compute.
    trace.header.traced_seconds = 2 * kSteps * kGap + 1;
    const RankList both = RankList::from_sorted({0, 1});
    // Each step: both ranks meet in an MPI_Allreduce, then in an MPI_Barrier.
    Event reduce = test::collective('a', 0, Op::Allreduce);
    Event barrier = test::collective('b', 0, Op::Barrier);
    for (Event* e : {&reduce, &barrier}) {
        e->ranks = both;
        e->compute.add(kGap);
    }
    trace.body.push_back(test::loop(kSteps, {Node{reduce}, Node{barrier}}));
    if (const std::string error = write_trace_file(argv[1], trace); !error.empty()) {
        std::fprintf(stderr, "long_compute_trace: %s: %s\n", argv[1], error.c_str());
        return 1;
    }
    std::printf("gaps_per_rank %lld\ngap_seconds %g\n", static_cast<long long>(2 * kSteps), kGap);
    return 0;
}
