// Writes a trace that h-dump and h-report must read without crashing, hanging or writing invalid JSON
// (issue 26), for check_report_input.py:
//
//     write_hostile_trace KIND PATH
//
// non_utf8: file names, command line and MPI library that are not UTF-8 (a Latin-1 name, a stray
//           byte, a control character), as a job that opened such a file records them;
// huge_loop: 2 ranks, a loop of 10^15 sends of 8 bytes to the right neighbour inside a loop of 1000
//           (10^18 sends per rank, past 2^53), then one barrier.
#include "trace/trace_file.hpp"

#include <cstdio>
#include <string>
#include <string_view>

namespace {

using namespace htrace;

Event send_on_both()
{
    Event e;
    e.op = Op::Send;
    e.signature = 0x5e;
    e.ranks = RankList::from_sorted({0, 1});
    e.params = {{Role::peer, Value(int64_t{1})}, {Role::tag, Value(int64_t{0})}, {Role::bytes, Value(int64_t{8})},
                {Role::comm, Value(int64_t{0})}};
    return e;
}

Trace hostile(std::string_view kind)
{
    Trace trace;
    trace.header.ranks = 2;
    trace.header.mpi_library = "Open MPI";
    trace.header.command_line = "./program";
    if (kind == "non_utf8") {
        trace.header.mpi_library = "lib\xff";
        trace.header.command_line = "./program caf\xe9 \x01";
        trace.header.file_names[0] = "r\xe9sultat.dat";
        trace.header.file_names[1] = "\x80\xfe.log";
        Event open;
        open.op = Op::File_open;
        open.signature = 0xf0;
        open.ranks = RankList::from_sorted({0, 1});
        open.params = {{Role::file_name, Value(int64_t{0})}, {Role::comm, Value(int64_t{0})}};
        trace.body.push_back(Node{open});
        trace.body.push_back(Node{send_on_both()});
    } else if (kind == "huge_loop") {
        Loop inner{Value(int64_t{1'000'000'000'000'000}), {Node{send_on_both()}}};
        trace.body.push_back(Node{Loop{Value(int64_t{1000}), {Node{inner}}}});
        Event barrier;
        barrier.op = Op::Barrier;
        barrier.signature = 0xba;
        barrier.ranks = RankList::from_sorted({0, 1});
        barrier.params = {{Role::comm, Value(int64_t{0})}};
        trace.body.push_back(Node{barrier});
    }
    return trace;
}

}  // namespace

int main(int argc, char** argv)
{
    const std::string_view kind = argc == 3 ? argv[1] : "";
    if (kind != "non_utf8" && kind != "huge_loop") {
        std::fprintf(stderr, "usage: write_hostile_trace non_utf8|huge_loop PATH\n");
        return 2;
    }
    const std::string error = write_trace_file(argv[2], hostile(kind));
    if (!error.empty()) {
        std::fprintf(stderr, "write_hostile_trace: %s: %s\n", argv[2], error.c_str());
        return 1;
    }
    return 0;
}
