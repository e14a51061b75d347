#pragma once
// File names in a trace: a name with the rank in it is stored as one pattern for all ranks
// ("ckpt_0017.dat" on rank 17 is "ckpt_{rank:04}.dat"), named in events by a key derived from the
// stored name alone, so that ranks that store the same name agree on its key without talking.
//
// Each rank derives a pattern from its own names, but a pattern only stands where the ranks' names
// show it: where at least two ranks derived it (ranks 0..3 writing ckpt_0000.dat .. ckpt_0003.dat).
// A pattern only one rank derived is a coincidence (rank 3 of a job reading /usr/lib/python3.11/...
// that every rank reads) and that rank stores its literal name instead. The job decides at
// MPI_Finalize, before the ranks' traces merge: a FileNameCensus of every rank's stored names,
// merged up a tree, says which patterns stand (a FileNameDecision), and each rank renames its
// events' keys where its own pattern does not.

#include "trace/event.hpp"
#include "trace/rank_list.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace htrace {

// The pattern of `name` as `rank` used it: the last run of digits whose value is the rank becomes
// "{rank}", or "{rank:0N}" where it was padded with zeros to N digits. Braces in the name are
// doubled. Made what the trace reader takes: valid UTF-8 (U+FFFD for each byte of the name that is
// not), at most limits::kMostNameBytes, N at most limits::kMostRankWidth.
std::string file_name_pattern(std::string_view name, Rank rank);

// `name` stored as itself, for every rank: braces doubled, no "{rank}".
std::string file_name_literal(std::string_view name);

// Whether a stored name has the rank in it (a "{rank}" or "{rank:0N}" field).
bool file_name_has_rank(std::string_view stored);

// The name `pattern` stands for on `rank`.
std::string file_name_for(std::string_view pattern, Rank rank);

// The key events name a stored name by: the same on every rank, small enough to cost few bytes.
int64_t file_name_key(std::string_view pattern);

// Which patterns stand, and what a rank stores for a name it derived a pattern from.
class FileNameDecision {
public:
    FileNameDecision() = default;
    explicit FileNameDecision(std::set<std::string> confirmed) : confirmed_(std::move(confirmed)) {}

    // What `rank` stores for the name it stored as `stored` (file_name_pattern's): `stored` where it
    // has no rank in it or where the pattern stands; else a pattern that stands and gives `rank` the
    // same name (rank 1000's ckpt_1000.dat, whose own pattern is ckpt_{rank}.dat, where ranks 0-999
    // confirmed ckpt_{rank:04}.dat); else the rank's literal name.
    std::string decide(std::string_view stored, Rank rank) const;

    // The patterns that stand: at least two ranks derived each.
    const std::set<std::string>& confirmed() const { return confirmed_; }

    std::vector<uint8_t> encode() const;
    static std::optional<FileNameDecision> decode(const std::vector<uint8_t>& bytes);

private:
    std::set<std::string> confirmed_;
};

// The names ranks stored (patterns, and names without the rank), each with who stored it: the lowest
// such rank and whether another did too. Ranks' censuses merge in any grouping and order into the
// job's, which is O(distinct names) whatever the rank count, and decides which patterns stand.
class FileNameCensus {
public:
    // `rank` stored `stored` (as file_name_pattern gives it).
    void add(const std::string& stored, Rank rank);
    // Another census, of other ranks (or of the same: a rank counts once).
    void merge(const FileNameCensus& other);

    // The patterns at least two ranks derived.
    FileNameDecision decide() const;
    // Every name the census's ranks store once `decision` is applied, by key: the header's file
    // names, when the census is the job's and `decision` its decide().
    std::map<int64_t, std::string> decided_names(const FileNameDecision& decision) const;

    std::vector<uint8_t> encode() const;
    static std::optional<FileNameCensus> decode(const std::vector<uint8_t>& bytes);

    bool operator==(const FileNameCensus&) const = default;

private:
    struct Storers {
        Rank lowest = 0;
        bool several = false;
        bool operator==(const Storers&) const = default;
    };
    std::map<std::string, Storers> names_;
};

// The keys `rank` must rename, old key to new, where `decision` changes what it stores for its
// names `mine` (by key, as it stored them).
std::map<int64_t, int64_t> renamed_file_name_keys(const std::map<int64_t, std::string>& mine, Rank rank,
                                                  const FileNameDecision& decision);

// Events' file_name values renamed by `renamed` (old key to new), loops included.
void rename_file_names(Sequence& seq, const std::map<int64_t, int64_t>& renamed);

}  // namespace htrace
