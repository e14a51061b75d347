#include "trace/file_names.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace htrace;

TEST_CASE("a file name with the rank in it is one pattern for all ranks, and gives each rank its name back")
{
    for (Rank rank : {0, 1, 7, 17, 123, 4095}) {
        CAPTURE(rank);
        const std::string padded = [&] {
            std::string digits = std::to_string(rank);
            return std::string(digits.size() < 4 ? 4 - digits.size() : 0, '0') + digits;
        }();
        const std::string names[] = {"out." + std::to_string(rank), "ckpt_" + padded + ".dat", "shared.dat",
                                     "run_2024/step_0/rank" + std::to_string(rank) + ".h5", "{odd}}name." +
                                     std::to_string(rank)};
        for (const auto& name : names) {
            CAPTURE(name);
            const std::string pattern = file_name_pattern(name, rank);
            CHECK(file_name_for(pattern, rank) == name);
        }
        CHECK(file_name_pattern("out." + std::to_string(rank), rank) == "out.{rank}");
        CHECK(file_name_pattern("shared.dat", rank) == "shared.dat");
        // Padding shows only where the rank has fewer digits than the name: 4095 in a 4-digit field
        // could be unpadded.
        CHECK(file_name_pattern("ckpt_" + padded + ".dat", rank) ==
              (rank < 1000 ? "ckpt_{rank:04}.dat" : "ckpt_{rank}.dat"));
    }
    // Only the last run of digits that spells the rank: a step number equal to it stays.
    CHECK(file_name_pattern("step_0/out.0", 0) == "step_0/out.{rank}");
    CHECK(file_name_for("step_0/out.{rank}", 5) == "step_0/out.5");
    CHECK(file_name_for("ckpt_{rank:04}.dat", 12345) == "ckpt_12345.dat");
    CHECK(file_name_key("a") != file_name_key("b"));
}

TEST_CASE("a literal name keeps its braces as the name's, and only a rank field makes a pattern")
{
    for (const std::string name : {"plain.dat", "{rank}.dat", "a{{b}}c", "}{rank:04}{", "out.3"}) {
        CAPTURE(name);
        const std::string literal = file_name_literal(name);
        CHECK_FALSE(file_name_has_rank(literal));
        for (Rank rank : {0, 3, 11}) CHECK(file_name_for(literal, rank) == name);
    }
    CHECK(file_name_has_rank("out.{rank}"));
    CHECK(file_name_has_rank("ckpt_{rank:04}.dat"));
    CHECK(file_name_has_rank(file_name_pattern("{rank}.3", 3)));
    CHECK_FALSE(file_name_has_rank(file_name_pattern("{rank}.3", 4)));
}

namespace {

// A job's file names as the tracer settles them: each rank stores its names as its own patterns,
// the ranks' censuses merge (over the tracer's binomial tree, or in `order`), and each rank renames
// what the decision changes. For each rank and name it opened: the key its events end with; and the
// header's names.
struct SettledNames {
    std::map<Rank, std::map<std::string, int64_t>> keys;
    std::map<int64_t, std::string> header;
    std::set<std::string> confirmed;
};

SettledNames settle(const std::map<Rank, std::vector<std::string>>& opened, const std::vector<Rank>& order = {})
{
    std::map<Rank, std::map<int64_t, std::string>> stored;
    std::map<Rank, FileNameCensus> census;
    for (const auto& [rank, names] : opened) {
        for (const auto& name : names) {
            const std::string pattern = file_name_pattern(name, rank);
            stored[rank].emplace(file_name_key(pattern), pattern);
        }
        for (const auto& [key, pattern] : stored[rank]) census[rank].add(pattern, rank);
    }
    FileNameCensus job;
    if (order.empty()) {
        // The binomial tree of the tracer: round k, ranks with bit k set hand theirs to rank - 2^k.
        const Rank size = opened.empty() ? 0 : opened.rbegin()->first + 1;
        for (Rank step = 1; step < size; step <<= 1) {
            for (Rank r = 0; r + step < size; r += 2 * step) {
                const auto encoded = census[r + step].encode();
                const auto decoded = FileNameCensus::decode(encoded);
                REQUIRE(decoded);
                census[r].merge(*decoded);
            }
        }
        job = census[0];
    } else {
        for (Rank r : order) job.merge(census[r]);
    }
    const auto decision = FileNameDecision::decode(job.decide().encode());
    REQUIRE(decision);
    SettledNames out;
    out.confirmed = decision->confirmed();
    out.header = job.decided_names(*decision);
    for (const auto& [rank, names] : opened) {
        const auto renamed = renamed_file_name_keys(stored[rank], rank, *decision);
        for (const auto& name : names) {
            const int64_t key = file_name_key(file_name_pattern(name, rank));
            const auto found = renamed.find(key);
            out.keys[rank][name] = found == renamed.end() ? key : found->second;
        }
    }
    return out;
}

// Every rank's events name, through the header, exactly the names it opened.
void check_every_rank_gets_its_names(const std::map<Rank, std::vector<std::string>>& opened,
                                     const SettledNames& settled)
{
    for (const auto& [rank, names] : opened) {
        for (const auto& name : names) {
            CAPTURE(rank);
            CAPTURE(name);
            const int64_t key = settled.keys.at(rank).at(name);
            REQUIRE(settled.header.contains(key));
            CHECK(file_name_for(settled.header.at(key), rank) == name);
        }
    }
    std::set<int64_t> used;
    for (const auto& [rank, keys] : settled.keys) {
        for (const auto& [name, key] : keys) used.insert(key);
    }
    std::set<int64_t> in_header;
    for (const auto& [key, name] : settled.header) in_header.insert(key);
    CHECK(used == in_header);  // the header names what the events name, nothing else
}

std::string padded(Rank rank, size_t width)
{
    std::string digits = std::to_string(rank);
    return std::string(digits.size() < width ? width - digits.size() : 0, '0') + digits;
}

}  // namespace

TEST_CASE("a name one rank's rank happens to spell is that rank's literal name, one name with the others'")
{
    // The issue: mpi4py on 4 ranks, every rank reads /usr/lib/python3.11/...; rank 3's own pattern
    // would be /usr/lib/python{rank}.11/...
    const std::string shared = "/usr/lib/python3.11/os.py";
    std::map<Rank, std::vector<std::string>> opened;
    for (Rank r = 0; r < 4; ++r) opened[r] = {shared, "out_" + std::to_string(r) + ".dat"};
    SettledNames settled = settle(opened);
    check_every_rank_gets_its_names(opened, settled);
    for (Rank r = 0; r < 4; ++r) {
        CAPTURE(r);
        CHECK(settled.keys[r][shared] == file_name_key(shared));
        CHECK(settled.keys[r]["out_" + std::to_string(r) + ".dat"] == file_name_key("out_{rank}.dat"));
    }
    CHECK(settled.header.at(file_name_key(shared)) == shared);
    CHECK(settled.confirmed == std::set<std::string>{"out_{rank}.dat"});
    CHECK(settled.header.size() == 2);
}

TEST_CASE("checkpoint files of every rank are one pattern, padded or not")
{
    for (Rank size : {2, 4, 5, 16}) {
        CAPTURE(size);
        std::map<Rank, std::vector<std::string>> opened;
        for (Rank r = 0; r < size; ++r) {
            opened[r] = {"ckpt_" + padded(r, 4) + ".dat", "out." + std::to_string(r), "shared.dat"};
        }
        SettledNames settled = settle(opened);
        check_every_rank_gets_its_names(opened, settled);
        CHECK(settled.header ==
              std::map<int64_t, std::string>{{file_name_key("ckpt_{rank:04}.dat"), "ckpt_{rank:04}.dat"},
                                             {file_name_key("out.{rank}"), "out.{rank}"},
                                             {file_name_key("shared.dat"), "shared.dat"}});
    }
}

TEST_CASE("a job of one rank confirms no pattern")
{
    const std::map<Rank, std::vector<std::string>> opened{{0, {"out.0", "ckpt_0000.dat"}}};
    SettledNames settled = settle(opened);
    check_every_rank_gets_its_names(opened, settled);
    CHECK(settled.confirmed.empty());
    CHECK(settled.header == std::map<int64_t, std::string>{{file_name_key("out.0"), "out.0"},
                                                            {file_name_key("ckpt_0000.dat"), "ckpt_0000.dat"}});
}

TEST_CASE("a file only one rank opens keeps its literal name, even with its rank in it")
{
    std::map<Rank, std::vector<std::string>> opened;
    for (Rank r = 0; r < 8; ++r) opened[r] = {"input.dat"};
    opened[3].push_back("out.3");
    SettledNames settled = settle(opened);
    check_every_rank_gets_its_names(opened, settled);
    CHECK(settled.keys[3]["out.3"] == file_name_key("out.3"));
    CHECK(settled.header.at(file_name_key("out.3")) == "out.3");
}

TEST_CASE("two ranks whose ranks spell a shared name differently both keep it literal")
{
    // Ranks 3 and 11 of 16 read python3.11: python{rank}.11 and python3.{rank}, each derived once.
    const std::string shared = "/usr/lib/python3.11/site.py";
    std::map<Rank, std::vector<std::string>> opened;
    for (Rank r = 0; r < 16; ++r) opened[r] = {shared};
    SettledNames settled = settle(opened);
    check_every_rank_gets_its_names(opened, settled);
    CHECK(settled.confirmed.empty());
    for (Rank r = 0; r < 16; ++r) CHECK(settled.keys[r][shared] == file_name_key(shared));
    CHECK(settled.header.size() == 1);
}

TEST_CASE("a shared name whose padded digits spell one rank is literal")
{
    // Rank 2 reads part_0002.dat as every rank does: its part_{rank:04}.dat stands for it alone.
    const std::string shared = "lib3.11/part_0002.dat";
    std::map<Rank, std::vector<std::string>> opened;
    for (Rank r = 0; r < 12; ++r) opened[r] = {shared, "out_" + std::to_string(r) + ".dat"};
    SettledNames settled = settle(opened);
    check_every_rank_gets_its_names(opened, settled);
    for (Rank r = 0; r < 12; ++r) CHECK(settled.keys[r][shared] == file_name_key(shared));
    CHECK(settled.confirmed == std::set<std::string>{"out_{rank}.dat"});
}

TEST_CASE("a rank whose own pattern stands alone takes the pattern the others confirm where it gives its name")
{
    // 1001 ranks writing ckpt_%04d.dat: rank 1000 cannot show padding, and alone derives
    // ckpt_{rank}.dat; ranks 0-999 confirm ckpt_{rank:04}.dat, which gives it ckpt_1000.dat.
    std::map<Rank, std::vector<std::string>> opened;
    for (Rank r : {0, 1, 2, 1000}) opened[r] = {"ckpt_" + padded(r, 4) + ".dat"};
    SettledNames settled = settle(opened);
    check_every_rank_gets_its_names(opened, settled);
    CHECK(settled.keys[1000]["ckpt_1000.dat"] == file_name_key("ckpt_{rank:04}.dat"));
    CHECK(settled.header.size() == 1);
    // Ranks 1000-9999 with ckpt_{rank}.dat of their own, two or more of them, keep theirs.
    opened[1001] = {"ckpt_1001.dat"};
    settled = settle(opened);
    check_every_rank_gets_its_names(opened, settled);
    CHECK(settled.keys[1000]["ckpt_1000.dat"] == file_name_key("ckpt_{rank}.dat"));
    CHECK(settled.header.size() == 2);
    // The rank in a directory and in the name: rank 3's last run is its name's, the others' pattern
    // is the directory's.
    opened.clear();
    for (Rank r = 0; r < 4; ++r) opened[r] = {"d" + std::to_string(r) + "/x3"};
    settled = settle(opened);
    check_every_rank_gets_its_names(opened, settled);
    CHECK(settled.confirmed == std::set<std::string>{"d{rank}/x3"});
    for (Rank r = 0; r < 4; ++r) CHECK(settled.keys[r]["d" + std::to_string(r) + "/x3"] == file_name_key("d{rank}/x3"));
}

TEST_CASE("the job's decision does not depend on how the ranks' censuses are grouped")
{
    std::mt19937 random(12345);
    for (int trial = 0; trial < 50; ++trial) {
        const Rank size = 1 + static_cast<Rank>(random() % 24);
        CAPTURE(size);
        std::map<Rank, std::vector<std::string>> opened;
        const std::vector<std::string> shared = {"lib3.11/part_0002.dat", "a1/b12/c7", "data_5.h5"};
        for (Rank r = 0; r < size; ++r) {
            for (const auto& name : shared) {
                if (random() % 2) opened[r].push_back(name);
            }
            if (random() % 3) opened[r].push_back("out_" + std::to_string(r) + ".dat");
            if (random() % 4 == 0) opened[r].push_back("log." + padded(r, 3));
            opened[r].push_back("mine_" + std::to_string(r) + "_" + std::to_string(random() % 3));
        }
        const SettledNames tree = settle(opened);
        check_every_rank_gets_its_names(opened, tree);
        std::vector<Rank> order;
        for (Rank r = 0; r < size; ++r) order.push_back(r);
        std::shuffle(order.begin(), order.end(), random);
        const SettledNames shuffled = settle(opened, order);
        CHECK(shuffled.keys == tree.keys);
        CHECK(shuffled.header == tree.header);
        // A name every rank that opened it opened alike is literal.
        for (const auto& name : shared) {
            for (const auto& [rank, keys] : tree.keys) {
                if (keys.contains(name)) CHECK(keys.at(name) == file_name_key(name));
            }
        }
    }
}

TEST_CASE("a census or decision that does not decode is refused, not read")
{
    FileNameCensus census;
    census.add("out.{rank}", 3);
    census.add("out.{rank}", 5);
    census.add("shared.dat", 0);
    const auto bytes = census.encode();
    const auto back = FileNameCensus::decode(bytes);
    REQUIRE(back);
    CHECK(*back == census);
    for (size_t cut = 0; cut < bytes.size(); ++cut) {
        CAPTURE(cut);
        const std::vector<uint8_t> cut_short(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(cut));
        CHECK_FALSE(FileNameCensus::decode(cut_short));
    }
    const auto decision = census.decide();
    CHECK(decision.confirmed() == std::set<std::string>{"out.{rank}"});
    const auto decision_bytes = decision.encode();
    CHECK_FALSE(FileNameDecision::decode(std::vector<uint8_t>(decision_bytes.begin(), decision_bytes.end() - 1)));
}

TEST_CASE("renaming a rank's file names reaches events inside loops, and nothing else")
{
    const auto open = [](int64_t key) {
        Event e;
        e.op = Op::File_open;
        e.signature = 7;
        e.params = {{Role::comm, Value(int64_t{0})}, {Role::file_name, Value(key)}, {Role::file, Value(key)}};
        return e;
    };
    Sequence seq{Node{open(1)}, Node{Loop{Value(int64_t{4}), Sequence{Node{open(2)}, Node{open(3)}}}}};
    rename_file_names(seq, {{1, 10}, {3, 30}});
    CHECK(seq[0].event().find(Role::file_name)->exact() == 10);
    CHECK(seq[0].event().find(Role::file)->exact() == 1);
    const Sequence& body = seq[1].loop().body;
    CHECK(body[0].event().find(Role::file_name)->exact() == 2);
    CHECK(body[1].event().find(Role::file_name)->exact() == 30);
    CHECK(body[1].event().find(Role::file)->exact() == 3);
}
