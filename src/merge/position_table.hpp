#pragma once
// The loop folder's index from a key (a hash of calls) to the last position in the sequence where
// it occurred: one lookup on every append of a call that does not repeat a loop body. A flat table
// with open addressing: no node to allocate per key and no division per lookup, where
// std::unordered_map cost both (perf of NPB MG W at 16 ranks, whose calls mostly append anew).

#include <cstddef>
#include <cstdint>
#include <vector>

namespace htrace {

class PositionTable {
public:
    // The position stored for `key`, or -1.
    int64_t find(uint64_t key) const
    {
        if (entries_.empty()) return -1;
        for (size_t i = home(key);; i = next(i)) {
            if (entries_[i].position < 0) return -1;
            if (entries_[i].key == key) return entries_[i].position;
        }
    }

    // Stores `position` (>= 0) for `key` and gives the one it replaces, or -1.
    int64_t exchange(uint64_t key, int64_t position)
    {
        if (2 * (size_ + 1) > entries_.size()) grow();
        for (size_t i = home(key);; i = next(i)) {
            Entry& e = entries_[i];
            if (e.position < 0) {
                e = {key, position};
                ++size_;
                return -1;
            }
            if (e.key == key) {
                const int64_t before = e.position;
                e.position = position;
                return before;
            }
        }
    }

    void erase(uint64_t key)
    {
        if (entries_.empty()) return;
        size_t hole = home(key);
        while (entries_[hole].position >= 0 && entries_[hole].key != key) hole = next(hole);
        if (entries_[hole].position < 0) return;
        // Backward shift: later entries of the run move into the hole where their home allows, so
        // that a lookup never stops early at an emptied entry.
        for (size_t i = next(hole); entries_[i].position >= 0; i = next(i)) {
            const size_t wanted = home(entries_[i].key);
            const bool stays = hole <= i ? (hole < wanted && wanted <= i) : (hole < wanted || wanted <= i);
            if (stays) continue;
            entries_[hole] = entries_[i];
            hole = i;
        }
        entries_[hole].position = -1;
        --size_;
    }

    size_t size() const { return size_; }

    void clear()
    {
        entries_.clear();
        size_ = 0;
        shift_ = 64;
    }

private:
    struct Entry {
        uint64_t key = 0;
        int64_t position = -1;  // -1: empty
    };

    size_t home(uint64_t key) const { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_); }
    size_t next(size_t i) const { return (i + 1) & (entries_.size() - 1); }

    void grow()
    {
        std::vector<Entry> old = std::move(entries_);
        const size_t count = old.empty() ? 64 : 2 * old.size();
        entries_.assign(count, Entry{});
        shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(count));
        size_ = 0;
        for (const Entry& e : old) {
            if (e.position >= 0) exchange(e.key, e.position);
        }
    }

    std::vector<Entry> entries_;  // a power of two long, at most half full
    size_t size_ = 0;
    unsigned shift_ = 64;
};

}  // namespace htrace
