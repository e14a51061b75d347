#include "replay/watchdog.hpp"

#include "trace/render.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace htrace::replay {

Watchdog::Watchdog(int rank, double limit) : rank_(rank), limit_(limit)
{
    if (limit_ > 0) thread_ = std::thread([this] { watch(); });
}

Watchdog::~Watchdog()
{
    if (!thread_.joinable()) return;
    {
        std::lock_guard lock(mutex_);
        done_ = true;
    }
    wake_.notify_one();
    thread_.join();
}

void Watchdog::entering(const ScheduledCall& call)
{
    if (limit_ <= 0) return;
    constexpr auto relaxed = std::memory_order_relaxed;
    current_.kind.store(call.kind, relaxed);
    current_.op.store(call.op, relaxed);
    current_.event.store(call.event, relaxed);
    current_.peer.store(call.peer, relaxed);
    current_.tag.store(call.tag, relaxed);
    current_.bytes.store(call.bytes, relaxed);
    current_.comm.store(call.comm, relaxed);
    current_.requests.store(call.requests.size(), relaxed);
    current_.index.store(++calls_, std::memory_order_release);
}

void Watchdog::left()
{
    if (limit_ <= 0) return;
    current_.index.store(0, std::memory_order_release);
}

std::optional<Watchdog::InCall> Watchdog::read_current(uint64_t index) const
{
    constexpr auto relaxed = std::memory_order_relaxed;
    if (index == 0 || current_.index.load(std::memory_order_acquire) != index) return std::nullopt;
    InCall call{index,
                current_.kind.load(relaxed),
                current_.op.load(relaxed),
                current_.event.load(relaxed),
                current_.peer.load(relaxed),
                current_.tag.load(relaxed),
                current_.bytes.load(relaxed),
                current_.comm.load(relaxed),
                current_.requests.load(relaxed)};
    std::atomic_thread_fence(std::memory_order_acquire);
    if (current_.index.load(relaxed) != index) return std::nullopt;  // a new call began meanwhile
    return call;
}

void Watchdog::watch()
{
    using Clock = std::chrono::steady_clock;
    std::unique_lock lock(mutex_);
    uint64_t seen = 0;
    auto since = Clock::now();
    while (!done_) {
        wake_.wait_for(lock, std::chrono::milliseconds(500));
        const uint64_t now_in = current_.index.load(std::memory_order_acquire);
        if (now_in != seen) {
            seen = now_in;
            since = Clock::now();
            continue;
        }
        const double stuck = std::chrono::duration<double>(Clock::now() - since).count();
        // Stuck ranks report one after another, three seconds apart, so that usually the first says
        // it and mpirun has stopped the others before they repeat it.
        if (seen == 0 || stuck <= limit_ + 3 * std::min(rank_, 10)) continue;
        if (const auto call = read_current(seen)) stop(*call, stuck);
    }
}

void Watchdog::stop(const InCall& call, double seconds) const
{
    std::string what = std::string(operation_name(call.op));
    switch (call.kind) {
    case CallKind::send: what += " to rank " + std::to_string(call.peer); break;
    case CallKind::receive:
    case CallKind::probe:
    case CallKind::sendrecv: what += " with rank " + std::to_string(call.peer); break;
    case CallKind::complete: what += " of " + std::to_string(call.requests) + " requests"; break;
    default: what += " on communicator " + std::to_string(call.comm); break;
    }
    if (call.kind == CallKind::send || call.kind == CallKind::receive || call.kind == CallKind::sendrecv ||
        call.kind == CallKind::probe) {
        what += " (tag " + std::to_string(call.tag) + ", " + std::to_string(call.bytes) + " bytes)";
    }
    std::string event = "the end of the replay";
    if (call.event != nullptr) {
        const Event& e = *call.event;
        event = "trace event " + std::string(operation_name(e.op)) + " @" + render_signature(e.signature);
    }
    std::fprintf(stderr, "h-replay: rank %d: no progress for %.0f s in %s, call %llu of this rank, replaying %s; "
                 "stopping the job\n", rank_, seconds, what.c_str(), static_cast<unsigned long long>(call.index),
                 event.c_str());
    std::fflush(stderr);
    std::_Exit(3);
}

}  // namespace htrace::replay
