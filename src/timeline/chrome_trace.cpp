#include "timeline/chrome_trace.hpp"

#include "trace/render.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>

namespace htrace::timeline {

namespace {

// Whole nanoseconds, so that a call's start plus its duration is exactly its end as written.
int64_t nanoseconds(double seconds)
{
    return seconds > 0 ? static_cast<int64_t>(std::llround(seconds * 1e9)) : 0;
}

std::string microseconds(int64_t nanoseconds)
{
    char text[32];
    std::snprintf(text, sizeof text, "%" PRId64 ".%03" PRId64, nanoseconds / 1000, nanoseconds % 1000);
    return text;
}

std::string category(Op op)
{
    return operation_kind(op) == OperationKind::io ? "I/O" : "MPI";
}

}  // namespace

ChromeTraceWriter::ChromeTraceWriter(std::ostream& out, const std::string& title) : out_(out)
{
    out_ << "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n"
         << "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, \"args\": {\"name\": " << json_string(title) << "}}";
}

void ChromeTraceWriter::add(const RankTimeline& rank)
{
    const Rank r = rank.rank();
    out_ << ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 0, \"tid\": " << r
         << ", \"args\": {\"name\": \"rank " << r << "\"}},\n{\"name\": \"thread_sort_index\", \"ph\": \"M\", \"pid\": 0, "
         << "\"tid\": " << r << ", \"args\": {\"sort_index\": " << r << "}}";
    for (const TimedCall& call : rank.calls()) {
        const int64_t start = nanoseconds(call.start);
        const int64_t end = std::max(start, nanoseconds(call.end));
        out_ << ",\n{\"name\": \"" << operation_name(call.op) << "\", \"cat\": \"" << category(call.op)
             << "\", \"ph\": \"X\", \"pid\": 0, \"tid\": " << r << ", \"ts\": " << microseconds(start)
             << ", \"dur\": " << microseconds(end - start) << ", \"args\": {";
        out_ << "\"bytes\": " << call.bytes;
        if (call.recv_bytes != 0) out_ << ", \"recv_bytes\": " << call.recv_bytes;
        if (call.peer >= 0) out_ << ", \"peer\": " << call.peer << ", \"tag\": " << call.tag;
        if (call.source >= 0) out_ << ", \"source\": " << call.source << ", \"recv_tag\": " << call.recv_tag;
        if (call.root >= 0) out_ << ", \"root\": " << call.root;
        out_ << ", \"comm_size\": " << rank.communicators()[call.comm].size();
        if (call.signature != 0) out_ << ", \"site\": \"" << render_signature(call.signature) << '"';
        out_ << "}}";
    }
}

std::string ChromeTraceWriter::finish()
{
    out_ << "\n]}\n";
    out_.flush();
    return out_ ? std::string() : std::string("cannot write the Chrome trace");
}

}  // namespace htrace::timeline
