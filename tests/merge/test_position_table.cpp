#include "merge/position_table.hpp"

#include <doctest/doctest.h>

#include <random>
#include <unordered_map>

using htrace::PositionTable;

TEST_CASE("position table: finds what an unordered_map holds, through growth and erasure")
{
    // Few distinct keys, some sharing a home slot in every table size (equal high bits after the
    // multiply are likely among 300 keys), so that lookups run past entries and erasures shift.
    std::mt19937_64 random(27);
    std::vector<uint64_t> keys(300);
    for (auto& k : keys) k = random();
    keys[1] = keys[0] ^ 1;  // neighbours in the low bits
    PositionTable table;
    std::unordered_map<uint64_t, int64_t> truth;
    for (int step = 0; step < 200000; ++step) {
        const uint64_t key = keys[random() % keys.size()];
        const auto known = truth.find(key);
        const int64_t before = known == truth.end() ? -1 : known->second;
        if (random() % 3 == 0) {
            table.erase(key);
            truth.erase(key);
        } else {
            const int64_t position = static_cast<int64_t>(random() % 1000000);
            REQUIRE(table.exchange(key, position) == before);
            truth[key] = position;
        }
        if (step % 1000 == 0) {
            REQUIRE(table.size() == truth.size());
            for (uint64_t k : keys) {
                const auto t = truth.find(k);
                REQUIRE(table.find(k) == (t == truth.end() ? -1 : t->second));
            }
        }
    }
    table.clear();
    CHECK(table.size() == 0);
    CHECK(table.find(keys[0]) == -1);
    CHECK(table.exchange(keys[0], 5) == -1);
    CHECK(table.find(keys[0]) == 5);
}
