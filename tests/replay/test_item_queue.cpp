#include "replay/rank_stream.hpp"

#include <doctest/doctest.h>

using namespace htrace::replay;

TEST_CASE("the item queue keeps order and addresses across wrapping and growth, and hands out blank items")
{
    ItemQueue queue;
    int64_t next_pushed = 0, next_popped = 0;
    auto push = [&] {
        Item& item = queue.push_back();
        CHECK(item.call.tag == 0);  // nothing left over from the item the slot held before
        CHECK(item.completion.completed_set.empty());
        item.call.tag = ++next_pushed;
        item.completion.completed_set.assign(3, next_pushed);
    };
    for (int i = 0; i < 12; ++i) push();
    for (int i = 0; i < 10; ++i) {
        CHECK(queue[0].call.tag == ++next_popped);
        queue.pop_front();
    }
    // The head is now inside the ring: the next pushes wrap around, then make it grow.
    const Item* kept = &queue[1];
    for (int i = 0; i < 40; ++i) push();
    CHECK(&queue[1] == kept);
    REQUIRE(queue.size() == 42);
    for (size_t k = 0; k < queue.size(); ++k) CHECK(queue[k].call.tag == next_popped + 1 + static_cast<int64_t>(k));
    queue.pop_back();
    CHECK(queue.size() == 41);
    CHECK(queue[40].call.tag == next_pushed - 1);
    while (!queue.empty()) queue.pop_front();
    push();
    CHECK(queue[0].completion.completed_set == std::vector<int64_t>(3, next_pushed));
}
