#include "trace/completion_set.hpp"

#include <doctest/doctest.h>

#include <vector>

using namespace htrace;

namespace {

using Positions = std::vector<uint32_t>;

Positions decoded(const std::vector<int64_t>& values, uint32_t pending = 1u << 20)
{
    return decode_completed_set(values, pending).value_or(Positions{99999});
}

// What a completion of `handles` names, as positions.
template <typename Handle>
Positions completing(PendingRequests<Handle>& pending, const std::vector<Handle>& handles)
{
    const auto positions = pending.complete(handles);
    return Positions(positions.begin(), positions.end());
}

}  // namespace

TEST_CASE("a completed set round-trips through its values, whatever its shape up to 7112 positions")
{
    Positions every_other;
    for (uint32_t p = 1; p < 400; p += 2) every_other.push_back(p);
    Positions scattered{0, 3, 55, 56, 111, 200, 7000, 7111};
    const std::vector<Positions> sets = {{}, {0}, {3}, {0, 1, 2, 3, 4, 5, 6, 7}, {1, 3, 5}, {0, 55}, {56}, {0, 62},
                                         {70, 72, 74, 76}, {100, 101, 102}, {5, 70, 135}, every_other, scattered};
    for (const auto& set : sets) {
        CAPTURE(set);
        const auto values = encode_completed_set(set);
        REQUIRE(std::find(values.begin(), values.end(), kUnknownCompletedSet) == values.end());
        CHECK(decoded(values) == set);
    }
}

TEST_CASE("one position is a small value; other small sets are one bit mask; an evenly spaced run is one value; "
          "beyond 7112 scattered is unknown")
{
    constexpr int64_t first_chunk = int64_t{1} << 56;
    CHECK(encode_completed_set(Positions{}) == std::vector<int64_t>{0});
    CHECK(encode_completed_set(Positions{0}) == std::vector<int64_t>{1});
    CHECK(encode_completed_set(Positions{41}) == std::vector<int64_t>{42});
    CHECK(encode_completed_set(Positions{5000}) == std::vector<int64_t>{5001});
    CHECK(encode_completed_set(Positions{0, 1, 2, 3}) == std::vector<int64_t>{first_chunk | 15});
    CHECK(encode_completed_set(Positions{1, 57, 60}) ==
          std::vector<int64_t>{first_chunk | 2, (first_chunk << 1) | 2 | 16});
    Positions run;
    for (uint32_t p = 0; p < 1000; ++p) run.push_back(p);
    CHECK(encode_completed_set(run).size() == 1);
    CHECK(encode_completed_set(Positions{0, 1, 7112}) == std::vector<int64_t>{kUnknownCompletedSet});
    CHECK_FALSE(decode_completed_set(std::vector<int64_t>{kUnknownCompletedSet}, 1u << 20).has_value());
}

TEST_CASE("any value decodes to at most the limit of positions")
{
    CHECK(decode_completed_set(std::vector<int64_t>{-((int64_t{5} << 40) | (int64_t{2} << 32) | 1000000)}, 10)->size() ==
          10);
    CHECK(decode_completed_set(std::vector<int64_t>{-1234567}, 4)->size() <= 4);
    CHECK(decode_completed_set(std::vector<int64_t>{0x3fffffffffffffff}, 3)->size() == 3);
}

TEST_CASE("as the oldest, a set's value names as many requests, the oldest pending")
{
    Positions run;
    for (uint32_t p = 60; p < 160; p += 4) run.push_back(p);
    const std::vector<Positions> sets = {{0}, {41}, {1, 3, 5}, {0, 55}, run};
    constexpr uint32_t pending = 200;
    for (const auto& set : sets) {
        CAPTURE(set);
        const auto values = encode_completed_set(set);
        REQUIRE(values.size() == 1);
        const std::vector<int64_t> as_oldest{completed_set_as_oldest(values.front())};
        const auto oldest = decode_completed_set(as_oldest, pending);
        REQUIRE(oldest.has_value());
        CHECK(oldest->size() == set.size());
        CHECK(oldest->front() == pending - set.size());
        CHECK(oldest->back() == pending - 1);
    }
    // The oldest k stay as they are; nothing and an unknown set too.
    for (int64_t kept : {int64_t{-7}, int64_t{0}, kUnknownCompletedSet}) CHECK(completed_set_as_oldest(kept) == kept);
}

TEST_CASE("a draw between the values of single positions names one position")
{
    // A Waitany's completions at positions 3 and 9 merged into a histogram: whatever value a draw
    // answers between them, replay completes one request, as a Waitany does.
    for (int64_t drawn = 4; drawn <= 10; ++drawn) CHECK(decoded({drawn}).size() == 1);
}

TEST_CASE("values written before format 12 convert to the same positions")
{
    // Before 12 a set was one bit per position in chunks counted from 0: {0} was 1, {2} was 4,
    // {1, 57} was 2 and 1 << 56 | 2.
    const std::vector<std::pair<std::vector<int64_t>, Positions>> old_sets = {
        {{0}, {}},
        {{1}, {0}},
        {{4}, {2}},
        {{int64_t{1} << 55}, {55}},
        {{6}, {1, 2}},
        {{-3}, {7, 8, 9}},
        {{(int64_t{1} << 56) | 8}, {59}},
        {{2, (int64_t{1} << 56) | 2}, {1, 57}},
    };
    for (const auto& [old_values, positions] : old_sets) {
        CAPTURE(old_values);
        std::vector<int64_t> values;
        for (int64_t v : old_values) values.push_back(completed_set_value_before_12(v));
        CHECK(decoded(values, 10) == positions);
    }
    CHECK(completed_set_value_before_12(kUnknownCompletedSet) == kUnknownCompletedSet);
}

TEST_CASE("pending requests are counted from the newest, so a loop that posts and waits has the same set every time")
{
    PendingRequests<int> pending;
    pending.created(100);  // an old request nobody completes for a while
    std::vector<Positions> sets;
    int handle = 0;
    for (int iteration = 0; iteration < 3; ++iteration) {
        const int receive = ++handle;
        const int send = ++handle;
        pending.created(receive);
        pending.created(send);
        sets.push_back(completing(pending, std::vector<int>{receive, send}));
    }
    CHECK(sets == std::vector<Positions>{{0, 1}, {0, 1}, {0, 1}});
    CHECK(pending.size() == 1);
    CHECK(completing(pending, std::vector<int>{100}) == Positions{0});
}

TEST_CASE("requests completed in the order they were made have one value every time: the oldest pending")
{
    // A Waitany loop over 20 requests that complete in order, then a Waitsome of the oldest three of
    // ten, and a Wait with an older request nobody completes (so not the oldest: positions as before).
    PendingRequests<int> pending;
    for (int h = 1; h <= 20; ++h) pending.created(h);
    for (int h = 1; h <= 20; ++h) {
        const size_t before = pending.size();
        const Positions set = completing(pending, std::vector<int>{h});
        CHECK(set == Positions{static_cast<uint32_t>(before - 1)});
        const auto values = encode_completed_set(set, before);
        CHECK(values == std::vector<int64_t>{-1});
        CHECK(decoded(values, static_cast<uint32_t>(before)) == set);
    }
    for (int h = 1; h <= 10; ++h) pending.created(h);
    const Positions three = completing(pending, std::vector<int>{2, 1, 3});
    CHECK(three == Positions{7, 8, 9});
    CHECK(encode_completed_set(three, 10) == std::vector<int64_t>{-3});
    CHECK(decoded({-3}, 10) == three);
    // Without the count (a cancelled set), the same positions are a bit mask.
    CHECK(encode_completed_set(three) == std::vector<int64_t>{(int64_t{1} << 56) | (1 << 7) | (1 << 8) | (1 << 9)});
    pending.created(99);
    CHECK(completing(pending, std::vector<int>{99}) == Positions{0});
    CHECK(encode_completed_set(Positions{0}, 8) == std::vector<int64_t>{1});
    // Decoded against fewer pending requests than it names, it names all of them.
    CHECK(decoded({-5}, 3) == Positions{0, 1, 2});
}

TEST_CASE("receives completed before the sends posted between them leave holes in the positions")
{
    PendingRequests<int> pending;
    for (int h = 1; h <= 6; ++h) pending.created(h);  // receive, send, receive, send, receive, send
    CHECK(completing(pending, std::vector<int>{1, 3, 5}) == Positions{1, 3, 5});
    CHECK(completing(pending, std::vector<int>{6, 2, 4}) == Positions{0, 1, 2});
}

TEST_CASE("a handle seen twice stands for a reused one: the newest request with it completes first, once each")
{
    PendingRequests<int> pending;
    pending.created(7);  // a request the rank freed unseen, whose handle the library gave out again
    pending.created(1);
    pending.created(7);
    CHECK(completing(pending, std::vector<int>{7}) == Positions{0});
    CHECK(completing(pending, std::vector<int>{7}) == Positions{1});
    CHECK(completing(pending, std::vector<int>{7}).empty());  // no longer pending: a request of an unmodelled call
}

TEST_CASE("the library's shared handle for requests complete when made completes them oldest first, once each")
{
    PendingRequests<int> pending;
    pending.set_shared_handles({7});  // Open MPI: every MPI_PROC_NULL send and small send it completes at once
    pending.created(7);
    pending.created(1);
    pending.created(7);
    pending.created(5);
    CHECK(completing(pending, std::vector<int>{7}) == Positions{3});
    CHECK(completing(pending, std::vector<int>{5, 7}) == Positions{0, 1});
    CHECK(completing(pending, std::vector<int>{7}).empty());
    CHECK(completing(pending, std::vector<int>{1}) == Positions{0});
}

TEST_CASE("a completion says where each handle was, in the order the call gave them")
{
    PendingRequests<int> pending;
    for (int h = 1; h <= 4; ++h) pending.created(h);
    std::vector<uint32_t> where;
    pending.complete(std::vector<int>{2, 9, 4}, &where);
    CHECK(where == std::vector<uint32_t>{2, PendingRequests<int>::kNotPending, 0});
}

TEST_CASE("a Waitany loop names the request that completed each time, wherever it is")
{
    PendingRequests<int> pending;
    for (int h = 1; h <= 4; ++h) pending.created(h);
    std::vector<Positions> order;
    for (int h : {3, 1, 4, 2}) order.push_back(completing(pending, std::vector<int>{h}));
    CHECK(order == std::vector<Positions>{{1}, {2}, {0}, {0}});
}

TEST_CASE("leaked requests beyond the kept number do not move the positions of new ones")
{
    PendingRequests<int> pending;
    for (size_t h = 0; h < PendingRequests<int>::kKept + 10; ++h) pending.created(-1);
    pending.created(5);
    pending.created(6);
    CHECK(completing(pending, std::vector<int>{5}) == Positions{1});
    CHECK(pending.size() == PendingRequests<int>::kKept - 1);
}

TEST_CASE("requests forgotten many times over leave the newest where they were")
{
    // Past several multiples of the kept number, the forgotten ones are dropped in bulk: the newest
    // requests keep their positions, and the oldest kept is still the one made kKept calls ago.
    constexpr size_t kept = PendingRequests<int>::kKept;
    PendingRequests<int> pending;
    pending.set_shared_handles({0});
    for (size_t h = 0; h < 3 * kept + 7; ++h) pending.created(h % 2 == 0 ? -1 : static_cast<int>(h));
    CHECK(pending.size() == kept);
    const int newest = static_cast<int>(3 * kept + 5);  // the last odd handle made
    CHECK(completing(pending, std::vector<int>{newest}) == Positions{1});
    const int oldest_odd = static_cast<int>(2 * kept + 7);  // the oldest odd handle still kept
    CHECK(completing(pending, std::vector<int>{oldest_odd}) == Positions{kept - 2});
    CHECK(completing(pending, std::vector<int>{oldest_odd - 2}).empty());  // forgotten
    CHECK(pending.size() == kept - 2);
}

TEST_CASE("a completed request gives back what it carried, and a handle not pending gives nothing")
{
    PendingRequests<int, char> pending;
    pending.created(7, 'a');
    pending.created(8, 'b');
    pending.created(9, 'c');
    std::vector<uint32_t> positions;
    std::vector<char> carried;
    const std::vector<int> completed{9, 5, 7};
    pending.complete(completed, &positions, &carried);
    CHECK(positions == std::vector<uint32_t>{0, PendingRequests<int, char>::kNotPending, 2});
    CHECK(carried == std::vector<char>{'c', '\0', 'a'});
    CHECK(pending.size() == 1);
}
