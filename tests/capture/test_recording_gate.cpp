#include "capture/recording_gate.hpp"

#include <doctest/doctest.h>

#include <array>
#include <atomic>
#include <thread>
#include <vector>

using htrace::capture::ClosedGate;
using htrace::capture::InsideGate;
using htrace::capture::RecordingGate;

// The application's thread changes a state that is only consistent between calls (counters equal,
// a vector as long as they say); a second thread, as the partial writer does, copies it under the
// closed gate again and again. Without the handshake the copies catch it half-changed.
TEST_CASE("the partial writer copies only whole calls")
{
    RecordingGate gate;
    gate.prepare();
    struct State {
        uint64_t first = 0;
        std::array<uint64_t, 512> middle{};
        std::vector<uint64_t> values;
        uint64_t last = 0;
    } state;
    std::atomic<bool> enough{false};
    std::atomic<uint64_t> calls{0};

    std::thread application([&] {
        while (!enough.load(std::memory_order_relaxed)) {
            InsideGate inside(gate);
            ++state.first;
            for (auto& m : state.middle) m = state.first;
            state.values.push_back(state.first);  // reallocates now and then: a torn copy reads freed memory
            ++state.last;
            calls.fetch_add(1, std::memory_order_relaxed);
        }
    });
    while (calls.load() == 0) std::this_thread::yield();
    constexpr int kCopies = 2000;
    int torn = 0;
    uint64_t last_seen = 0;
    bool went_back = false;
    for (int copy_index = 0; copy_index < kCopies; ++copy_index) {
        ClosedGate closed(gate);
        const uint64_t first = state.first;
        const std::array<uint64_t, 512> middle = state.middle;
        const size_t values = state.values.size();
        const uint64_t last = state.last;
        bool whole = first == last && values == first;
        for (uint64_t m : middle) whole &= m == first;
        torn += whole ? 0 : 1;
        went_back |= first < last_seen;
        last_seen = first;
    }
    enough.store(true);
    application.join();
    CHECK(torn == 0);
    CHECK_FALSE(went_back);
    CHECK(last_seen > 0);  // the copies overlapped the application's calls
    CHECK(state.first == calls.load());
}
