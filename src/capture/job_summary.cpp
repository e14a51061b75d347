#include "capture/job_summary.hpp"

#include "merge/radix_reduce.hpp"
#include "trace/byte_message.hpp"
#include "trace/file_names.hpp"
#include "trace/rank_times.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdio>
#include <optional>

namespace htrace::capture {
namespace {

// The summary's messages on the tracer's own communicator, apart from the merge's (71xx).
constexpr ByteTags kSummaryTags{7201, 7202};

// A subtree's summary as it travels: the file-name census, then the numbers, then the topologies.
struct Subtree {
    FileNameCensus census;
    double slowest_seconds = 0;
    bool cancels_requests = false;
    std::vector<uint64_t> counts;
    std::map<int64_t, std::string> topologies;
    uint64_t ranks = 1;
    std::optional<RankTimes> rank_times;
    std::map<uint64_t, SiteLocation> locations;

    void merge(const Subtree& other)
    {
        rank_times = combine(rank_times, ranks, other.rank_times, other.ranks);
        ranks += other.ranks;
        census.merge(other.census);
        slowest_seconds = std::max(slowest_seconds, other.slowest_seconds);
        cancels_requests = cancels_requests || other.cancels_requests;
        for (size_t i = 0; i < counts.size() && i < other.counts.size(); ++i) counts[i] += other.counts[i];
        topologies.insert(other.topologies.begin(), other.topologies.end());
        locations.insert(other.locations.begin(), other.locations.end());
    }
};

void put_spread(std::vector<uint8_t>& out, const RankSpread& s)
{
    for (const double value : {s.min, s.mean, s.max}) put_u64(out, std::bit_cast<uint64_t>(value));
    put_u64(out, static_cast<uint64_t>(s.min_rank));
    put_u64(out, static_cast<uint64_t>(s.max_rank));
}

bool read_spread(ByteReader& in, RankSpread& s)
{
    for (double* value : {&s.min, &s.mean, &s.max}) {
        const auto bits = in.u64();
        if (!bits) return false;
        *value = std::bit_cast<double>(*bits);
    }
    const auto min_rank = in.u64();
    const auto max_rank = in.u64();
    if (!min_rank || !max_rank) return false;
    s.min_rank = static_cast<Rank>(*min_rank);
    s.max_rank = static_cast<Rank>(*max_rank);
    return true;
}

// As it travels: the census's bytes, the slowest time, the cancels flag, the counts, the topologies,
// the ranks and their times, if every rank measured them, and the call sites' locations
// (trace/byte_message.hpp).
std::vector<uint8_t> encode(const Subtree& summary)
{
    std::vector<uint8_t> out;
    const std::vector<uint8_t> census = summary.census.encode();
    put_u64(out, census.size());
    out.insert(out.end(), census.begin(), census.end());
    put_u64(out, std::bit_cast<uint64_t>(summary.slowest_seconds));
    put_u8(out, summary.cancels_requests ? 1 : 0);
    put_u64(out, summary.counts.size());
    for (const uint64_t count : summary.counts) put_u64(out, count);
    put_u64(out, summary.topologies.size());
    for (const auto& [key, name] : summary.topologies) {
        put_u64(out, static_cast<uint64_t>(key));
        put_text(out, name);
    }
    put_u64(out, summary.ranks);
    put_u8(out, summary.rank_times ? 1 : 0);
    if (summary.rank_times) {
        for (const RankSpreadField& field : kRankSpreadFields) put_spread(out, (*summary.rank_times).*field.member);
        put_u8(out, summary.rank_times->tracer ? 1 : 0);
        if (summary.rank_times->tracer) put_spread(out, *summary.rank_times->tracer);
    }
    put_u64(out, summary.locations.size());
    for (const auto& [signature, location] : summary.locations) {
        put_u64(out, signature);
        put_text(out, location.module);
        put_u64(out, location.address);
    }
    return out;
}

std::optional<RankTimes> decode_rank_times(ByteReader& in)
{
    RankTimes times;
    for (const RankSpreadField& field : kRankSpreadFields) {
        if (!read_spread(in, times.*field.member)) return std::nullopt;
    }
    const auto has_tracer = in.u8();
    if (!has_tracer) return std::nullopt;
    if (*has_tracer) {
        times.tracer.emplace();
        if (!read_spread(in, *times.tracer)) return std::nullopt;
    }
    return times;
}

std::optional<Subtree> decode(const std::vector<uint8_t>& bytes)
{
    ByteReader in(bytes);
    const auto census_size = in.u64();
    const auto census = census_size ? in.bytes(*census_size) : std::nullopt;
    auto names = census ? FileNameCensus::decode(*census) : std::nullopt;
    const auto slowest = in.u64();
    const auto cancels = in.u8();
    const auto counts = in.u64();
    if (!names || !slowest || !cancels || !counts || *counts > bytes.size()) return std::nullopt;
    Subtree out;
    out.census = std::move(*names);
    out.slowest_seconds = std::bit_cast<double>(*slowest);
    out.cancels_requests = *cancels != 0;
    for (uint64_t i = 0; i < *counts; ++i) {
        const auto count = in.u64();
        if (!count) return std::nullopt;
        out.counts.push_back(*count);
    }
    const auto topologies = in.u64();
    if (!topologies) return std::nullopt;
    for (uint64_t i = 0; i < *topologies; ++i) {
        const auto key = in.u64();
        auto name = in.text();
        if (!key || !name) return std::nullopt;
        out.topologies.emplace(static_cast<int64_t>(*key), std::move(*name));
    }
    const auto ranks = in.u64();
    const auto timed = in.u8();
    if (!ranks || !timed) return std::nullopt;
    out.ranks = *ranks;
    if (*timed) {
        out.rank_times = decode_rank_times(in);
        if (!out.rank_times) return std::nullopt;
    }
    const auto locations = in.u64();
    if (!locations) return std::nullopt;
    for (uint64_t i = 0; i < *locations; ++i) {
        const auto signature = in.u64();
        auto module = in.text();
        const auto address = in.u64();
        if (!signature || !module || !address) return std::nullopt;
        out.locations.emplace(*signature, SiteLocation{std::move(*module), *address});
    }
    if (!in.done()) return std::nullopt;
    return out;
}

// The summary of every rank at rank 0 (elsewhere: of its subtree), up the merge's tree.
Subtree summarize_over_tree(Subtree summary, const MergeTree& tree)
{
    climb_tree(
        tree, kSummaryTags, [&] { return encode(summary); },
        [&](const std::vector<uint8_t>& bytes, int child) {
            // Our own bytes over our own communicator: damage is a bug. Say so and go on (the
            // application must finish); the header then lacks that subtree's names and counts.
            if (const auto theirs = decode(bytes)) {
                summary.merge(*theirs);
            } else {
                std::fprintf(stderr, "h-trace: the end-of-run summary of rank %d is unreadable\n", child);
            }
        });
    return summary;
}

}  // namespace

JobSummary summarize_job(const RankSummary& mine, int rank, const MergeTree& tree)
{
    Subtree subtree;
    for (const auto& [key, stored] : mine.file_names) subtree.census.add(stored, rank);
    subtree.slowest_seconds = mine.traced_seconds;
    subtree.cancels_requests = mine.cancels_requests;
    subtree.counts = mine.counts;
    subtree.topologies = mine.topologies;
    subtree.rank_times = mine.rank_times;
    subtree.locations = mine.locations;
    subtree = summarize_over_tree(std::move(subtree), tree);

    const MPI_Comm comm = tree.all;
    int comm_rank = 0;
    PMPI_Comm_rank(comm, &comm_rank);
    // Back down: the slowest time, whether any rank cancels, the decision on names.
    std::vector<uint8_t> verdict;
    if (comm_rank == 0) {
        put_u64(verdict, std::bit_cast<uint64_t>(subtree.slowest_seconds));
        put_u8(verdict, subtree.cancels_requests ? 1 : 0);
        const std::vector<uint8_t> decided = subtree.census.decide().encode();
        verdict.insert(verdict.end(), decided.begin(), decided.end());
    }
    broadcast_bytes(verdict, comm);
    JobSummary out;
    ByteReader in(verdict);
    const auto slowest = in.u64();
    const auto cancels = in.u8();
    out.slowest_seconds = slowest ? std::bit_cast<double>(*slowest) : mine.traced_seconds;
    out.cancels_requests = cancels ? *cancels != 0 : mine.cancels_requests;
    const FileNameDecision decision = FileNameDecision::decode(in.rest()).value_or(FileNameDecision{});
    out.file_names.renamed = renamed_file_name_keys(mine.file_names, rank, decision);
    if (comm_rank == 0) {
        out.file_names.job_names = subtree.census.decided_names(decision);
        out.counts = std::move(subtree.counts);
        out.topologies = std::move(subtree.topologies);
        out.rank_times = subtree.rank_times;
        out.locations = std::move(subtree.locations);
    }
    return out;
}

}  // namespace htrace::capture
