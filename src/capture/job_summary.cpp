#include "capture/job_summary.hpp"

#include "merge/radix_reduce.hpp"
#include "trace/file_names.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
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

    void merge(const Subtree& other)
    {
        census.merge(other.census);
        slowest_seconds = std::max(slowest_seconds, other.slowest_seconds);
        cancels_requests = cancels_requests || other.cancels_requests;
        for (size_t i = 0; i < counts.size() && i < other.counts.size(); ++i) counts[i] += other.counts[i];
        topologies.insert(other.topologies.begin(), other.topologies.end());
    }
};

template <typename T>
void put(std::vector<uint8_t>& out, const T& value)
{
    const auto* bytes = reinterpret_cast<const uint8_t*>(&value);
    out.insert(out.end(), bytes, bytes + sizeof value);
}

void put_text(std::vector<uint8_t>& out, const std::string& text)
{
    put(out, uint64_t{text.size()});
    out.insert(out.end(), text.begin(), text.end());
}

// Our own bytes over our own communicator, between builds of one library: a short or damaged
// message is a bug, refused rather than read past its end.
class Reader {
public:
    explicit Reader(const std::vector<uint8_t>& bytes) : bytes_(bytes) {}
    template <typename T>
    bool get(T& value)
    {
        if (bytes_.size() - at_ < sizeof value) return false;
        std::memcpy(&value, bytes_.data() + at_, sizeof value);
        at_ += sizeof value;
        return true;
    }
    bool get_bytes(std::vector<uint8_t>& out)
    {
        uint64_t n = 0;
        if (!get(n) || bytes_.size() - at_ < n) return false;
        out.assign(bytes_.begin() + long(at_), bytes_.begin() + long(at_ + n));
        at_ += n;
        return true;
    }
    bool get_text(std::string& out)
    {
        std::vector<uint8_t> bytes;
        if (!get_bytes(bytes)) return false;
        out.assign(bytes.begin(), bytes.end());
        return true;
    }
    bool done() const { return at_ == bytes_.size(); }

private:
    const std::vector<uint8_t>& bytes_;
    size_t at_ = 0;
};

std::vector<uint8_t> encode(const Subtree& summary)
{
    std::vector<uint8_t> out;
    const std::vector<uint8_t> census = summary.census.encode();
    put(out, uint64_t{census.size()});
    out.insert(out.end(), census.begin(), census.end());
    put(out, summary.slowest_seconds);
    put(out, uint8_t{summary.cancels_requests});
    put(out, uint64_t{summary.counts.size()});
    for (const uint64_t count : summary.counts) put(out, count);
    put(out, uint64_t{summary.topologies.size()});
    for (const auto& [key, name] : summary.topologies) {
        put(out, key);
        put_text(out, name);
    }
    return out;
}

std::optional<Subtree> decode(const std::vector<uint8_t>& bytes)
{
    Subtree out;
    Reader in(bytes);
    std::vector<uint8_t> census;
    uint8_t cancels = 0;
    uint64_t counts = 0;
    if (!in.get_bytes(census) || !in.get(out.slowest_seconds) || !in.get(cancels) || !in.get(counts)) return std::nullopt;
    auto names = FileNameCensus::decode(census);
    if (!names || counts > bytes.size()) return std::nullopt;
    out.census = std::move(*names);
    out.cancels_requests = cancels != 0;
    out.counts.resize(counts);
    for (uint64_t& count : out.counts) {
        if (!in.get(count)) return std::nullopt;
    }
    uint64_t topologies = 0;
    if (!in.get(topologies)) return std::nullopt;
    for (uint64_t i = 0; i < topologies; ++i) {
        int64_t key = 0;
        std::string name;
        if (!in.get(key) || !in.get_text(name)) return std::nullopt;
        out.topologies.emplace(key, std::move(name));
    }
    if (!in.done()) return std::nullopt;
    return out;
}

// The summary of every rank at rank 0 of `comm` (elsewhere: of its subtree), over the same binomial
// tree as the merge: ranks with bit k set hand theirs to rank - 2^k in round k.
Subtree summarize_over_tree(Subtree summary, MPI_Comm comm)
{
    int rank = 0;
    int size = 1;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    for (int step = 1; step < size; step <<= 1) {
        if (rank & step) {
            send_bytes(encode(summary), rank - step, comm, kSummaryTags);
            break;
        }
        if (rank + step < size) {
            const auto theirs = decode(receive_bytes(rank + step, comm, kSummaryTags));
            // Our own bytes over our own communicator: damage is a bug. Say so and go on (the
            // application must finish); the header then lacks that subtree's names and counts.
            if (theirs) {
                summary.merge(*theirs);
            } else {
                std::fprintf(stderr, "h-trace: the end-of-run summary of rank %d is unreadable\n", rank + step);
            }
        }
    }
    return summary;
}

}  // namespace

JobSummary summarize_job(const RankSummary& mine, int rank, MPI_Comm comm)
{
    Subtree subtree;
    for (const auto& [key, stored] : mine.file_names) subtree.census.add(stored, rank);
    subtree.slowest_seconds = mine.traced_seconds;
    subtree.cancels_requests = mine.cancels_requests;
    subtree.counts = mine.counts;
    subtree.topologies = mine.topologies;
    subtree = summarize_over_tree(std::move(subtree), comm);

    int comm_rank = 0;
    PMPI_Comm_rank(comm, &comm_rank);
    // Back down: the decision on names, the slowest time, whether any rank cancels.
    std::vector<uint8_t> verdict;
    if (comm_rank == 0) {
        verdict = subtree.census.decide().encode();
        put(verdict, subtree.slowest_seconds);
        put(verdict, uint8_t{subtree.cancels_requests});
    }
    broadcast_bytes(verdict, comm);
    JobSummary out;
    out.slowest_seconds = mine.traced_seconds;
    out.cancels_requests = mine.cancels_requests;
    FileNameDecision decision;
    constexpr size_t kTail = sizeof(double) + 1;
    if (verdict.size() >= kTail) {
        const size_t names = verdict.size() - kTail;
        std::memcpy(&out.slowest_seconds, verdict.data() + names, sizeof(double));
        out.cancels_requests = verdict[verdict.size() - 1] != 0;
        verdict.resize(names);
        decision = FileNameDecision::decode(verdict).value_or(FileNameDecision{});
    }
    out.file_names.renamed = renamed_file_name_keys(mine.file_names, rank, decision);
    if (comm_rank == 0) {
        out.file_names.job_names = subtree.census.decided_names(decision);
        out.counts = std::move(subtree.counts);
        out.topologies = std::move(subtree.topologies);
    }
    return out;
}

}  // namespace htrace::capture
