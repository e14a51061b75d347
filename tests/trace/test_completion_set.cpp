#include "trace/completion_set.hpp"

#include <doctest/doctest.h>

#include <vector>

using namespace htrace;

namespace {

std::vector<uint32_t> decoded(int64_t value) { return decode_completed_set(value).value_or(std::vector<uint32_t>{99}); }

}  // namespace

TEST_CASE("a completed set round-trips through its value, as a mask or as evenly spaced positions")
{
    const std::vector<std::vector<uint32_t>> sets = {
        {}, {0}, {3}, {0, 1, 2, 3, 4, 5, 6, 7}, {1, 3, 5}, {0, 61}, {62}, {0, 62}, {70, 72, 74, 76},
        {100, 101, 102}, {5, 70, 135}};
    for (const auto& set : sets) {
        CAPTURE(set);
        const int64_t value = encode_completed_set(set);
        REQUIRE(value != kUnknownCompletedSet);
        CHECK(decoded(value) == set);
    }
}

TEST_CASE("positions up to 61 are a bit mask; a set beyond that which is not evenly spaced is unknown")
{
    CHECK(encode_completed_set(std::vector<uint32_t>{0}) == 1);
    CHECK(encode_completed_set(std::vector<uint32_t>{0, 1, 2, 3}) == 15);
    CHECK(encode_completed_set(std::vector<uint32_t>{0, 1, 63}) == kUnknownCompletedSet);
    CHECK_FALSE(decode_completed_set(kUnknownCompletedSet).has_value());
}

TEST_CASE("any value decodes to at most the limit of positions")
{
    CHECK(decode_completed_set(-((int64_t{5} << 40) | (int64_t{2} << 32) | 1000000), 10)->size() == 10);
    CHECK(decode_completed_set(-1234567, 4)->size() <= 4);
    CHECK(decode_completed_set(0x3fffffffffffffff, 3)->size() == 3);
}

TEST_CASE("pending requests are counted from the newest, so a loop that posts and waits has the same set every time")
{
    PendingRequests<int> pending;
    pending.created(100);  // an old request nobody completes for a while
    std::vector<int64_t> values;
    int handle = 0;
    for (int iteration = 0; iteration < 3; ++iteration) {
        const int receive = ++handle;
        const int send = ++handle;
        pending.created(receive);
        pending.created(send);
        const std::vector<int> both{receive, send};
        values.push_back(pending.complete(both));
    }
    CHECK(values == std::vector<int64_t>{3, 3, 3});
    CHECK(pending.size() == 1);
    const std::vector<int> old{100};
    CHECK(decoded(pending.complete(old)) == std::vector<uint32_t>{0});
}

TEST_CASE("receives completed before the sends posted between them leave holes in the positions")
{
    PendingRequests<int> pending;
    for (int h = 1; h <= 6; ++h) pending.created(h);  // receive, send, receive, send, receive, send
    const std::vector<int> receives{1, 3, 5};
    CHECK(decoded(pending.complete(receives)) == std::vector<uint32_t>{1, 3, 5});
    const std::vector<int> sends{6, 2, 4};
    CHECK(decoded(pending.complete(sends)) == std::vector<uint32_t>{0, 1, 2});
}

TEST_CASE("a handle shared by several requests completes them newest first, once each")
{
    PendingRequests<int> pending;
    pending.created(7);
    pending.created(1);
    pending.created(7);  // Open MPI gives every MPI_PROC_NULL send the same handle
    const std::vector<int> one{7};
    CHECK(decoded(pending.complete(one)) == std::vector<uint32_t>{0});
    CHECK(decoded(pending.complete(one)) == std::vector<uint32_t>{1});
    CHECK(pending.complete(one) == 0);  // no longer pending: a request of an unmodelled call
}

TEST_CASE("a Waitany loop names the request that completed each time, wherever it is")
{
    PendingRequests<int> pending;
    for (int h = 1; h <= 4; ++h) pending.created(h);
    std::vector<std::vector<uint32_t>> order;
    for (int h : {3, 1, 4, 2}) {
        const std::vector<int> one{h};
        order.push_back(decoded(pending.complete(one)));
    }
    CHECK(order == std::vector<std::vector<uint32_t>>{{1}, {2}, {0}, {0}});
}

TEST_CASE("leaked requests beyond the kept number do not move the positions of new ones")
{
    PendingRequests<int> pending;
    for (size_t h = 0; h < PendingRequests<int>::kKept + 10; ++h) pending.created(-1);
    pending.created(5);
    pending.created(6);
    const std::vector<int> first{5};
    CHECK(decoded(pending.complete(first)) == std::vector<uint32_t>{1});
    CHECK(pending.size() == PendingRequests<int>::kKept - 1);
}
