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

TEST_CASE("a reset item is blank in every field, its lists keeping their capacity")
{
    // A new field must be reset too (Item::reset, ScheduledCall::reset, Completion::reset): these
    // sizes change with the fields, and the test below must then set the new one.
    static_assert(sizeof(ScheduledCall) == 400, "a field was added: reset it and set it below");
    static_assert(sizeof(Completion) == 112, "a field was added: reset it and set it below");
    static_assert(sizeof(Asked) == 32, "a field was added: set it below");
    static_assert(sizeof(Item) == 568, "a field was added: reset it and set it below");
    Item item;
    item.kind = ItemKind::completion;
    item.creates_request = true;
    ScheduledCall& c = item.call;
    c.kind = CallKind::complete;
    c.op = htrace::Op::Waitall;
    c.comm = c.peer = c.peer_in_comm = c.tag = c.bytes = c.source = c.source_in_comm = 3;
    c.recv_tag = c.recv_bytes = c.root = c.request = c.new_comm = c.remote_leader = c.window = 4;
    c.target_bytes = c.assertion = c.lock_type = c.file = c.amode = c.offset = c.whence = 5;
    c.file_size = c.view_disp = 6;
    c.in_place = c.high = c.own_epoch = true;
    c.requests = {1, 2};
    c.send_counts = c.recv_counts = {3};
    c.members = c.group = {4};
    c.path = "a file name longer than a short string's buffer";
    c.view.lb = c.view.block = c.view.blocks = c.view.stride = c.view.extent = 7;
    c.seconds = 1.5;
    static const htrace::Event event;
    c.event = &event;
    static const htrace::Topology topology;
    c.topology = &topology;
    c.times_return = false;
    item.asked.any_source = item.asked.any_tag = item.asked.source_known = item.asked.tag_known = true;
    item.asked.source_drawn = item.asked.tag_drawn = true;
    item.asked.comm.members = std::make_shared<const std::vector<htrace::Rank>>(std::vector<htrace::Rank>{0, 1});
    item.asked.comm.my_rank = 1;
    Completion& done = item.completion;
    done.frees = done.recorded = true;
    done.completed_something = false;
    done.completed_set = done.cancelled_set = done.matched_peers = done.matched_tags = {8, 9};
    item.shared_draw_iteration = 10;

    item.reset();
    CHECK(item == Item{});
    CHECK(item.call.requests.capacity() >= 2);
    CHECK(item.completion.completed_set.capacity() >= 2);
}
