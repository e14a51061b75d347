// Writes trace files again in this build's format and prints their bytes before and after, so that
// a change of the format is measured on the very same traces (those of a dynamic program differ
// from run to run). Fails if a trace does not read back equal to what was read (signatures to the
// 32 bits files keep from format 14). Prints CSV.
#include "trace/trace_file.hpp"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

namespace {

void keep_file_signature_bits(htrace::Sequence& seq)
{
    for (auto& node : seq) {
        if (node.is_loop()) {
            keep_file_signature_bits(node.loop().body);
        } else {
            node.event().signature &= 0xffffffffu;
        }
    }
}

}  // namespace

int main(int argc, char** argv)
{
    std::printf("trace,bytes_before,bytes_now\n");
    for (int i = 1; i < argc; ++i) {
        std::ifstream in(argv[i], std::ios::binary);
        const std::vector<uint8_t> before((std::istreambuf_iterator<char>(in)), {});
        auto read = htrace::decode_trace(before);
        if (!read.trace) {
            std::fprintf(stderr, "rewrite-trace: %s: %s\n", argv[i], read.error.c_str());
            return 1;
        }
        keep_file_signature_bits(read.trace->body);
        const auto now = htrace::encode_trace(*read.trace);
        const auto again = htrace::decode_trace(now);
        if (!again.trace || !(*again.trace == *read.trace)) {
            std::fprintf(stderr, "rewrite-trace: %s does not read back as it was\n", argv[i]);
            return 1;
        }
        std::printf("%s,%zu,%zu\n", argv[i], before.size(), now.size());
    }
    return 0;
}
