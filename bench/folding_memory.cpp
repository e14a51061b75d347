// The loop folder's memory per call where values never repeat (issue 26): CALLS sends of distinct
// byte counts (in no order) appended to one LoopFolder at precision 100, and the resident set they
// add, read from /proc/self/status, while recording and after finish().
//
//     folding-memory CALLS
#include "merge/loop_folding.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace {

// A field of /proc/self/status in kB ("VmRSS:"), or -1.
long status_kb(const char* field)
{
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind(field, 0) == 0) return std::atol(line.c_str() + std::strlen(field));
    }
    return -1;
}

}  // namespace

int main(int argc, char** argv)
{
    const long calls = argc > 1 ? std::atol(argv[1]) : 1000000;
    if (calls <= 0) {
        std::fprintf(stderr, "usage: folding-memory CALLS\n");
        return 2;
    }
    std::printf("sizeof: Node %zu, Event %zu, Param %zu\n", sizeof(htrace::Node), sizeof(htrace::Event),
                sizeof(htrace::Param));
    const long before = status_kb("VmRSS:");
    htrace::LoopFolder folder(htrace::MergeRule{100, {}}, 0);
    for (long i = 0; i < calls; ++i) {
        htrace::RecordedCall call;
        call.op = htrace::Op::Send;
        call.signature = 7;
        call.add(htrace::Role::peer, htrace::kProcNull);
        call.add(htrace::Role::tag, 0);
        const unsigned long scrambled = (static_cast<unsigned long>(i) * 0x9e3779b1UL) & 0x7fffffffUL;
        call.add(htrace::Role::bytes, static_cast<int64_t>(scrambled));
        call.add(htrace::Role::comm, 0);
        call.compute_seconds = 1e-6;
        folder.append(call);
    }
    const long recorded = status_kb("VmRSS:");
    const htrace::Sequence folded = folder.finish();
    const long finished = status_kb("VmRSS:");
    std::printf("calls %ld, elements %zu: recording added %.0f bytes per call, after finish %.0f, peak %.0f\n", calls,
                folded.size(), double(recorded - before) * 1024 / double(calls),
                double(finished - before) * 1024 / double(calls),
                double(status_kb("VmHWM:") - before) * 1024 / double(calls));
    return 0;
}
