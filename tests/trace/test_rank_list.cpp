#include "trace/rank_list.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>

using htrace::Rank;
using htrace::RankList;

namespace {

std::vector<Rank> range(Rank first, Rank last, Rank stride = 1)
{
    std::vector<Rank> out;
    for (Rank r = first; r <= last; r += stride) out.push_back(r);
    return out;
}

// Up to `most` distinct ranks drawn from 0 to a random bound up to `widest`, ascending.
std::vector<Rank> random_ranks(std::mt19937& rng, int most, int widest)
{
    std::set<Rank> chosen;
    const int n = std::uniform_int_distribution<int>(0, most)(rng);
    const int span = std::uniform_int_distribution<int>(1, widest)(rng);
    for (int i = 0; i < n; ++i) chosen.insert(std::uniform_int_distribution<Rank>(0, span)(rng));
    return {chosen.begin(), chosen.end()};
}

}  // namespace

TEST_CASE("every rank of an SPMD job compresses to one run whatever the job size")
{
    for (Rank n : {4, 64, 4096, 100000}) {
        CAPTURE(n);
        const RankList all = RankList::from_sorted(range(0, n - 1));
        CHECK(all.runs().size() == 1);
        CHECK(all.size() == n);
        CHECK(all.to_string() == "0-" + std::to_string(n - 1));
    }
}

TEST_CASE("a column of a 2-D grid and the grid without its last column are one run each")
{
    const RankList column = RankList::from_sorted(range(7, 63, 8));
    CHECK(column.runs().size() == 1);
    CHECK(column.to_string() == "7-63:8");

    std::vector<Rank> interior;
    for (Rank r = 0; r < 64; ++r) {
        if (r % 8 != 7) interior.push_back(r);
    }
    const RankList rest = RankList::from_sorted(interior);
    CHECK(rest.runs().size() == 1);
    CHECK(rest.to_string() == "0-6^8:8");
    CHECK(rest.expand() == interior);
}

TEST_CASE("compression loses no rank and invents none, for random sets")
{
    std::mt19937 rng(12345);
    for (int trial = 0; trial < 500; ++trial) {
        const std::vector<Rank> ranks = random_ranks(rng, 80, 300);
        const RankList list = RankList::from_sorted(ranks);
        CAPTURE(list.to_string());
        CHECK(list.expand() == ranks);
        CHECK(list.size() == static_cast<int64_t>(ranks.size()));
        for (Rank r = -2; r <= 302; ++r) CHECK(list.contains(r) == std::binary_search(ranks.begin(), ranks.end(), r));
        auto parsed = RankList::parse(list.to_string());
        REQUIRE(parsed.has_value());
        CHECK(*parsed == list);
    }
}

TEST_CASE("ranks packed straight from a sorted list read back as those ranks, in the list's own bytes")
{
    std::mt19937 rng(2027);
    for (int trial = 0; trial < 500; ++trial) {
        const std::vector<Rank> ranks = random_ranks(rng, 40, 200);
        std::vector<uint8_t> packed{0xee};  // something before: pack_sorted appends
        RankList::pack_sorted(ranks, packed);
        REQUIRE(packed.front() == 0xee);
        htrace::Unpacker in(std::span<const uint8_t>(packed).subspan(1));
        const RankList read = RankList::unpack(in);
        CHECK(in.at_end());
        CHECK(read.expand() == ranks);
        CHECK(read == RankList::from_sorted(ranks));
    }
}

TEST_CASE("uniting two rank lists gives the set union")
{
    std::mt19937 rng(777);
    for (int trial = 0; trial < 200; ++trial) {
        std::set<Rank> a;
        std::set<Rank> b;
        for (int i = 0; i < 30; ++i) {
            a.insert(std::uniform_int_distribution<Rank>(0, 100)(rng));
            b.insert(std::uniform_int_distribution<Rank>(0, 100)(rng));
        }
        std::set<Rank> both = a;
        both.insert(b.begin(), b.end());
        const RankList united = RankList::from_sorted({a.begin(), a.end()}).unite(RankList::from_sorted({b.begin(), b.end()}));
        CHECK(united.expand() == std::vector<Rank>(both.begin(), both.end()));
    }
}

TEST_CASE("rank list text that is not a rank list is refused")
{
    for (const char* bad : {"x", "1-", "5-3", "0-6:4", "0-6^", "1,,2", "0-3^2"}) {
        CAPTURE(bad);
        CHECK_FALSE(RankList::parse(bad).has_value());
    }
    CHECK(RankList::parse("")->empty());
}

TEST_CASE("a rank's index in a list is its position among the list's ranks in ascending order")
{
    for (const char* text : {"0-6^8:8,7-63:8", "3", "1-15:2,16-20", "0-3^4:8^2:100"}) {
        CAPTURE(text);
        const RankList list = *RankList::parse(text);
        const std::vector<Rank> ranks = list.expand();
        for (size_t i = 0; i < ranks.size(); ++i) CHECK(list.index_of(ranks[i]) == int64_t(i));
        for (Rank r = -1; r < 300; ++r) {
            if (!std::binary_search(ranks.begin(), ranks.end(), r)) CHECK_FALSE(list.index_of(r).has_value());
        }
    }
}

TEST_CASE("a rank list held in place or in an allocation reads the same, copied or moved")
{
    // One run fits in place (at most 7 packed bytes); many runs, or ranks far from 0, take an allocation.
    for (const char* text : {"", "3", "0-63", "8-43:35,54", "0-6^8:8,7-63:8", "1,5,9000,70000,2000000,3,8"}) {
        CAPTURE(text);
        const RankList list = *RankList::parse(text);
        RankList copy = list;
        CHECK(copy == list);
        CHECK(copy.to_string() == list.to_string());
        RankList moved = std::move(copy);
        CHECK(moved == list);
        copy = moved;  // a moved-from list takes a value again
        CHECK(copy == list);
        CHECK(RankList::from_runs(list.runs()) == list);
        std::vector<uint8_t> packed;
        list.pack(packed);
        htrace::Unpacker in(packed);
        CHECK(RankList::unpack(in) == list);
        CHECK(in.at_end());
        htrace::Unpacker sized(packed);
        CHECK(RankList::size_of_packed(sized) == list.size());
        CHECK(list.first() == (list.empty() ? 0 : list.expand().front()));
    }
}
