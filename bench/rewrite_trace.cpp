// Writes trace files again in this build's format and prints their bytes before and after, so that
// a change of the format is measured on the very same traces (those of a dynamic program differ
// from run to run). Fails if a trace written again does not read back as it was written: equal to
// what was read, but for the signatures' 32 bits files keep from format 14 and the times' spread
// that format 18 keeps as codes (written once more, it reads back equal). Prints CSV; the last columns
// are the bytes the trace would take without the time in calls (format 18), without where the ranks'
// time went (format 19), without both, and without the call sites' locations (format 20): what those
// fields cost.
#include "trace/trace_file.hpp"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

int main(int argc, char** argv)
{
    std::printf("trace,bytes_before,bytes_now,bytes_without_in_call,bytes_without_rank_times,bytes_without_times,"
                "bytes_without_locations\n");
    for (int i = 1; i < argc; ++i) {
        std::ifstream in(argv[i], std::ios::binary);
        const std::vector<uint8_t> before((std::istreambuf_iterator<char>(in)), {});
        auto read = htrace::decode_trace(before);
        if (!read.trace) {
            std::fprintf(stderr, "rewrite-trace: %s: %s\n", argv[i], read.error.c_str());
            return 1;
        }
        htrace::for_each_event(read.trace->body, [](htrace::Event& e) { e.signature &= 0xffffffffu; });
        const auto now = htrace::encode_trace(*read.trace);
        const auto again = htrace::decode_trace(now);
        const auto once_more = again.trace ? htrace::decode_trace(htrace::encode_trace(*again.trace)) : again;
        if (!once_more.trace || !(*once_more.trace == *again.trace)) {
            std::fprintf(stderr, "rewrite-trace: %s does not read back as it was\n", argv[i]);
            return 1;
        }
        htrace::Trace without_in_call = *read.trace;
        htrace::for_each_event(without_in_call.body, [](htrace::Event& e) { e.in_call = htrace::TimeStats{}; });
        htrace::Trace without_rank_times = *read.trace;
        without_rank_times.header.rank_times.reset();
        htrace::Trace without_times = without_in_call;
        without_times.header.rank_times.reset();
        htrace::Trace without_locations = *read.trace;
        without_locations.locations.clear();
        std::printf("%s,%zu,%zu,%zu,%zu,%zu,%zu\n", argv[i], before.size(), now.size(),
                    htrace::encode_trace(without_in_call).size(), htrace::encode_trace(without_rank_times).size(),
                    htrace::encode_trace(without_times).size(), htrace::encode_trace(without_locations).size());
    }
    return 0;
}
