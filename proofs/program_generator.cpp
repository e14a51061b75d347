#include "proofs/program_generator.hpp"

#include "merge/loop_folding.hpp"
#include "merge/rank_merge.hpp"
#include "trace/hash.hpp"
#include "trace/trace_file.hpp"

#include <boost/random/uniform_int_distribution.hpp>

#include <algorithm>
#include <memory>
#include <stdexcept>

namespace htrace::proofs {
namespace {

using Engine = boost::random::mt19937_64;
using sim::Comm;
using sim::Mpi;
using sim::Request;
using sim::Site;
using sim::Status;
using sim::Task;
using sim::kAnySourceArg;
using sim::kAnyTagArg;
using sim::kProcNullArg;
using sim::kRequestNull;
using sim::kUndefined;

int64_t pick(Engine& engine, int64_t low, int64_t high)
{
    return boost::random::uniform_int_distribution<int64_t>(low, high)(engine);
}

bool chance(Engine& engine, int percent) { return pick(engine, 0, 99) < percent; }

// ---- What a program is made of ------------------------------------------------------------------------

enum class Pattern : uint8_t {
    token_ring, wavefront, master_worker, request_graph, halo, sendrecv_ring, cancel, collectives, staged,
};

enum class Completion : uint8_t {
    waitall, wait_each, waitany_loop, waitsome_loop, testall_poll, testany_poll, testsome_poll, test_each_poll,
    receives_by_waitany,  // receives by a Waitany loop, then the sends by one Waitall
};

enum class Wildcard : uint8_t { none, any_source, any_tag, both };

enum class Shape : uint8_t { random, ring, gather, scatter, all_to_all };

enum class CancelMode : uint8_t { unmatched, unmatched_wildcard, race };

enum class CommChoice : uint8_t { world, split, dup };

// One phase of a program: a pattern and its parameters. Every rank of the communicator runs it
// alike; what depends on the communicator's size is derived from `seed` and the size where it runs.
struct Phase {
    Pattern pattern = Pattern::token_ring;
    Site site = 0;        // its call sites are site + 1, site + 2, ...
    int64_t tag = 0;      // its tags are tag .. tag + 15 (no other phase uses them)
    uint64_t seed = 0;
    int iterations = 1;   // laps, sweeps, time steps
    int64_t bytes = 8;
    Op send_op = Op::Send;
    bool vary = false;    // tags or sizes that change per iteration (they fold into histograms below 100)
    bool proc_null = false;
    bool wildcard_receives = false;
    bool both_directions = false;
    bool periodic = true;
    bool replace = false;
    bool two_dims = false;
    bool irecv_style = false;
    int count = 1;        // planes, tasks, shift
    Completion completion = Completion::waitall;
    Wildcard wildcard = Wildcard::none;
    Shape shape = Shape::random;
    CancelMode cancel = CancelMode::unmatched;
    std::vector<Op> collectives;
    bool root_apart = false;  // collectives: the root makes them from call sites of its own
    double work = 0;      // seconds of computation in its loops
};

struct Block {
    CommChoice comm = CommChoice::world;
    int color_rule = 0;   // split: 0 rank % 2, 1 rank % 3, 2 lower and upper half
    bool key_reversed = false;
    bool last_opts_out = false;  // split: the last rank gives MPI_UNDEFINED
    // Before its communicator is made, odd world ranks make one of their own and keep it, so that the
    // same communicator has different ids on different ranks.
    bool skewed_ids = false;
    int repeats = 1;
    std::vector<Phase> phases;
    Site site = 0;
};

struct ProgramSpec {
    int32_t ranks = 1;
    std::vector<Block> blocks;
};

const char* pattern_name(Pattern p)
{
    switch (p) {
    case Pattern::token_ring: return "token-ring";
    case Pattern::wavefront: return "wavefront";
    case Pattern::master_worker: return "master-worker";
    case Pattern::request_graph: return "requests";
    case Pattern::halo: return "halo";
    case Pattern::sendrecv_ring: return "sendrecv-ring";
    case Pattern::cancel: return "cancel";
    case Pattern::collectives: return "collectives";
    case Pattern::staged: return "staged-sends";
    }
    return "?";
}

const char* completion_name(Completion c)
{
    switch (c) {
    case Completion::waitall: return "waitall";
    case Completion::wait_each: return "wait-each";
    case Completion::waitany_loop: return "waitany";
    case Completion::waitsome_loop: return "waitsome";
    case Completion::testall_poll: return "testall-poll";
    case Completion::testany_poll: return "testany-poll";
    case Completion::testsome_poll: return "testsome-poll";
    case Completion::test_each_poll: return "test-poll";
    case Completion::receives_by_waitany: return "recv-waitany";
    }
    return "?";
}

Site site_of(const Phase& phase, uint64_t statement) { return mix64(phase.site * 64 + statement); }

// ---- The patterns, as the ranks run them ---------------------------------------------------------------

// Completes every request of `requests` in the phase's style.
Task complete_all(Mpi& mpi, const Phase& p, std::vector<Request>& requests, uint64_t statement)
{
    const Site site = site_of(p, statement);
    auto remaining = [&] {
        return static_cast<size_t>(std::count_if(requests.begin(), requests.end(), [](Request r) { return r != kRequestNull; }));
    };
    switch (p.completion) {
    case Completion::waitall:
        co_await mpi.waitall(site, requests);
        break;
    case Completion::wait_each:
        for (auto& r : requests) co_await mpi.wait(site, r);
        break;
    case Completion::waitany_loop:
        for (size_t n = remaining(); n > 0; --n) co_await mpi.waitany(site, requests);
        break;
    case Completion::waitsome_loop:
        while (remaining() > 0) co_await mpi.waitsome(site, requests);
        break;
    case Completion::testall_poll:
        while (!(co_await mpi.testall(site, requests)).flag) mpi.compute(p.work);
        break;
    case Completion::testany_poll:
        while (remaining() > 0) {
            co_await mpi.testany(site, requests);
            mpi.compute(p.work);
        }
        break;
    case Completion::testsome_poll:
        while (remaining() > 0) {
            co_await mpi.testsome(site, requests);
            mpi.compute(p.work);
        }
        break;
    case Completion::test_each_poll:
        for (auto& r : requests) {
            while (!(co_await mpi.test(site, r)).flag) mpi.compute(p.work);
        }
        break;
    case Completion::receives_by_waitany:
        break;  // the caller splits its requests
    }
}

// Rank 0 starts each lap: it sends to 1 and receives from the last rank; every other rank receives
// from its left and sends to its right.
Task token_ring(Mpi& mpi, Comm comm, const Phase& p)
{
    const int32_t n = comm.size;
    const int32_t me = comm.rank;
    if (n < 2) co_return;
    for (int lap = 0; lap < p.iterations; ++lap) {
        const int64_t tag = p.vary ? p.tag + lap % 8 : p.tag;
        const int64_t bytes = p.vary ? p.bytes * (1 + lap % 3) : p.bytes;
        if (me == 0) {
            mpi.compute(p.work);
            co_await mpi.send(site_of(p, 1), p.send_op, comm, 1, tag, bytes);
            co_await mpi.recv(site_of(p, 2), comm, n - 1, tag, bytes);
        } else {
            co_await mpi.recv(site_of(p, 3), comm, p.wildcard_receives ? kAnySourceArg : me - 1, tag, bytes);
            mpi.compute(p.work);
            co_await mpi.send(site_of(p, 4), p.send_op, comm, (me + 1) % n, tag, bytes);
        }
    }
}

// NPB LU's pipelined sweeps: per plane, receive from upstream, compute, send downstream; sweeps
// alternate direction when both are asked for. Edges use MPI_PROC_NULL or skip the call.
Task wavefront(Mpi& mpi, Comm comm, const Phase& p)
{
    const int32_t n = comm.size;
    const int32_t me = comm.rank;
    for (int sweep = 0; sweep < p.iterations; ++sweep) {
        const int dir = p.both_directions && sweep % 2 == 1 ? -1 : 1;
        const uint64_t s = dir > 0 ? 0 : 4;
        for (int plane = 0; plane < p.count; ++plane) {
            const int32_t up = me - dir;
            const int32_t down = me + dir;
            const int64_t tag = p.vary ? p.tag + plane % 8 : p.tag;
            if (up >= 0 && up < n) {
                co_await mpi.recv(site_of(p, 1 + s), comm, up, tag, p.bytes);
            } else if (p.proc_null) {
                co_await mpi.recv(site_of(p, 1 + s), comm, kProcNullArg, tag, p.bytes);
            }
            mpi.compute(p.work);
            if (down >= 0 && down < n) {
                co_await mpi.send(site_of(p, 2 + s), p.send_op, comm, down, tag, p.bytes);
            } else if (p.proc_null) {
                co_await mpi.send(site_of(p, 2 + s), p.send_op, comm, kProcNullArg, tag, p.bytes);
            }
        }
    }
}

// Rank 0 hands out `count` tasks, one at a time, to whichever worker returns a result (received from
// MPI_ANY_SOURCE with MPI_ANY_TAG, or with an MPI_Irecv and MPI_Wait), then tells each to stop.
// Workers receive from rank 0 with MPI_ANY_TAG and stop on the stop tag.
Task master_worker(Mpi& mpi, Comm comm, const Phase& p)
{
    const int32_t n = comm.size;
    if (n < 2) co_return;
    const int64_t task_tag = p.tag;
    const int64_t stop_tag = p.tag + 1;
    const int64_t result_tag = p.tag + 2;  // + 0..2 when results vary
    const int64_t task_bytes = p.bytes;
    const int64_t result_capacity = 8 * 4;
    auto result_bytes = [](int task) { return int64_t{8} * (1 + task % 4); };
    if (comm.rank == 0) {
        int next = 0;
        int outstanding = 0;
        for (int32_t w = 1; w < n; ++w) {
            if (next < p.count) {
                co_await mpi.send(site_of(p, 1), Op::Send, comm, w, task_tag, task_bytes);
                ++next;
                ++outstanding;
            } else {
                co_await mpi.send(site_of(p, 2), Op::Send, comm, w, stop_tag, 0);
            }
        }
        while (outstanding > 0) {
            const int64_t wanted = p.vary ? kAnyTagArg : result_tag;
            Status status;
            if (p.irecv_style) {
                Request r = (co_await mpi.irecv(site_of(p, 3), comm, kAnySourceArg, wanted, result_capacity)).request;
                mpi.compute(p.work);
                status = (co_await mpi.wait(site_of(p, 4), r)).status;
            } else {
                status = (co_await mpi.recv(site_of(p, 5), comm, kAnySourceArg, wanted, result_capacity)).status;
            }
            --outstanding;
            if (next < p.count) {
                co_await mpi.send(site_of(p, 6), Op::Send, comm, status.source, task_tag, task_bytes);
                ++next;
                ++outstanding;
            } else {
                co_await mpi.send(site_of(p, 7), Op::Send, comm, status.source, stop_tag, 0);
            }
        }
    } else {
        for (int done = 0;; ++done) {
            const Status status = (co_await mpi.recv(site_of(p, 8), comm, 0, kAnyTagArg, task_bytes)).status;
            if (status.tag == stop_tag) break;
            mpi.compute(p.work * (1 + done % 3));
            const int64_t tag = p.vary ? result_tag + done % 3 : result_tag;
            co_await mpi.send(site_of(p, 9), p.send_op, comm, 0, tag, p.vary ? result_bytes(done) : 8);
        }
    }
    co_await mpi.barrier(site_of(p, 10), comm);  // the wildcards must not see the next phase's messages
}

struct Edge {
    int32_t from;
    int32_t to;
    int64_t tag_offset;
    int64_t bytes;
};

// The messages of a request phase on a communicator of `n` ranks (the same on every member).
std::vector<Edge> edges_of(const Phase& p, int32_t n)
{
    Engine engine(p.seed ^ (static_cast<uint64_t>(n) * 0x9E3779B97F4A7C15ull));
    std::vector<Edge> edges;
    auto add = [&](int32_t from, int32_t to) {
        edges.push_back({from, to, pick(engine, 0, 3), p.vary ? 8 * pick(engine, 1, 64) : p.bytes});
    };
    switch (p.shape) {
    case Shape::ring:
        for (int32_t r = 0; r < n; ++r) add(r, (r + 1) % n);
        break;
    case Shape::gather:
        for (int32_t r = 1; r < n; ++r) add(r, 0);
        break;
    case Shape::scatter:
        for (int32_t r = 1; r < n; ++r) add(0, r);
        break;
    case Shape::all_to_all:
        for (int32_t a = 0; a < n; ++a) {
            for (int32_t b = 0; b < n; ++b) add(a, b);
        }
        break;
    case Shape::random:
        for (int64_t k = pick(engine, 0, 2 * n); k > 0; --k) {
            add(static_cast<int32_t>(pick(engine, 0, n - 1)), static_cast<int32_t>(pick(engine, 0, n - 1)));
        }
        break;
    }
    return edges;
}

// Every rank posts a receive for each message aimed at it and a send for each of its own, in an order
// of its own, then completes them all in the phase's style. A receive has room for the largest
// message on its channel (its messages may come in another order than the receives are posted).
// With wildcards, every receive of the phase uses them alike (so a receive can only take a message
// of the phase meant for some receive of its rank), with room for the largest message, and a
// barrier ends each iteration: else a fast rank's next message could take a receive that a slow
// rank's message needs, and under rendezvous a rank that waits for its own send would wait forever.
Task request_graph(Mpi& mpi, Comm comm, const Phase& p)
{
    const int32_t me = comm.rank;
    const std::vector<Edge> edges = edges_of(p, comm.size);
    int64_t largest = 0;
    for (const auto& e : edges) largest = std::max(largest, e.bytes);
    struct Post {
        bool receive;
        const Edge* edge;
    };
    std::vector<Post> posts;
    for (const auto& e : edges) {
        if (e.to == me) posts.push_back({true, &e});
    }
    for (const auto& e : edges) {
        if (e.from == me) posts.push_back({false, &e});
    }
    Engine order(p.seed + static_cast<uint64_t>(me) * 7919);
    const bool receives_first = p.completion == Completion::receives_by_waitany || chance(order, 50);
    if (!receives_first) {
        for (size_t i = posts.size(); i > 1; --i) std::swap(posts[i - 1], posts[static_cast<size_t>(pick(order, 0, static_cast<int64_t>(i) - 1))]);
    }
    auto capacity = [&](const Edge& e) {
        int64_t most = 0;
        for (const auto& other : edges) {
            if (other.from == e.from && other.to == e.to && other.tag_offset == e.tag_offset) most = std::max(most, other.bytes);
        }
        return p.wildcard == Wildcard::none ? most : largest;
    };
    const bool any_source = p.wildcard == Wildcard::any_source || p.wildcard == Wildcard::both;
    const bool any_tag = p.wildcard == Wildcard::any_tag || p.wildcard == Wildcard::both;
    for (int iteration = 0; iteration < p.iterations; ++iteration) {
        std::vector<Request> receives;
        std::vector<Request> sends;
        std::vector<Request> all;
        for (const auto& post : posts) {
            const Edge& e = *post.edge;
            if (post.receive) {
                const Request r = (co_await mpi.irecv(site_of(p, 1), comm, any_source ? kAnySourceArg : e.from,
                                                      any_tag ? kAnyTagArg : p.tag + e.tag_offset, capacity(e)))
                                      .request;
                receives.push_back(r);
                all.push_back(r);
            } else {
                const Request r = (co_await mpi.isend(site_of(p, 2), p.send_op, comm, e.to, p.tag + e.tag_offset, e.bytes)).request;
                sends.push_back(r);
                all.push_back(r);
            }
        }
        mpi.compute(p.work);
        if (p.completion == Completion::receives_by_waitany) {
            for (size_t n = receives.size(); n > 0; --n) co_await mpi.waitany(site_of(p, 3), receives);
            co_await mpi.waitall(site_of(p, 4), sends);
        } else if (!all.empty() || p.completion == Completion::waitall) {
            co_await complete_all(mpi, p, all, 5);
        }
        if (p.wildcard != Wildcard::none) co_await mpi.barrier(site_of(p, 10), comm);
    }
}

// A 1-D or 2-D halo exchange: MPI_Irecv from every neighbour, MPI_Isend to every neighbour, then
// complete them; neighbours beyond a non-periodic edge are MPI_PROC_NULL.
Task halo(Mpi& mpi, Comm comm, const Phase& p)
{
    const int32_t n = comm.size;
    const int32_t me = comm.rank;
    int32_t px = n;
    int32_t py = 1;
    if (p.two_dims) {
        for (int32_t d = 1; d * d <= n; ++d) {
            if (n % d == 0) py = d;
        }
        px = n / py;
    }
    const int32_t x = me % px;
    const int32_t y = me / px;
    auto at = [&](int32_t nx, int32_t ny) -> int32_t {
        if (p.periodic) return ((ny + py) % py) * px + (nx + px) % px;
        if (nx < 0 || nx >= px || ny < 0 || ny >= py) return kProcNullArg;
        return ny * px + nx;
    };
    // Directions: +x, -x, +y, -y. A message travelling in direction d has tag p.tag + d.
    const int32_t dx[4] = {1, -1, 0, 0};
    const int32_t dy[4] = {0, 0, 1, -1};
    const int directions = p.two_dims ? 4 : 2;
    for (int step = 0; step < p.iterations; ++step) {
        std::vector<Request> requests;
        for (int d = 0; d < directions; ++d) {
            const int32_t from = at(x - dx[d], y - dy[d]);
            const int64_t bytes = p.bytes * (d < 2 ? 1 : 2);
            requests.push_back((co_await mpi.irecv(site_of(p, 1), comm, from, p.tag + d, bytes)).request);
        }
        for (int d = 0; d < directions; ++d) {
            const int32_t to = at(x + dx[d], y + dy[d]);
            const int64_t bytes = p.bytes * (d < 2 ? 1 : 2);
            requests.push_back((co_await mpi.isend(site_of(p, 2), p.send_op, comm, to, p.tag + d, bytes)).request);
        }
        mpi.compute(p.work);
        co_await complete_all(mpi, p, requests, 3);
    }
}

// Everyone sends `count` ranks to the right and receives from as far to the left, in one MPI_Sendrecv
// (or Sendrecv_replace); without wrap-around the ends talk to MPI_PROC_NULL.
Task sendrecv_ring(Mpi& mpi, Comm comm, const Phase& p)
{
    const int32_t n = comm.size;
    const int32_t me = comm.rank;
    const int32_t shift = p.count % n;
    int32_t dest = (me + shift) % n;
    int32_t source = (me - shift + n) % n;
    if (!p.periodic) {
        dest = me + shift < n ? me + shift : kProcNullArg;
        source = me - shift >= 0 ? me - shift : kProcNullArg;
    }
    for (int step = 0; step < p.iterations; ++step) {
        const int64_t bytes = p.vary ? p.bytes * (1 + step % 2) : p.bytes;
        mpi.compute(p.work);
        if (p.replace) {
            co_await mpi.sendrecv_replace(site_of(p, 1), comm, dest, p.tag, source, p.tag, bytes);
        } else {
            co_await mpi.sendrecv(site_of(p, 2), comm, dest, p.tag, bytes, source, p.tag, bytes);
        }
    }
}

// A receive that is cancelled: one nobody sends to (from a neighbour, or MPI_ANY_SOURCE), or a race
// in pairs of ranks where the cancel may come before or after the message, and a receive posted
// again takes the message when the cancel won.
Task cancel(Mpi& mpi, Comm comm, const Phase& p)
{
    const int32_t n = comm.size;
    const int32_t me = comm.rank;
    const int64_t unused_tag = p.tag + 15;
    for (int step = 0; step < p.iterations; ++step) {
        if (p.cancel == CancelMode::race) {
            const bool first = me % 2 == 0;
            const int32_t partner = first ? me + 1 : me - 1;
            if (partner >= n) continue;
            if (first) {
                Request r = (co_await mpi.irecv(site_of(p, 1), comm, partner, p.tag, p.bytes)).request;
                mpi.compute(p.work);
                co_await mpi.cancel(site_of(p, 2), r);
                const Status status = (co_await mpi.wait(site_of(p, 3), r)).status;
                if ((co_await mpi.test_cancelled(site_of(p, 4), status)).flag) {
                    co_await mpi.recv(site_of(p, 5), comm, partner, p.tag, p.bytes);
                }
            } else {
                mpi.compute(p.work);
                co_await mpi.send(site_of(p, 6), p.send_op, comm, partner, p.tag, p.bytes);
            }
            continue;
        }
        const int32_t source = p.cancel == CancelMode::unmatched_wildcard ? kAnySourceArg : (me + 1) % n;
        Request r = (co_await mpi.irecv(site_of(p, 7), comm, source, unused_tag, p.bytes)).request;
        mpi.compute(p.work);
        co_await mpi.cancel(site_of(p, 8), r);
        const Status status = (co_await mpi.wait(site_of(p, 9), r)).status;
        co_await mpi.test_cancelled(site_of(p, 10), status);
    }
}

Task collectives(Mpi& mpi, Comm comm, const Phase& p)
{
    for (int step = 0; step < p.iterations; ++step) {
        for (size_t k = 0; k < p.collectives.size(); ++k) {
            const int32_t root = static_cast<int32_t>((p.seed + k) % static_cast<uint64_t>(comm.size));
            const Site site = site_of(p, (p.root_apart && comm.rank == root ? 33 : 1) + k);
            mpi.compute(p.work);
            switch (p.collectives[k]) {
            case Op::Barrier: co_await mpi.barrier(site, comm); break;
            case Op::Allreduce: co_await mpi.allreduce(site, comm, p.bytes); break;
            case Op::Bcast: co_await mpi.bcast(site, comm, root, p.bytes * 4); break;
            default: co_await mpi.reduce(site, comm, root, p.bytes); break;
            }
        }
    }
}

// Two sends in flight, waited for one at a time with a blocking send between: rank r sends to r + 1
// and r + 2, waits for the first, sends to r + 2 again (blocking), receives, and only then waits for
// the second, whose receive r + 2 posts after its own blocking send. Small messages go eagerly, so
// with Open MPI both requests share one handle.
Task staged(Mpi& mpi, Comm comm, const Phase& p)
{
    const int32_t n = comm.size;
    const int32_t me = comm.rank;
    const int32_t next = (me + 1) % n;
    const int32_t after = (me + 2) % n;
    const int32_t before = (me - 1 + n) % n;
    const int32_t two_before = (me - 2 + 2 * n) % n;
    for (int step = 0; step < p.iterations; ++step) {
        Request first_in = (co_await mpi.irecv(site_of(p, 1), comm, before, p.tag, 64)).request;
        Request third_in = (co_await mpi.irecv(site_of(p, 2), comm, two_before, p.tag + 2, 64)).request;
        Request first = (co_await mpi.isend(site_of(p, 3), Op::Isend, comm, next, p.tag, 64)).request;
        Request second = (co_await mpi.isend(site_of(p, 4), Op::Isend, comm, after, p.tag + 1, 64)).request;
        mpi.compute(p.work);
        co_await mpi.wait(site_of(p, 5), first);
        co_await mpi.send(site_of(p, 6), Op::Send, comm, after, p.tag + 2, 64);
        co_await mpi.wait(site_of(p, 7), first_in);
        co_await mpi.wait(site_of(p, 8), third_in);
        co_await mpi.recv(site_of(p, 9), comm, two_before, p.tag + 1, 64);
        co_await mpi.wait(site_of(p, 10), second);
    }
}

Task run_phase(Mpi& mpi, Comm comm, const Phase& p)
{
    switch (p.pattern) {
    case Pattern::token_ring: co_await token_ring(mpi, comm, p); break;
    case Pattern::wavefront: co_await wavefront(mpi, comm, p); break;
    case Pattern::master_worker: co_await master_worker(mpi, comm, p); break;
    case Pattern::request_graph: co_await request_graph(mpi, comm, p); break;
    case Pattern::halo: co_await halo(mpi, comm, p); break;
    case Pattern::sendrecv_ring: co_await sendrecv_ring(mpi, comm, p); break;
    case Pattern::cancel: co_await cancel(mpi, comm, p); break;
    case Pattern::collectives: co_await collectives(mpi, comm, p); break;
    case Pattern::staged: co_await staged(mpi, comm, p); break;
    }
}

Task rank_program(Mpi& mpi, std::shared_ptr<const ProgramSpec> spec)
{
    const Comm world = mpi.world();
    const int32_t me = world.rank;
    const int32_t n = world.size;
    for (const Block& b : spec->blocks) {
        Comm comm = world;
        Comm own;
        if (b.skewed_ids) {
            own = (co_await mpi.comm_split(mix64(b.site + 4), world, me, 0)).comm;
            if (me % 2 == 0) co_await mpi.comm_free(mix64(b.site + 5), own);
        }
        if (b.comm == CommChoice::split) {
            int64_t color = b.color_rule == 0 ? me % 2 : b.color_rule == 1 ? me % 3 : (me < n / 2 ? 0 : 1);
            if (b.last_opts_out && me == n - 1 && n > 1) color = kUndefined;
            const int64_t key = b.key_reversed ? n - me : 0;
            comm = (co_await mpi.comm_split(mix64(b.site + 1), world, color, key)).comm;
        } else if (b.comm == CommChoice::dup) {
            comm = (co_await mpi.comm_dup(mix64(b.site + 2), world)).comm;
        }
        if (comm.valid()) {
            for (int repeat = 0; repeat < b.repeats; ++repeat) {
                for (const Phase& p : b.phases) co_await run_phase(mpi, comm, p);
            }
            if (b.comm != CommChoice::world) co_await mpi.comm_free(mix64(b.site + 3), comm);
        }
        if (b.skewed_ids && me % 2 == 1) co_await mpi.comm_free(mix64(b.site + 5), own);
    }
}

// ---- Drawing a program ----------------------------------------------------------------------------------

Phase draw_phase(Engine& engine, size_t index, int32_t ranks, const ProgramLimits& limits)
{
    Phase p;
    p.site = (index + 1) * 1000;
    p.tag = static_cast<int64_t>(index + 1) * 16;
    p.seed = engine();
    p.iterations = static_cast<int>(pick(engine, 1, std::max(1, std::min(4, limits.max_iterations))));
    p.bytes = 8 * pick(engine, 1, 128);
    p.send_op = chance(engine, 30) ? Op::Ssend : Op::Send;
    p.vary = chance(engine, 30);
    p.work = chance(engine, 70) ? static_cast<double>(pick(engine, 1, 50)) * 1e-6 : 0.0;
    const int roll = static_cast<int>(pick(engine, 0, 99));
    if (roll < 10) {
        p.pattern = Pattern::token_ring;
        p.wildcard_receives = chance(engine, 25);
    } else if (roll < 20) {
        p.pattern = Pattern::wavefront;
        p.count = static_cast<int>(pick(engine, 1, 4));
        p.both_directions = chance(engine, 60);
        p.proc_null = chance(engine, 50);
    } else if (roll < 32) {
        p.pattern = Pattern::master_worker;
        p.count = static_cast<int>(pick(engine, 0, 2 * ranks));
        p.irecv_style = chance(engine, 50);
        p.iterations = 1;
    } else if (roll < 57) {
        p.pattern = Pattern::request_graph;
        p.shape = static_cast<Shape>(pick(engine, 0, ranks <= 5 ? 4 : 3));
        p.completion = static_cast<Completion>(pick(engine, 0, 8));
        p.wildcard = chance(engine, 35) ? static_cast<Wildcard>(pick(engine, 1, 3)) : Wildcard::none;
        p.send_op = chance(engine, 25) ? Op::Issend : Op::Isend;
    } else if (roll < 70) {
        p.pattern = Pattern::halo;
        p.two_dims = chance(engine, 50);
        p.periodic = chance(engine, 50);
        p.send_op = chance(engine, 25) ? Op::Issend : Op::Isend;
        p.completion = chance(engine, 60) ? Completion::waitall : static_cast<Completion>(pick(engine, 0, 7));
    } else if (roll < 80) {
        p.pattern = Pattern::sendrecv_ring;
        p.count = static_cast<int>(pick(engine, 1, 3));
        p.periodic = chance(engine, 70);
        p.replace = chance(engine, 30);
    } else if (roll < 88) {
        p.pattern = Pattern::cancel;
        const int mode = static_cast<int>(pick(engine, 0, 9));
        p.cancel = mode < 4 ? CancelMode::unmatched : mode < 6 ? CancelMode::unmatched_wildcard : CancelMode::race;
        p.iterations = static_cast<int>(pick(engine, 1, std::max(1, std::min(2, limits.max_iterations))));
    } else if (roll < 92) {
        p.pattern = Pattern::staged;
    } else {
        p.pattern = Pattern::collectives;
        const Op ops[] = {Op::Barrier, Op::Allreduce, Op::Bcast, Op::Reduce};
        for (int64_t k = pick(engine, 1, 3); k > 0; --k) p.collectives.push_back(ops[pick(engine, 0, 3)]);
        p.root_apart = (p.seed >> 3) % 2 == 0;  // no draw of its own: other programs stay as they were
        p.iterations = static_cast<int>(pick(engine, 1, std::max(1, std::min(2, limits.max_iterations))));
    }
    return p;
}

ProgramSpec draw_program(Engine& engine, const ProgramLimits& limits)
{
    ProgramSpec spec;
    const int32_t most = std::max(1, std::min(12, limits.max_ranks));
    spec.ranks = static_cast<int32_t>(pick(engine, 0, 9) < 2 ? pick(engine, 1, std::min(3, most))
                                                             : pick(engine, std::min(2, most), most));
    size_t phases = 0;
    for (int64_t b = pick(engine, 1, std::max(1, std::min(3, limits.max_blocks))); b > 0; --b) {
        Block block;
        block.site = (spec.blocks.size() + 1) * 100;
        const int roll = static_cast<int>(pick(engine, 0, 99));
        block.comm = roll < 70 ? CommChoice::world : roll < 90 ? CommChoice::split : CommChoice::dup;
        block.color_rule = static_cast<int>(pick(engine, 0, 2));
        block.key_reversed = chance(engine, 40);
        block.last_opts_out = chance(engine, 25);
        block.repeats = static_cast<int>(pick(engine, 1, std::max(1, std::min(3, limits.max_repeats))));
        for (int64_t k = pick(engine, 1, std::max(1, std::min(3, limits.max_phases))); k > 0; --k) {
            block.phases.push_back(draw_phase(engine, phases++, spec.ranks, limits));
        }
        block.skewed_ids = block.comm != CommChoice::world && block.phases.front().seed % 3 == 0;
        spec.blocks.push_back(std::move(block));
    }
    return spec;
}

std::string describe(const ProgramSpec& spec, const ProgramRun& run, const sim::RunOptions& options)
{
    std::string text = std::to_string(spec.ranks) + " ranks, precision " + std::to_string(run.rule.precision) + ", " +
                       (options.shared_complete_request ? "Open MPI (eager sends, shared handles)"
                        : options.eager_limit > 0       ? "eager sends"
                                                        : "rendezvous") +
                       (options.reuse_request_handles ? ", handles reused" : "") + ":";
    for (const Block& b : spec.blocks) {
        text += b.comm == CommChoice::world ? " [world" : b.comm == CommChoice::dup ? " [dup" : " [split";
        text += " x" + std::to_string(b.repeats) + ":";
        for (const Phase& p : b.phases) {
            text += std::string(" ") + pattern_name(p.pattern);
            if (p.pattern == Pattern::request_graph || p.pattern == Pattern::halo) {
                text += std::string("/") + completion_name(p.completion);
            }
            if (p.wildcard != Wildcard::none || p.wildcard_receives || p.pattern == Pattern::master_worker) text += "/wildcard";
            if (p.pattern == Pattern::cancel) {
                text += p.cancel == CancelMode::race ? "/race" : p.cancel == CancelMode::unmatched ? "/unmatched" : "/any";
            }
        }
        text += "]";
    }
    return text;
}

void give_participant(Sequence& seq, Rank rank)
{
    for (auto& node : seq) {
        if (node.is_loop()) {
            give_participant(node.loop().body, rank);
        } else {
            node.event().ranks = RankList(rank);
        }
    }
}

}  // namespace

ProgramRun run_generated_program(uint64_t seed, const ProgramLimits& limits)
{
    Engine engine(seed);
    auto spec = std::make_shared<const ProgramSpec>(draw_program(engine, limits));
    ProgramRun run;
    run.seed = seed;
    run.ranks = spec->ranks;
    const int precisions[] = {0, 50, 80, 95};
    run.rule.precision = chance(engine, 50) ? 100 : precisions[pick(engine, 0, 3)];
    run.rule.histogram.bins = static_cast<uint32_t>(chance(engine, 70) ? 32 : pick(engine, 4, 16));
    sim::RunOptions options;
    // A third strict (rendezvous, a handle per request), a third with eager sends, a third as Open MPI
    // (eager sends, one handle for requests complete when made); half reuse handles.
    const int64_t library = pick(engine, 0, 2);
    options.eager_limit = library == 0 ? 0 : 4096;
    options.shared_complete_request = library == 2;
    options.reuse_request_handles = chance(engine, 50);
    const uint64_t scheduler_seed = engine();
    run.description = describe(*spec, run, options);
    try {
        auto result = sim::run([spec](Mpi& mpi) { return rank_program(mpi, spec); }, spec->ranks, scheduler_seed, options);
        run.records = std::move(result.ranks);
        run.steps = result.steps;
    } catch (const std::runtime_error& e) {
        throw std::runtime_error(std::string(e.what()) + " [" + run.description + "]");
    }
    return run;
}

ProgramRun run_token_ring(int32_t ranks, int laps, uint64_t seed)
{
    auto spec = std::make_shared<ProgramSpec>();
    spec->ranks = ranks;
    Block block;
    block.site = 100;
    Phase p;
    p.pattern = Pattern::token_ring;
    p.site = 1000;
    p.tag = 16;
    p.iterations = laps;
    p.bytes = 64;
    block.phases.push_back(p);
    spec->blocks.push_back(block);
    ProgramRun run;
    run.seed = seed;
    run.ranks = ranks;
    auto result = sim::run([spec](Mpi& mpi) { return rank_program(mpi, spec); }, ranks, seed);
    run.records = std::move(result.ranks);
    run.steps = result.steps;
    run.description = describe(*spec, run, sim::RunOptions{});
    return run;
}

Trace trace_of_run(const ProgramRun& run)
{
    std::vector<Sequence> sequences;
    for (Rank r = 0; r < run.ranks; ++r) {
        LoopFolder folder(run.rule, r);
        for (const auto& call : run.records[static_cast<size_t>(r)].calls) folder.append(call);
        Sequence seq = folder.finish();
        give_participant(seq, r);
        sequences.push_back(std::move(seq));
    }
    // radix_reduce.cpp: whether any rank cancels, then in round `step` ranks with that bit set hand
    // their trace to rank - step.
    const bool cancels = std::any_of(sequences.begin(), sequences.end(), cancels_requests);
    for (int32_t step = 1; step < run.ranks; step <<= 1) {
        for (int32_t parent = 0; parent + step < run.ranks; parent += 2 * step) {
            auto child = decode_sequence(encode_sequence(sequences[static_cast<size_t>(parent + step)]));
            if (!child.sequence) throw std::runtime_error("a rank's sequence does not decode: " + child.error);
            sequences[static_cast<size_t>(parent)] =
                merge_ranks(std::move(sequences[static_cast<size_t>(parent)]), std::move(*child.sequence), run.rule,
                            cancels);
        }
    }
    Trace trace;
    trace.header.ranks = run.ranks;
    trace.header.precision = run.rule.precision;
    trace.header.histogram = run.rule.histogram;
    trace.header.seed = mix64(run.seed);
    trace.body = std::move(sequences.front());
    auto decoded = decode_trace(encode_trace(trace, false));  // the encoding is what is checked, not zstd
    if (!decoded.trace) throw std::runtime_error("the trace does not decode: " + decoded.error);
    return std::move(*decoded.trace);
}

}  // namespace htrace::proofs
