#include "trace/trace_file.hpp"

#include "trace/completion_set.hpp"
#include "trace/limits.hpp"
#include "trace/rank_times.hpp"
#include "trace/time_code.hpp"
#include "trace/trace_check.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <boost/crc.hpp>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string_view>
#include <unordered_map>

namespace htrace {
namespace {

constexpr char kMagic[8] = {'\x89', 'H', 'T', 'R', 'A', 'C', 'E', '\n'};
constexpr size_t kFixedPrefix = sizeof(kMagic) + 8;  // magic, then the total size as 8 bytes

// How the rest of the file after the version is stored (format 11): as it is, or as one zstd frame,
// whichever is smaller. Traces repeat themselves (call sites of one program, values of one loop,
// per-rank entries), and a general compressor takes what the encoding leaves.
enum class Payload : uint8_t { plain = 0, zstd = 1 };

std::vector<uint8_t> compressed(const std::vector<uint8_t>& payload, double traced_seconds)
{
    std::vector<uint8_t> out(ZSTD_compressBound(payload.size()));
    const int level = compression_level(payload.size(), traced_seconds);
    const size_t size = ZSTD_compress(out.data(), out.size(), payload.data(), payload.size(), level);
    if (ZSTD_isError(size)) return {};
    out.resize(size);
    return out;
}

// A loop whose last iteration leaves out the end of its body (Loop::last_leaves_out, format 14)
// says how many nodes after its count; other loops cost what they did before.
enum class NodeTag : uint8_t { event = 0, loop = 1, loop_leaving_out = 2 };

// Compute times: trace files store them to the nanosecond (variable-length integers, a few bytes
// instead of 32); the merge's messages between ranks keep them exact, since they are still being
// combined there.
enum class Times : uint8_t { nanoseconds, exact };

uint64_t to_nanoseconds(double seconds) { return static_cast<uint64_t>(std::llround(std::max(seconds, 0.0) * 1e9)); }
double from_nanoseconds(uint64_t ns) { return static_cast<double>(ns) / 1e9; }
// histogram_alike (format 13): a histogram alike on every rank it stands for (Value).
enum class ValueTag : uint8_t { exact = 0, per_rank = 1, histogram = 2, histogram_alike = 3 };
// How a histogram stores the values it has seen (peers): not at all, as deltas, as runs of
// consecutive values (format 7), or as bitmaps of the wide bins (format 10).
enum class SeenValues : uint8_t { none = 0, deltas = 1, runs = 2, in_wide_bins = 3 };
// A bin's mean and sum of squares, each as an integer where it is one: the values are integers, so
// count * mean_offset (the sum of the values' offsets from the bin's min) and count * m2 are, but for
// floating rounding and for the estimates a split makes. Only where dividing by the count gives back
// the same double bit for bit, so the file stays lossless; a peer's bin then costs a few bytes
// instead of sixteen.
std::optional<uint64_t> as_count_multiple(double moment, uint64_t count)
{
    const double n = static_cast<double>(count);
    const double scaled = std::round(moment * n);
    if (!(scaled >= 0 && scaled < 0x1p53) || scaled / n != moment) return std::nullopt;
    return static_cast<uint64_t>(scaled);
}

// A run longer than any communicator makes (16 M ranks) is a corrupt file, not an allocation to attempt.
constexpr uint64_t kMaxSeenRun = uint64_t{1} << 24;
// The most values of wide bins whose seen values are a bitmap.
constexpr uint64_t kMostSeenBits = uint64_t{1} << 16;

class Encoder {
public:
    void byte(uint8_t b) { out_.push_back(b); }
    void unsigned_int(uint64_t v)
    {
        while (v >= 0x80) {
            out_.push_back(static_cast<uint8_t>(v | 0x80));
            v >>= 7;
        }
        out_.push_back(static_cast<uint8_t>(v));
    }
    void signed_int(int64_t v) { unsigned_int((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63)); }
    void fixed64(uint64_t v)
    {
        for (int i = 0; i < 8; ++i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
    }
    void fixed32(uint32_t v)
    {
        for (int i = 0; i < 4; ++i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
    }
    void real(double d)
    {
        uint64_t bits = 0;
        std::memcpy(&bits, &d, sizeof bits);
        fixed64(bits);
    }
    void text(std::string_view s)
    {
        unsigned_int(s.size());
        out_.insert(out_.end(), s.begin(), s.end());
    }
    std::vector<uint8_t>& bytes() { return out_; }
    const std::vector<uint8_t>& bytes() const { return out_; }

private:
    std::vector<uint8_t> out_;
};

// What a Decoder reads beyond the bytes it was given: a trace file's contents, a window at a time
// (decode() below), so that a replaying rank never holds the file or its decompressed contents
// beside the trace it decodes from them.
class ByteStream {
public:
    virtual ~ByteStream() = default;
    // Up to `max` of the next bytes into `out`: 0 at the end, or on an error (error() says which).
    virtual size_t read(uint8_t* out, size_t max) = 0;
    virtual std::string error() const = 0;
};

// Decoding never throws: the first problem is kept, and every later read returns zero.
class Decoder {
public:
    // Bytes all in memory, read from `offset`.
    Decoder(const uint8_t* data, size_t size, size_t offset = 0)
        : size_(size), pos_(offset), window_end_(size), at_(data + offset)
    {
    }
    // `size` bytes that `stream` hands out.
    Decoder(ByteStream& stream, size_t size) : size_(size), stream_(&stream) {}

    bool ok() const { return error_.empty(); }
    const std::string& error() const { return error_; }
    size_t position() const { return pos_; }
    bool at_end() const { return pos_ >= size_; }

    void fail(std::string message)
    {
        if (error_.empty()) error_ = std::move(message);
    }

    uint8_t byte()
    {
        if (!need(1)) return 0;
        return next();
    }
    uint64_t unsigned_int()
    {
        uint64_t v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (!need(1)) return 0;
            const uint8_t b = next();
            v |= uint64_t(b & 0x7f) << shift;
            if (!(b & 0x80)) return v;
        }
        fail("corrupt: bad integer at byte " + std::to_string(pos_));
        return 0;
    }
    int64_t signed_int()
    {
        const uint64_t v = unsigned_int();
        return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1));
    }
    uint64_t fixed64()
    {
        if (!need(8)) return 0;
        uint64_t v = 0;
        for (int i = 0; i < 8; ++i) v |= uint64_t(next()) << (8 * i);
        return v;
    }
    uint32_t fixed32()
    {
        if (!need(4)) return 0;
        uint32_t v = 0;
        for (int i = 0; i < 4; ++i) v |= uint32_t(next()) << (8 * i);
        return v;
    }
    double real()
    {
        const uint64_t bits = fixed64();
        double d = 0;
        std::memcpy(&d, &bits, sizeof d);
        return d;
    }
    // A text of at most `most` bytes: a longer one is corruption, refused before anything is allocated.
    std::string text(uint64_t most = limits::kMostTopologyBytes)
    {
        const size_t at = pos_;
        const uint64_t n = unsigned_int();
        if (n > most) {
            fail("corrupt: a text of " + std::to_string(n) + " bytes at byte " + std::to_string(at) + " (at most " +
                 std::to_string(most) + ")");
            return {};
        }
        if (!need(n)) return {};
        std::string s(reinterpret_cast<const char*>(at_), n);
        at_ += n;
        pos_ += n;
        return s;
    }
    // A count of things still to come, each at least one byte: a count larger than the bytes left
    // is corruption, caught here before anything is allocated for it.
    size_t count() { return count_of(unsigned_int()); }

    // A count already read: no more items than bytes left.
    size_t count_of(uint64_t n)
    {
        if (n > size_ - std::min(pos_, size_)) {
            fail("corrupt: count " + std::to_string(n) + " at byte " + std::to_string(pos_) +
                 " exceeds the data");
            return 0;
        }
        return static_cast<size_t>(n);
    }

private:
    // A stream's bytes are read this many at a time (or as many as one text needs).
    static constexpr size_t kWindow = size_t{1} << 16;

    uint8_t next()
    {
        ++pos_;
        return *at_++;
    }

    bool need(uint64_t n)
    {
        if (!ok()) return false;
        if (n > size_ - std::min(pos_, size_)) {
            fail("truncated at byte " + std::to_string(size_) + " (expected " + std::to_string(pos_ + n) +
                 " or more)");
            return false;
        }
        return pos_ + n <= window_end_ || refill(static_cast<size_t>(n));
    }

    // Moves the bytes not read yet to the window's start and reads behind them, at least `n` bytes
    // in all.
    bool refill(size_t n)
    {
        const size_t kept = window_end_ - pos_;
        // No larger than what is left (a small trace's few hundred bytes), unless one text needs more.
        const size_t wanted = std::max(n, std::min(kWindow, size_ - pos_));
        std::vector<uint8_t> grown;
        if (window_.size() < wanted) grown.resize(wanted);
        std::vector<uint8_t>& into = grown.empty() ? window_ : grown;
        if (kept > 0) std::memmove(into.data(), at_, kept);
        size_t filled = kept;
        for (size_t got = 1; filled < into.size() && got > 0; filled += got) {
            got = stream_->read(into.data() + filled, into.size() - filled);
        }
        if (!grown.empty()) window_ = std::move(grown);
        at_ = window_.data();
        window_end_ = pos_ + filled;
        if (filled < n) {
            const std::string why = stream_->error();
            fail(why.empty() ? "truncated at byte " + std::to_string(window_end_) : why);
            return false;
        }
        return true;
    }

    size_t size_;
    size_t pos_ = 0;
    size_t window_end_ = 0;      // bytes before this position have been read into memory
    const uint8_t* at_ = nullptr;  // the byte at pos_
    ByteStream* stream_ = nullptr;
    std::vector<uint8_t> window_;
    std::string error_;
};

// ---- Writing --------------------------------------------------------------------------------------

class BodyWriter {
public:
    // `shared_config`: the header's histogram config, which a trace file states once (merge
    // messages, which have no header, leave it out).
    BodyWriter(Encoder& out, Times times, std::optional<HistogramConfig> shared_config = std::nullopt)
        : out_(out), times_(times), shared_config_(shared_config)
    {
    }

    // The list's packed form is the file's: the number of runs, then each run's start, its number
    // of dimensions and theirs (count, stride).
    void ranks(const RankList& list) { list.pack(out_.bytes()); }

    // Format 10. Every histogram of a run shares the header's config, so a file states it once; the
    // bin count's low bit says a histogram carries its own. Bins follow each other, so each starts
    // at a gap from the previous one's max, and a bin of one value (every bin of an exact
    // histogram) is just its count, whose low bit says the bin is wide. The extremes' values are the
    // outer bins' ends; only their ranks are written.
    void histogram(const Histogram& h)
    {
        const bool own_config = h.config() != shared_config_;
        out_.unsigned_int(h.bins().size() << 1 | (own_config ? 1 : 0));
        if (own_config) {
            out_.unsigned_int(static_cast<uint64_t>(h.config().bins));
            out_.unsigned_int(static_cast<uint64_t>(h.config().rebalance_interval));
        }
        for (size_t i = 0; i < h.bins().size(); ++i) {
            const auto& bin = h.bins()[i];
            if (i == 0) {
                out_.signed_int(bin.min);
            } else {
                out_.unsigned_int(static_cast<uint64_t>(bin.min) - static_cast<uint64_t>(h.bins()[i - 1].max) - 1);
            }
            if (bin.max == bin.min) {
                out_.unsigned_int(bin.count << 1);
                continue;
            }
            // A wide bin says in its count's next bits which of its moments follow as integers.
            const auto mean = as_count_multiple(bin.mean_offset, bin.count);
            const auto m2 = as_count_multiple(bin.m2, bin.count);
            out_.unsigned_int(bin.count << 3 | (mean ? 4 : 0) | (m2 ? 2 : 0) | 1);
            out_.unsigned_int(static_cast<uint64_t>(bin.max) - static_cast<uint64_t>(bin.min) - 1);
            mean ? out_.unsigned_int(*mean) : out_.real(bin.mean_offset);
            m2 ? out_.unsigned_int(*m2) : out_.real(bin.m2);
        }
        out_.signed_int(h.min().rank);
        out_.signed_int(h.max().rank);
        out_.unsigned_int(h.added_since_rebalance());
        if (!h.keeps_seen_values()) {
            out_.byte(static_cast<uint8_t>(SeenValues::none));
            return;
        }
        // Whichever form is smallest is written.
        std::vector<std::pair<SeenValues, Encoder>> forms;
        forms.emplace_back(SeenValues::deltas, seen_as_deltas(h.seen_values()));
        forms.emplace_back(SeenValues::runs, seen_as_runs(h.seen_values()));
        if (auto in_bins = seen_in_wide_bins(h)) forms.emplace_back(SeenValues::in_wide_bins, std::move(*in_bins));
        const auto& [form, chosen] = *std::min_element(forms.begin(), forms.end(), [](const auto& a, const auto& b) {
            return a.second.bytes().size() < b.second.bytes().size();
        });
        out_.byte(static_cast<uint8_t>(form));
        for (uint8_t b : chosen.bytes()) out_.byte(b);
    }

    static Encoder seen_as_deltas(const std::vector<int64_t>& seen)
    {
        Encoder out;
        out.unsigned_int(seen.size());
        int64_t previous = 0;
        for (int64_t v : seen) {
            out.signed_int(v - previous);
            previous = v;
        }
        return out;
    }

    // Peers relative to the caller fill whole ranges at large rank counts ({1, ..., 63}): as runs
    // they cost a few bytes at any rank count.
    static Encoder seen_as_runs(const std::vector<int64_t>& seen)
    {
        std::vector<std::pair<int64_t, int64_t>> ranges;  // first and last value of each run
        for (int64_t v : seen) {
            if (!ranges.empty() && ranges.back().second + 1 == v) {
                ranges.back().second = v;
            } else {
                ranges.emplace_back(v, v);
            }
        }
        Encoder out;
        out.unsigned_int(ranges.size());
        int64_t previous = 0;
        for (const auto& [first, last] : ranges) {
            out.signed_int(first - previous);
            out.unsigned_int(static_cast<uint64_t>(last - first));
            previous = last;
        }
        return out;
    }

    // A bin of one value says that value was seen; a wide bin says which of its values were, a bit
    // each (lowest first, packed across bins). Peers at many ranks then cost a few bytes beyond the
    // bins. Only where the set is exactly that: every seen value inside a bin, every narrow bin's
    // value seen, and the wide bins narrow enough for a bitmap.
    static std::optional<Encoder> seen_in_wide_bins(const Histogram& h)
    {
        const auto& seen = h.seen_values();
        std::vector<bool> bits;
        size_t matched = 0;
        for (const auto& bin : h.bins()) {
            const auto first = std::lower_bound(seen.begin(), seen.end(), bin.min);
            const auto last = std::upper_bound(first, seen.end(), bin.max);
            matched += static_cast<size_t>(last - first);
            if (bin.min == bin.max) {
                if (first == last) return std::nullopt;
                continue;
            }
            const uint64_t span = static_cast<uint64_t>(bin.max) - static_cast<uint64_t>(bin.min);
            if (span >= kMostSeenBits || bits.size() + span + 1 > kMostSeenBits) return std::nullopt;
            const uint64_t width = span + 1;
            const size_t start = bits.size();
            bits.resize(start + width, false);
            for (auto v = first; v != last; ++v) bits[start + static_cast<uint64_t>(*v - bin.min)] = true;
        }
        if (matched != seen.size()) return std::nullopt;
        Encoder out;
        for (size_t i = 0; i < bits.size(); i += 8) {
            uint8_t byte = 0;
            for (size_t k = 0; k < 8 && i + k < bits.size(); ++k) byte |= static_cast<uint8_t>(bits[i + k]) << k;
            out.byte(byte);
        }
        return out;
    }

    void value(const Value& v)
    {
        if (v.is_exact()) {
            out_.byte(static_cast<uint8_t>(ValueTag::exact));
            out_.signed_int(v.exact());
        } else if (v.is_per_rank()) {
            // As the value packs its entries: the entry count, whose low bit says whether steps
            // follow the values (without, a list of plain per-rank values costs what it did before
            // steps existed), then each entry's value, step and ranks.
            out_.byte(static_cast<uint8_t>(ValueTag::per_rank));
            const auto packed = v.packed_entries();
            if (packed.empty()) out_.unsigned_int(0);
            out_.bytes().insert(out_.bytes().end(), packed.begin(), packed.end());
        } else {
            out_.byte(static_cast<uint8_t>(v.alike_on_every_rank() ? ValueTag::histogram_alike : ValueTag::histogram));
            histogram(v.histogram());
        }
    }

    void event(const Event& e)
    {
        out_.byte(static_cast<uint8_t>(NodeTag::event));
        out_.unsigned_int(operation_code(e.op));
        const size_t site = signature(e.signature);
        ranks(e.ranks);
        out_.unsigned_int(e.params.size());
        for (const auto& p : e.params) {
            out_.byte(static_cast<uint8_t>(p.role));
            value(p.value);
        }
        // The count's lowest bit says whether the ranks' own times follow, the next whether the
        // time in the calls was measured (format 18).
        const uint64_t flags = (e.in_call.count > 0 ? 2 : 0) | (e.compute_by_rank.empty() ? 0 : 1);
        compute(e.compute, e.compute.count << 2 | flags);
        if (!e.compute_by_rank.empty()) {
            out_.unsigned_int(e.compute_by_rank.size());
            for (const auto& group : e.compute_by_rank) {
                ranks(group.ranks);
                compute(group.compute, group.compute.count);
            }
        }
        if (e.in_call.count == 0) return;
        if (times_ == Times::exact) {
            compute(e.in_call, e.in_call.count);
            return;
        }
        site_in_call_.resize(signature_index_.size());
        site_in_call_[site].times.merge(e.in_call);
        site_in_call_[site].calls += e.compute.count;
    }

    // A file's time in calls, per call site after the body (format 18): the events of a site
    // (there are thousands in a lossless trace of an irregular exchange) would cost as much again
    // as their computation. In the order of the signatures, for each the mean's code in two bytes
    // (kSiteNotMeasured where no event of the site has it) and, for more than one call, the spread.
    void site_times()
    {
        if (times_ == Times::exact) return;
        site_in_call_.resize(signature_index_.size());
        for (const SiteInCall& site : site_in_call_) {
            const uint16_t mean =
                site.calls == 0 ? time_code::kSiteNotMeasured
                                : std::min<uint16_t>(time_code::mean_code(site.times.mean), time_code::kSiteNotMeasured - 1);
            out_.byte(static_cast<uint8_t>(mean & 0xff));
            out_.byte(static_cast<uint8_t>(mean >> 8));
            if (site.calls > 1) spread(site.times);
        }
    }

    // Where the call sites are (format 20), after their times: the modules named once, in the
    // order the sites first name them, then in the order of the signatures for each 0 (no
    // location) or 1 + its module's index, and the address in the module.
    void site_locations(const std::map<uint64_t, SiteLocation>& locations)
    {
        if (times_ == Times::exact) return;
        std::vector<uint64_t> by_index(signature_index_.size());
        for (const auto& [signature, index] : signature_index_) by_index[index] = signature;
        std::map<std::string_view, size_t> module_index;
        std::vector<std::string_view> modules;
        std::vector<const SiteLocation*> found;
        for (const uint64_t signature : by_index) {
            const auto it = locations.find(signature);
            found.push_back(it == locations.end() ? nullptr : &it->second);
            if (found.back() && module_index.try_emplace(it->second.module, modules.size()).second) {
                modules.push_back(it->second.module);
            }
        }
        out_.unsigned_int(modules.size());
        for (const std::string_view module : modules) out_.text(module);
        for (const SiteLocation* location : found) {
            out_.unsigned_int(location ? module_index.at(location->module) + 1 : 0);
            if (location) out_.unsigned_int(location->address);
        }
    }

    // The minimum, maximum and standard deviation of times (format 18; trace/time_code.hpp), or one
    // byte where every call took as long.
    void spread(const TimeStats& t)
    {
        if (t.min == t.max) {
            out_.byte(time_code::kAllAlike);
            return;
        }
        out_.byte(std::min(time_code::spread_code(t.min, time_code::Rounding::down), uint8_t(time_code::kAllAlike - 1)));
        out_.byte(time_code::spread_code(t.max, time_code::Rounding::up));
        out_.byte(time_code::spread_code(std::sqrt(std::max(t.m2, 0.0) / double(t.count))));
    }

    // 0 and the signature where it is new, else 1 + its index among the signatures written so far.
    // A file keeps its low 32 bits (format 14): a file's call sites are told apart by them but for
    // odds of about n^2 / 2^33 for n sites, and they only name call sites there; the merge's
    // messages keep all 64, which decide what merges.
    size_t signature(uint64_t signature)
    {
        const auto [known, added] = signature_index_.try_emplace(signature, signature_index_.size());
        out_.unsigned_int(added ? 0 : known->second + 1);
        if (!added) return known->second;
        if (times_ == Times::exact) {
            out_.fixed64(signature);
        } else {
            out_.fixed32(static_cast<uint32_t>(signature));
        }
        return known->second;
    }

    // `count_field`: the count as stored (the event's carries a flag).
    void compute(const TimeStats& t, uint64_t count_field)
    {
        out_.unsigned_int(count_field);
        if (t.count == 0) return;
        if (times_ == Times::exact) {
            out_.real(t.mean);
            out_.real(t.m2);
            out_.real(t.min);
            out_.real(t.max);
            return;
        }
        // One call: its time is the mean, the minimum and the maximum. Replay re-enacts the mean, to
        // the nanosecond; the rest only describes it.
        out_.unsigned_int(to_nanoseconds(t.mean));
        if (t.count > 1) spread(t);
    }

    void sequence(const Sequence& seq)
    {
        out_.unsigned_int(seq.size());
        for (const auto& node : seq) {
            if (node.is_event()) {
                event(node.event());
            } else {
                const Loop& loop = node.loop();
                out_.byte(static_cast<uint8_t>(loop.last_leaves_out > 0 ? NodeTag::loop_leaving_out : NodeTag::loop));
                value(loop.iterations);
                if (loop.last_leaves_out > 0) out_.unsigned_int(loop.last_leaves_out);
                sequence(loop.body);
            }
        }
    }

    // Opaque operations are written as indices into a table of names that follows the body, so
    // a trace read by another MPI library's build keeps its names.
    uint64_t operation_code(Op op)
    {
        const auto code = static_cast<uint64_t>(op);
        const auto first_opaque = static_cast<uint64_t>(Op::first_opaque);
        if (code < first_opaque) return code;
        auto [it, inserted] = opaque_codes_.emplace(op, first_opaque + opaque_order_.size());
        if (inserted) opaque_order_.push_back(op);
        return it->second;
    }

    void opaque_names()
    {
        out_.unsigned_int(opaque_order_.size());
        for (Op op : opaque_order_) out_.text(operation_name(op));
    }

private:
    Encoder& out_;
    Times times_;
    std::optional<HistogramConfig> shared_config_;
    std::unordered_map<uint64_t, uint64_t> signature_index_;
    struct SiteInCall {
        TimeStats times;
        uint64_t calls = 0;  // the calls of the site's events that have them, as the reader counts them
    };
    std::vector<SiteInCall> site_in_call_;  // by signature index
    std::map<Op, uint64_t> opaque_codes_;
    std::vector<Op> opaque_order_;
};

// A time (or a share) as a 16-bit code of time_code's mean; the least rounded down, the most up,
// so that they stay bounds.
void write_time_code(Encoder& out, double seconds, time_code::Rounding rounding)
{
    const auto code = static_cast<uint16_t>(time_code::code_of(seconds, time_code::kMeanSteps, 0xffff, rounding));
    out.byte(static_cast<uint8_t>(code));
    out.byte(static_cast<uint8_t>(code >> 8));
}

void write_spread(Encoder& out, const RankSpread& s)
{
    write_time_code(out, s.min, time_code::Rounding::down);
    out.unsigned_int(static_cast<uint64_t>(s.min_rank));
    write_time_code(out, s.mean, time_code::Rounding::nearest);
    write_time_code(out, s.max, time_code::Rounding::up);
    out.unsigned_int(static_cast<uint64_t>(s.max_rank));
}

void write_header(Encoder& out, const TraceHeader& h)
{
    out.signed_int(h.ranks);
    out.signed_int(h.precision);
    out.unsigned_int(static_cast<uint64_t>(h.histogram.bins));
    out.unsigned_int(static_cast<uint64_t>(h.histogram.rebalance_interval));
    out.fixed64(h.seed);
    out.text(h.mpi_library);
    out.text(h.command_line);
    out.signed_int(h.start_time);
    out.real(h.traced_seconds);
    out.unsigned_int(h.file_names.size());
    for (const auto& [key, name] : h.file_names) {
        out.signed_int(key);
        out.text(name);
    }
    out.unsigned_int(h.topologies.size());
    for (const auto& [key, text] : h.topologies) {
        out.signed_int(key);
        out.text(text);
    }
    out.fixed64(h.run_id);
    out.text(h.host);
    out.unsigned_int(h.stops.size());
    for (const RankStop& stop : h.stops) {
        out.signed_int(stop.rank);
        out.unsigned_int(stop.calls);
        out.text(stop.reason);
    }
    out.unsigned_int(h.extrapolation.size());
    for (const std::string& line : h.extrapolation) out.text(line);
    // 0: no times; 1: the five spreads; 2: and the tracer's after them (format 21).
    out.byte(!h.rank_times ? 0 : h.rank_times->tracer ? 2 : 1);
    if (h.rank_times) {
        for (const RankSpreadField& field : kRankSpreadFields) write_spread(out, (*h.rank_times).*field.member);
        if (h.rank_times->tracer) write_spread(out, *h.rank_times->tracer);
    }
}

// The modelled operation codes of this build: a trace is only understood by a build whose table
// gives the same codes, which the format version promises; the count is stored as a check.
uint64_t modelled_operation_count() { return static_cast<uint64_t>(Op::first_opaque); }
uint64_t modelled_mpi_operation_count() { return static_cast<uint64_t>(Op::posix_open); }

// ---- Reading --------------------------------------------------------------------------------------

// Vectors whose length the file states are reserved at most this many elements ahead: a count is
// only checked against the bytes the frame claims, so memory grows with what is actually read.
constexpr size_t kMostReserved = 1024;
// The most dimensions of a run of ranks (each has at least two members where the writer makes it).
constexpr size_t kMostRunDimensions = 64;
// A per-rank value's step: no rank's value overflows.
constexpr int64_t kMostStep = limits::kMostValue / limits::kMostRanks;

class BodyReader {
public:
    // `ranks`: the trace's rank count, which every rank list and per-rank value stays within.
    BodyReader(Decoder& in, Times times, uint64_t version = kTraceFormatVersion,
               std::optional<HistogramConfig> shared_config = std::nullopt,
               uint64_t writer_modelled = modelled_operation_count(), int64_t ranks = limits::kMostRanks)
        : in_(in), times_(times), version_(version), shared_config_(shared_config), writer_modelled_(writer_modelled),
          ranks_(ranks)
    {
    }

    // Checked as it is read, before anything expands it: every member a rank of the trace.
    RankList ranks()
    {
        ranks_packed_.clear();
        if (!read_ranks(ranks_packed_)) return {};
        Unpacker packed(ranks_packed_);
        return RankList::unpack(packed);
    }

    // Reads a rank list (checked as ranks() says) and appends its packed form (RankList's) to `out`;
    // false on a problem.
    bool read_ranks(std::vector<uint8_t>& out)
    {
        const size_t n = in_.count();
        pack_unsigned(out, n);
        int64_t size = 0;
        for (size_t i = 0; i < n && in_.ok(); ++i) {
            run_.start = static_cast<Rank>(in_.signed_int());
            const size_t dims = in_.count();
            if (dims > kMostRunDimensions) {
                fail_here("a run of ranks with " + std::to_string(dims) + " dimensions");
                break;
            }
            run_.dims.clear();
            for (size_t d = 0; d < dims && in_.ok(); ++d) {
                const auto count = static_cast<int32_t>(in_.unsigned_int());
                const auto stride = static_cast<int32_t>(in_.signed_int());
                run_.dims.push_back({count, stride});
            }
            if (!in_.ok()) break;
            if (auto problem = rank_run_problem(run_, ranks_)) {
                fail_here("a rank list: " + *problem);
                break;
            }
            if ((size += run_.size()) > ranks_) {
                fail_here("a rank list of more ranks than the trace's " + std::to_string(ranks_));
                break;
            }
            pack_signed(out, run_.start);
            pack_unsigned(out, run_.dims.size());
            for (const auto& dim : run_.dims) {
                pack_unsigned(out, static_cast<uint32_t>(dim.count));
                pack_signed(out, dim.stride);
            }
        }
        return in_.ok();
    }

    // Per-rank values as they are read, without their canonical form made again: for the merge's
    // messages, which this build wrote from values in that form (Value::from_canonical).
    void trust_canonical_values() { canonical_values_ = true; }

    // "corrupt: event 12 (MPI_Send): ..." for a problem in the event being read (numbered as
    // trace_check.hpp numbers them), else at the byte.
    void fail_here(const std::string& what)
    {
        std::string where = "byte " + std::to_string(in_.position());
        if (event_number_ > 0) {
            where = "event " + std::to_string(event_number_);
            if (static_cast<uint64_t>(event_op_) < modelled_operation_count()) {
                where += " (" + std::string(operation_name(event_op_)) + ")";
            }
        }
        in_.fail("corrupt: " + where + ": " + what);
    }

    Histogram histogram()
    {
        if (version_ < 10) return histogram_before_10();
        const uint64_t count_field = in_.unsigned_int();
        HistogramConfig config = shared_config_.value_or(HistogramConfig{});
        if ((count_field & 1) != 0 || !shared_config_) config = own_config();
        const size_t n = in_.count_of(count_field >> 1);
        std::vector<Histogram::Bin> bins;
        bins.reserve(std::min(n, kMostReserved));
        for (size_t i = 0; i < n && in_.ok(); ++i) {
            Histogram::Bin bin;
            bin.min = i == 0 ? in_.signed_int()
                             : static_cast<int64_t>(static_cast<uint64_t>(bins.back().max) + 1 + in_.unsigned_int());
            const uint64_t field = in_.unsigned_int();
            if ((field & 1) == 0) {
                bin.count = field >> 1;
                bin.max = bin.min;
            } else {
                bin.count = field >> 3;
                bin.max = static_cast<int64_t>(static_cast<uint64_t>(bin.min) + 1 + in_.unsigned_int());
                bin.mean_offset = moment((field & 4) != 0, bin.count);
                bin.m2 = moment((field & 2) != 0, bin.count);
            }
            bins.push_back(bin);
        }
        Histogram::Extreme min;
        Histogram::Extreme max;
        min.rank = static_cast<int32_t>(in_.signed_int());
        max.rank = static_cast<int32_t>(in_.signed_int());
        if (!bins.empty()) {
            min.value = bins.front().min;
            max.value = bins.back().max;
        }
        const auto added = static_cast<uint32_t>(in_.unsigned_int());
        return histogram_from(config, std::move(bins), min, max, added);
    }

    // A wide bin's mean or sum of squares: the integer count times it (as_count_multiple), or a double.
    double moment(bool as_count_multiple, uint64_t count)
    {
        return as_count_multiple ? static_cast<double>(in_.unsigned_int()) / static_cast<double>(count) : in_.real();
    }

    // A histogram's own configuration, within what the header's may be.
    HistogramConfig own_config()
    {
        const uint64_t bins = in_.unsigned_int();
        const uint64_t rebalance = in_.unsigned_int();
        if (bins < 1 || bins > uint64_t{limits::kMostBins} || rebalance < 1 ||
            rebalance > uint64_t{limits::kMostRebalanceInterval}) {
            fail_here("a histogram of " + std::to_string(bins) + " bins rebalanced every " + std::to_string(rebalance) +
                      " values");
            return HistogramConfig{};
        }
        return HistogramConfig{static_cast<uint32_t>(bins), static_cast<uint32_t>(rebalance)};
    }

    // Formats 6 to 9: every histogram with its config, bins each with its min and width, extremes
    // with their values.
    Histogram histogram_before_10()
    {
        const HistogramConfig config = own_config();
        const size_t n = in_.count();
        std::vector<Histogram::Bin> bins;
        for (size_t i = 0; i < n && in_.ok(); ++i) {
            Histogram::Bin bin;
            bin.min = in_.signed_int();
            bin.max = bin.min + static_cast<int64_t>(in_.unsigned_int());
            const uint64_t count_field = in_.unsigned_int();
            const bool flagged = version_ >= 9 && bin.max != bin.min;
            const unsigned integral = flagged ? count_field & 3 : 0;
            bin.count = flagged ? count_field >> 2 : count_field;
            if (bin.max != bin.min) {
                bin.mean_offset = moment((integral & 2) != 0, bin.count);
                bin.m2 = moment((integral & 1) != 0, bin.count);
            }
            bins.push_back(bin);
        }
        Histogram::Extreme min;
        min.value = in_.signed_int();
        min.rank = static_cast<int32_t>(in_.signed_int());
        Histogram::Extreme max;
        max.value = in_.signed_int();
        max.rank = static_cast<int32_t>(in_.signed_int());
        const auto added = static_cast<uint32_t>(in_.unsigned_int());
        return histogram_from(config, std::move(bins), min, max, added);
    }

    // The seen values, which follow the rest, and the checked histogram.
    Histogram histogram_from(HistogramConfig config, std::vector<Histogram::Bin> bins, Histogram::Extreme min,
                             Histogram::Extreme max, uint32_t added)
    {
        std::optional<std::vector<int64_t>> seen;
        const auto seen_form = static_cast<SeenValues>(in_.byte());
        // Seen values are peers' (relative ranks, and the symbolic ones): no more than the trace's ranks.
        const uint64_t most_seen = static_cast<uint64_t>(ranks_) + 3;
        if (seen_form == SeenValues::deltas) {
            seen.emplace();
            const size_t count = in_.count();
            if (count > most_seen) fail_here("a histogram with " + std::to_string(count) + " seen values");
            int64_t previous = 0;
            for (size_t i = 0; i < count && in_.ok(); ++i) {
                previous += in_.signed_int();
                seen->push_back(previous);
            }
        } else if (seen_form == SeenValues::runs) {
            seen.emplace();
            const size_t runs = in_.count();
            int64_t previous = 0;
            for (size_t i = 0; i < runs && in_.ok(); ++i) {
                const int64_t first = previous + in_.signed_int();
                const uint64_t length = in_.unsigned_int();
                if (length > kMaxSeenRun || seen->size() + length >= most_seen) {
                    in_.fail("corrupt: a run of " + std::to_string(length) + " seen values before byte " +
                             std::to_string(in_.position()));
                    break;
                }
                for (uint64_t k = 0; k <= length; ++k) seen->push_back(first + static_cast<int64_t>(k));
                previous = first + static_cast<int64_t>(length);
            }
        } else if (seen_form == SeenValues::in_wide_bins && version_ >= 10) {
            seen = seen_in_wide_bins(bins);
        } else if (seen_form != SeenValues::none) {
            in_.fail("corrupt: unknown form of seen values before byte " + std::to_string(in_.position()));
        }
        // A failed read's histogram is never used: any valid config makes it.
        if (!in_.ok()) return Histogram(HistogramConfig{});
        auto histogram = Histogram::from_parts(config, std::move(bins), min, max, std::move(seen), added);
        if (!histogram) {
            fail_here("inconsistent histogram before byte " + std::to_string(in_.position()));
            return Histogram(HistogramConfig{});
        }
        return std::move(*histogram);
    }

    // The bins' values and, bit by bit, those of the wide bins (see the writer).
    std::optional<std::vector<int64_t>> seen_in_wide_bins(const std::vector<Histogram::Bin>& bins)
    {
        uint64_t total_bits = 0;
        for (const auto& bin : bins) {
            if (bin.max <= bin.min) continue;
            const uint64_t span = static_cast<uint64_t>(bin.max) - static_cast<uint64_t>(bin.min);
            total_bits += std::min(span, kMostSeenBits) + 1;
            if (total_bits > kMostSeenBits) {
                in_.fail("corrupt: seen values of bins too wide before byte " + std::to_string(in_.position()));
                return std::nullopt;
            }
        }
        std::vector<uint8_t> packed((total_bits + 7) / 8);
        for (auto& byte : packed) byte = in_.byte();
        std::vector<int64_t> seen;
        uint64_t bit = 0;
        for (const auto& bin : bins) {
            if (bin.max <= bin.min) {
                seen.push_back(bin.min);
                continue;
            }
            for (int64_t v = bin.min;; ++v, ++bit) {
                if ((packed[bit / 8] >> (bit % 8)) & 1) seen.push_back(v);
                if (v == bin.max) break;
            }
            ++bit;
        }
        return seen;
    }

    Value value()
    {
        const auto tag = static_cast<ValueTag>(in_.byte());
        switch (tag) {
        case ValueTag::exact:
            return Value(in_.signed_int());
        case ValueTag::per_rank: {
            const size_t at = in_.position();
            const uint64_t header = in_.unsigned_int();
            const size_t n = in_.count_of(header >> 1);
            const bool steps = (header & 1) != 0;
            // Read into the packed form the value keeps (Value::packed_entries), which is the file's.
            value_packed_.clear();
            pack_unsigned(value_packed_, n << 1 | (steps ? 1 : 0));
            int64_t listed = 0;
            for (size_t i = 0; i < n && in_.ok(); ++i) {
                const int64_t v = in_.signed_int();
                const int64_t step = steps ? in_.signed_int() : 0;
                pack_signed(value_packed_, v);
                if (steps) pack_signed(value_packed_, step);
                const size_t ranks_at = value_packed_.size();
                if (!read_ranks(value_packed_)) break;
                Unpacker ranks(std::span<const uint8_t>(value_packed_).subspan(ranks_at));
                listed += RankList::size_of_packed(ranks);
                // Reading the value lists every rank and its value: a damaged size must not ask for the
                // memory, nor a value or step overflow.
                if (listed > ranks_) {
                    fail_here("a per-rank value for " + std::to_string(listed) + " ranks at byte " + std::to_string(at));
                } else if (v < -limits::kMostValue || v > limits::kMostValue ||
                           step < -kMostStep || step > kMostStep) {
                    fail_here("a per-rank value " + std::to_string(v) + " with step " + std::to_string(step) +
                              " at byte " + std::to_string(at));
                }
            }
            if (!in_.ok()) return Value();
            const Value as_read = Value::from_canonical(value_packed_);
            if (canonical_values_) return as_read;
            // A file's may be in any form.
            Value value(as_read.per_rank_entries());
            int64_t distinct = 0;
            for (const auto& entry : value.per_rank_entries()) distinct += entry.ranks.size();
            if (distinct != listed) {
                fail_here("a rank with two per-rank values at byte " + std::to_string(at));
                return Value();
            }
            return value;
        }
        case ValueTag::histogram:
            return Value(histogram());
        case ValueTag::histogram_alike:
            if (version_ >= 13) return Value(histogram(), true);
            break;
        }
        in_.fail("corrupt: unknown value kind " + std::to_string(int(tag)) + " at byte " +
                 std::to_string(in_.position()));
        return Value();
    }

    Event event()
    {
        Event e;
        ++event_number_;
        e.op = static_cast<Op>(this_build_code(in_.unsigned_int()));  // opaque ones get names once the table is read
        event_op_ = e.op;
        e.signature = signature();
        e.ranks = ranks();
        const size_t n = in_.count();
        for (size_t i = 0; i < n && in_.ok(); ++i) {
            const uint8_t role = in_.byte();
            if (role >= kRoleCount) {
                in_.fail("corrupt: unknown parameter role " + std::to_string(role));
                break;
            }
            e.params.push_back({static_cast<Role>(role), value()});
            if (version_ < 12 && (role == int(Role::completed_set) || role == int(Role::cancelled_set))) {
                e.params.back().value = completed_set_before_12(e.params.back().value);
            }
        }
        const uint64_t count_field = in_.unsigned_int();
        const int flag_bits = version_ >= 18 ? 2 : version_ >= 8 ? 1 : 0;
        const bool by_rank = flag_bits >= 1 && (count_field & 1) != 0;
        const bool measured_in_call = flag_bits >= 2 && (count_field & 2) != 0;
        e.compute = compute(count_field >> flag_bits);
        if (by_rank) {
            const size_t groups = in_.count();
            for (size_t i = 0; i < groups && in_.ok(); ++i) {
                RankCompute group;
                group.ranks = ranks();
                group.compute = compute(in_.unsigned_int());
                e.compute_by_rank.push_back(std::move(group));
            }
        }
        if (measured_in_call && times_ == Times::exact) {
            e.in_call = compute(in_.unsigned_int());
        } else if (measured_in_call) {
            // Its call site's, after the body (resolve_site_times); its count says it has them.
            e.in_call.count = e.compute.count;
            site_calls_.resize(signatures_.size());
            site_calls_[last_signature_index_] += e.compute.count;
        }
        return e;
    }

    // The table site_times() wrote: each event that has a time in calls takes its call site's, for
    // its own calls.
    void resolve_site_times(Sequence& seq)
    {
        if (times_ == Times::exact || version_ < 18) return;
        site_calls_.resize(signatures_.size());
        std::unordered_map<uint64_t, TimeStats> of_signature;  // two sites of one file signature share theirs
        for (size_t i = 0; i < signatures_.size() && in_.ok(); ++i) {
            const uint8_t low = in_.byte();
            const uint16_t mean = static_cast<uint16_t>(low | in_.byte() << 8);
            if (mean == time_code::kSiteNotMeasured) {
                if (site_calls_[i] > 0) in_.fail("corrupt: events of call site " + std::to_string(i) + " have times in calls it has not");
                continue;
            }
            if (site_calls_[i] == 0) in_.fail("corrupt: call site " + std::to_string(i) + " has times in calls no event has");
            TimeStats t;
            t.count = site_calls_[i];
            t.mean = t.min = t.max = time_code::mean_seconds(mean);
            if (t.count > 1) spread(t);
            of_signature[signatures_[i]].merge(t);
        }
        if (in_.ok()) give_site_times(seq, of_signature);
    }

    // The table site_locations() wrote, by the signatures as read.
    std::map<uint64_t, SiteLocation> site_locations()
    {
        std::map<uint64_t, SiteLocation> out;
        if (times_ == Times::exact || version_ < 20) return out;
        const uint64_t count = in_.unsigned_int();
        // Each module is some site's: no more of them than sites.
        if (count > signatures_.size()) {
            in_.fail("corrupt: " + std::to_string(count) + " modules for " + std::to_string(signatures_.size()) + " call sites");
            return out;
        }
        std::vector<std::string> modules;
        for (uint64_t i = 0; i < count && in_.ok(); ++i) modules.push_back(in_.text(limits::kMostNameBytes));
        for (size_t i = 0; i < signatures_.size() && in_.ok(); ++i) {
            const uint64_t module = in_.unsigned_int();
            if (module == 0) continue;
            if (module > modules.size()) {
                in_.fail("corrupt: call site " + std::to_string(i) + " names module " + std::to_string(module) + " of " +
                         std::to_string(modules.size()));
                break;
            }
            out[signatures_[i]] = {modules[module - 1], in_.unsigned_int()};
        }
        return out;
    }

    // Bounds of the times, but for the mean's own rounding where every call took as long.
    void spread(TimeStats& t)
    {
        const uint8_t min = in_.byte();
        if (min == time_code::kAllAlike) return;  // the minimum and maximum are the mean
        t.min = std::min(time_code::spread_seconds(min), t.mean);
        t.max = std::max(time_code::spread_seconds(in_.byte()), t.mean);
        const double deviation = time_code::spread_seconds(in_.byte());
        t.m2 = deviation * deviation * double(t.count);
    }

    // Format 12 gave a single completed position small values of its own (trace/completion_set.hpp).
    // A histogram of old values becomes one that answers each old bin's answer, as often.
    static Value completed_set_before_12(const Value& old)
    {
        if (old.is_exact()) return Value(completed_set_value_before_12(old.exact()));
        if (old.is_per_rank()) {
            std::vector<PerRankValue> entries;
            for (const auto& entry : old.per_rank()) {
                entries.push_back({completed_set_value_before_12(entry.value), entry.ranks});
            }
            return Value(entries);
        }
        const Histogram& histogram = old.histogram();
        Histogram converted(histogram.config());
        for (size_t i = 0; i < histogram.bins().size(); ++i) {
            converted.add(completed_set_value_before_12(histogram.bin_value(i)), histogram.min().rank,
                          histogram.bins()[i].count);
        }
        return Value(converted);
    }

    uint64_t signature()
    {
        const uint64_t index = in_.unsigned_int();
        if (index == 0) {
            const bool narrow = times_ == Times::nanoseconds && version_ >= 14;
            last_signature_index_ = signatures_.size();
            return signatures_.emplace_back(narrow ? in_.fixed32() : in_.fixed64());
        }
        if (index > signatures_.size()) {
            in_.fail("corrupt: signature " + std::to_string(index) + " of " + std::to_string(signatures_.size()));
            return 0;
        }
        last_signature_index_ = index - 1;
        return signatures_[index - 1];
    }

    static void give_site_times(Sequence& seq, const std::unordered_map<uint64_t, TimeStats>& of_signature)
    {
        for_each_event(seq, [&](Event& e) {
            if (e.in_call.count == 0) return;
            const TimeStats& site = of_signature.at(e.signature);
            e.in_call = site.share(e.compute.count, site.count);
        });
    }

    TimeStats compute(uint64_t count)
    {
        TimeStats t;
        t.count = count;
        if (t.count == 0) return t;
        if (times_ == Times::exact) {
            t.mean = in_.real();
            t.m2 = in_.real();
            t.min = in_.real();
            t.max = in_.real();
            return t;
        }
        t.mean = from_nanoseconds(in_.unsigned_int());
        t.min = t.max = t.mean;
        if (t.count == 1) return t;
        if (version_ >= 18) {
            spread(t);
            return t;
        }
        const uint64_t min = in_.unsigned_int();
        t.min = from_nanoseconds(min);
        t.max = from_nanoseconds(min + in_.unsigned_int());
        const double deviation = from_nanoseconds(in_.unsigned_int());
        t.m2 = deviation * deviation * double(t.count);
        return t;
    }

    Sequence sequence(int depth = 0)
    {
        Sequence seq;
        if (depth > 1000) {
            in_.fail("corrupt: loops nested deeper than 1000");
            return seq;
        }
        const size_t n = in_.count();
        seq.reserve(std::min(n, kMostReserved));
        for (size_t i = 0; i < n && in_.ok(); ++i) {
            const auto tag = static_cast<NodeTag>(in_.byte());
            if (tag == NodeTag::event) {
                seq.push_back(Node{event()});
            } else if (tag == NodeTag::loop || (tag == NodeTag::loop_leaving_out && version_ >= 14)) {
                // Made in place (seq does not grow while its body is read).
                Loop& loop = seq.emplace_back().item.emplace<Loop>();
                loop.iterations = value();
                if (tag == NodeTag::loop_leaving_out) loop.last_leaves_out = static_cast<uint32_t>(in_.count());
                loop.body = sequence(depth + 1);
                if (loop.last_leaves_out > loop.body.size()) {
                    in_.fail("corrupt: a loop leaves out more nodes than its body has, at byte " +
                             std::to_string(in_.position()));
                }
            } else {
                in_.fail("corrupt: unknown node kind " + std::to_string(int(tag)) + " at byte " +
                         std::to_string(in_.position()));
            }
        }
        return seq;
    }

    // Opaque events were read with file codes; give them this process's operations by name.
    void resolve_opaque_names(Sequence& seq)
    {
        const size_t n = in_.count();
        std::vector<Op> ops;
        for (size_t i = 0; i < n && in_.ok(); ++i) {
            const std::string name = in_.text(limits::kMostNameBytes);
            // Names of C functions (MPI_...): anything else, a newline included, is damage.
            const auto identifier = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
            if (name.empty() || !std::all_of(name.begin(), name.end(), identifier)) {
                in_.fail("corrupt: the name of unmodelled operation " + std::to_string(i) + " is not a function's name");
            }
            if (in_.ok()) ops.push_back(operation_by_name(name));
        }
        if (!in_.ok()) return;
        resolve(seq, ops);
    }

private:
    // Working memory of ranks() and value(), kept from one to the next.
    RankRun run_;
    std::vector<uint8_t> ranks_packed_;
    std::vector<uint8_t> value_packed_;
    bool canonical_values_ = false;

    // A code of a build whose table of MPI functions is a beginning of this one's (functions are added
    // at its end): its POSIX operations and opaque codes come that many places earlier.
    uint64_t this_build_code(uint64_t code) const
    {
        const uint64_t posix = modelled_operation_count() - modelled_mpi_operation_count();
        const uint64_t writer_mpi = writer_modelled_ - posix;
        if (code < writer_mpi) return code;
        if (code < writer_modelled_) return code - writer_mpi + modelled_mpi_operation_count();
        return code - writer_modelled_ + modelled_operation_count();
    }

    void resolve(Sequence& seq, const std::vector<Op>& ops)
    {
        for (auto& node : seq) {
            if (node.is_loop()) {
                resolve(node.loop().body, ops);
                continue;
            }
            auto& e = node.event();
            const auto code = static_cast<uint64_t>(e.op);
            if (code < modelled_operation_count()) continue;
            const uint64_t index = code - modelled_operation_count();
            if (index >= ops.size()) {
                in_.fail("corrupt: operation code " + std::to_string(code) + " has no name");
                return;
            }
            e.op = ops[index];
        }
    }

    Decoder& in_;
    Times times_;
    uint64_t version_;
    std::optional<HistogramConfig> shared_config_;
    uint64_t writer_modelled_;
    int64_t ranks_;
    std::vector<uint64_t> signatures_;
    size_t last_signature_index_ = 0;
    std::vector<uint64_t> site_calls_;  // by signature index: the calls of its events that have times in calls
    int64_t event_number_ = 0;  // of the event being read, from 1
    Op event_op_{};
};

double read_time_code(Decoder& in)
{
    const uint8_t low = in.byte();
    return time_code::mean_seconds(static_cast<uint16_t>(low | in.byte() << 8));
}

// Ranks stay ranks: trace_check holds them within the header's count.
Rank read_rank(Decoder& in) { return static_cast<Rank>(std::min<uint64_t>(in.unsigned_int(), INT32_MAX)); }

RankSpread read_spread(Decoder& in)
{
    RankSpread s;
    s.min = read_time_code(in);
    s.min_rank = read_rank(in);
    s.mean = read_time_code(in);
    s.max = read_time_code(in);
    s.max_rank = read_rank(in);
    return s;
}

TraceHeader read_header(Decoder& in, uint64_t version)
{
    TraceHeader h;
    h.ranks = static_cast<int32_t>(in.signed_int());
    h.precision = static_cast<int32_t>(in.signed_int());
    h.histogram.bins = static_cast<uint32_t>(in.unsigned_int());
    h.histogram.rebalance_interval = static_cast<uint32_t>(in.unsigned_int());
    h.seed = in.fixed64();
    h.mpi_library = in.text();
    h.command_line = in.text();
    h.start_time = in.signed_int();
    h.traced_seconds = in.real();
    const uint64_t files = in.unsigned_int();
    for (uint64_t i = 0; i < files && in.ok(); ++i) {
        const int64_t key = in.signed_int();
        h.file_names[key] = in.text();
    }
    if (version < 15) return h;
    const uint64_t topologies = in.unsigned_int();
    for (uint64_t i = 0; i < topologies && in.ok(); ++i) {
        const int64_t key = in.signed_int();
        h.topologies[key] = in.text();
    }
    if (version < 16) return h;
    h.run_id = in.fixed64();
    h.host = in.text();
    const uint64_t stops = in.unsigned_int();
    for (uint64_t i = 0; i < stops && in.ok(); ++i) {
        RankStop stop;
        stop.rank = static_cast<Rank>(in.signed_int());
        stop.calls = in.unsigned_int();
        stop.reason = in.text();
        h.stops.push_back(std::move(stop));
    }
    if (version < 17) return h;
    const uint64_t lines = in.unsigned_int();
    for (uint64_t i = 0; i < lines && in.ok(); ++i) h.extrapolation.push_back(in.text());
    if (version < 19) return h;
    const uint8_t presence = in.byte();
    if (presence == 0) return h;
    RankTimes times;
    for (const RankSpreadField& field : kRankSpreadFields) times.*field.member = read_spread(in);
    if (version >= 21 && presence >= 2) times.tracer = read_spread(in);
    h.rank_times = times;
    return h;
}

uint32_t crc32(const uint8_t* data, size_t size)
{
    boost::crc_32_type crc;
    crc.process_bytes(data, size);
    return crc.checksum();
}

}  // namespace

size_t encoded_size(const Value& value)
{
    Encoder out;
    // As in a file, whose histograms share the header's config.
    std::optional<HistogramConfig> config;
    if (!value.is_exact() && !value.is_per_rank()) config = value.histogram().config();
    BodyWriter(out, Times::nanoseconds, config).value(value);
    return out.bytes().size();
}

std::vector<uint8_t> encode_sequence(const Sequence& sequence)
{
    Encoder out;
    BodyWriter body(out, Times::exact);
    body.sequence(sequence);
    body.opaque_names();
    return std::move(out.bytes());
}

SequenceDecodeResult decode_sequence(const std::vector<uint8_t>& bytes)
{
    Decoder in(bytes.data(), bytes.size());
    BodyReader body(in, Times::exact);
    body.trust_canonical_values();
    Sequence seq = body.sequence();
    body.resolve_opaque_names(seq);
    if (!in.ok()) return {std::nullopt, in.error()};
    return {std::move(seq), {}};
}

int compression_level(size_t payload_bytes, double traced_seconds)
{
    // zstd's speed at each level on traces (`zstd -b`-like timing of the tracer's own payloads, MG,
    // amr and an irregular exchange, 2-core machine), rounded down: the strongest level that fits the
    // budget is taken. Stronger levels save 1-6% of the bytes at 4-40x the time.
    struct Speed {
        int level;
        double bytes_per_second;
    };
    constexpr Speed kSpeeds[] = {{19, 3e6}, {16, 6e6}, {14, 10e6}, {12, 25e6}, {9, 60e6}, {6, 120e6}};
    // The job waits for rank 0's write at MPI_Finalize: compressing may take 1% of the traced run,
    // at least 1 ms (small traces always get level 19) and at most half a second.
    const double budget = std::clamp(0.01 * traced_seconds, 0.001, 0.5);
    for (const Speed& speed : kSpeeds) {
        if (double(payload_bytes) / speed.bytes_per_second <= budget) return speed.level;
    }
    return 3;
}

std::vector<uint8_t> encode_trace(const Trace& trace, bool compress)
{
    Encoder payload;
    payload.unsigned_int(modelled_operation_count());
    write_header(payload, trace.header);
    BodyWriter body(payload, Times::nanoseconds, trace.header.histogram);
    body.sequence(trace.body);
    body.opaque_names();
    body.site_times();
    body.site_locations(trace.locations);
    const std::vector<uint8_t> packed = compress ? compressed(payload.bytes(), trace.header.traced_seconds) : std::vector<uint8_t>{};
    // Beyond the ratio the reader takes, plain (a trace of the same few bytes over and over).
    const bool use_packed = !packed.empty() && packed.size() < payload.bytes().size() &&
                            payload.bytes().size() <= packed.size() * limits::kMostCompressionRatio;

    Encoder out;
    for (char c : kMagic) out.byte(static_cast<uint8_t>(c));
    out.fixed64(0);  // total size, patched below
    out.unsigned_int(kTraceFormatVersion);
    out.byte(static_cast<uint8_t>(use_packed ? Payload::zstd : Payload::plain));
    auto& bytes = out.bytes();
    const auto& stored = use_packed ? packed : payload.bytes();
    bytes.insert(bytes.end(), stored.begin(), stored.end());
    const uint64_t total = bytes.size() + 4;
    for (int i = 0; i < 8; ++i) bytes[sizeof(kMagic) + i] = static_cast<uint8_t>(total >> (8 * i));
    const uint32_t crc = crc32(bytes.data(), bytes.size());
    for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<uint8_t>(crc >> (8 * i)));
    return std::move(bytes);
}

namespace {

// A trace file's bytes, in memory or on disk, which decode() reads a window at a time.
class Input {
public:
    virtual ~Input() = default;
    virtual uint64_t size() const = 0;
    // `n` bytes from `offset` (within size()) into `out`; false on a read error.
    virtual bool read(uint64_t offset, uint8_t* out, size_t n) = 0;
};

class MemoryInput : public Input {
public:
    explicit MemoryInput(const std::vector<uint8_t>& bytes) : bytes_(bytes) {}
    uint64_t size() const override { return bytes_.size(); }
    bool read(uint64_t offset, uint8_t* out, size_t n) override
    {
        if (n > 0) std::memcpy(out, bytes_.data() + offset, n);  // an empty input has no data()
        return true;
    }

private:
    const std::vector<uint8_t>& bytes_;
};

class FileInput : public Input {
public:
    FileInput(std::ifstream& file, uint64_t size) : file_(file), size_(size) {}
    uint64_t size() const override { return size_; }
    bool read(uint64_t offset, uint8_t* out, size_t n) override
    {
        file_.seekg(static_cast<std::streamoff>(offset));
        file_.read(reinterpret_cast<char*>(out), static_cast<std::streamsize>(n));
        return static_cast<bool>(file_);
    }

private:
    std::ifstream& file_;
    uint64_t size_;
};

constexpr size_t kChunk = size_t{1} << 16;
// The longest frame header zstd writes (ZSTD_FRAMEHEADERSIZE_MAX, of its static-linking API only).
constexpr size_t kZstdFrameHeaderMax = 18;

// The bytes of [at, end) of an input as they are.
class PlainStream : public ByteStream {
public:
    PlainStream(Input& input, uint64_t at, uint64_t end) : input_(input), at_(at), end_(end) {}
    size_t read(uint8_t* out, size_t max) override
    {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(max, end_ - at_));
        if (n == 0 || !input_.read(at_, out, n)) {
            failed_ = n > 0;
            return 0;
        }
        at_ += n;
        return n;
    }
    std::string error() const override { return failed_ ? "read error" : ""; }

private:
    Input& input_;
    uint64_t at_;
    uint64_t end_;
    bool failed_ = false;
};

// The decompressed contents of the zstd frame that [at, end) of an input holds.
class ZstdStream : public ByteStream {
public:
    ZstdStream(Input& input, uint64_t at, uint64_t end)
        : input_(input), at_(at), end_(end), context_(ZSTD_createDStream()),
          chunk_(static_cast<size_t>(std::min<uint64_t>(kChunk, end - at)))
    {
        // A frame that asks for a larger window is refused (by ZSTD_decompressStream) before any is allocated.
        ZSTD_DCtx_setParameter(context_, ZSTD_d_windowLogMax, limits::kMostZstdWindowLog);
    }
    ~ZstdStream() override { ZSTD_freeDStream(context_); }
    ZstdStream(const ZstdStream&) = delete;
    ZstdStream& operator=(const ZstdStream&) = delete;

    size_t read(uint8_t* out, size_t max) override
    {
        ZSTD_outBuffer output{out, max, 0};
        while (output.pos < output.size && error_.empty() && !(finished_ && in_.pos == in_.size)) {
            if (in_.pos == in_.size && !next_chunk()) break;
            const size_t left = ZSTD_decompressStream(context_, &output, &in_);
            if (ZSTD_isError(left)) {
                error_ = std::string("corrupt: the compressed trace does not decompress (") + ZSTD_getErrorName(left) + ")";
            } else {
                finished_ = left == 0;
            }
        }
        return output.pos;
    }

    std::string error() const override
    {
        if (!error_.empty()) return error_;
        return "corrupt: the compressed trace does not decompress (short)";
    }
    // Whether the frame ended, and the input with it.
    bool complete() const { return error_.empty() && finished_ && in_.pos == in_.size && at_ == end_; }

private:
    bool next_chunk()
    {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk_.size(), end_ - at_));
        if (n == 0) return false;
        if (!input_.read(at_, chunk_.data(), n)) {
            error_ = "read error";
            return false;
        }
        at_ += n;
        in_ = ZSTD_inBuffer{chunk_.data(), n, 0};
        return true;
    }

    Input& input_;
    uint64_t at_;
    uint64_t end_;
    ZSTD_DStream* context_;
    std::vector<uint8_t> chunk_;
    ZSTD_inBuffer in_{nullptr, 0, 0};
    bool finished_ = false;
    std::string error_;
};

// The checksum of the first `size` bytes, read a chunk at a time.
std::optional<uint32_t> checksum(Input& input, uint64_t size)
{
    boost::crc_32_type crc;
    std::vector<uint8_t> chunk(static_cast<size_t>(std::min<uint64_t>(kChunk, size)));
    for (uint64_t at = 0; at < size;) {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk.size(), size - at));
        if (!input.read(at, chunk.data(), n)) return std::nullopt;
        crc.process_bytes(chunk.data(), n);
        at += n;
    }
    return crc.checksum();
}

// What the prefix of a trace file says, once checked.
struct Framing {
    std::vector<uint8_t> head;  // the first bytes
    uint64_t version = 0;
    uint64_t after_version = 0;  // where the form of the contents (from format 11) or the contents start
    uint64_t body_end = 0;       // where the checksum starts
};

// The checksum stored at `body_end` against that of the bytes before it; an error message or empty.
std::string check_checksum(Input& input, uint64_t body_end)
{
    uint8_t stored_crc[4];
    if (!input.read(body_end, stored_crc, 4)) return "read error";
    uint32_t stored = 0;
    for (int i = 0; i < 4; ++i) stored |= uint32_t(stored_crc[i]) << (8 * i);
    const auto computed = checksum(input, body_end);
    if (!computed) return "read error";
    if (*computed != stored) return "corrupt: checksum mismatch";
    return {};
}

// The magic number, format version and total size, then the checksum, into `framing`: before
// anything else is read, the file must be a whole trace this build reads. An error message or empty.
std::string check_framing(Input& input, Framing& framing)
{
    // Magic, size, version and form: at most 8 + 8 + 10 + 1 bytes.
    std::vector<uint8_t>& head = framing.head;
    head.resize(static_cast<size_t>(std::min<uint64_t>(input.size(), 32)));
    if (!input.read(0, head.data(), head.size())) return "read error";
    if (head.size() < sizeof(kMagic) || std::memcmp(head.data(), kMagic, sizeof(kMagic)) != 0) {
        return "not an h-trace file (bad magic number)";
    }
    Decoder prefix(head.data(), head.size(), sizeof(kMagic));
    const uint64_t total = prefix.fixed64();
    const uint64_t version = prefix.unsigned_int();
    if (!prefix.ok()) return prefix.error();
    if (version < kOldestReadableFormatVersion || version > kTraceFormatVersion) {
        return "format version " + std::to_string(version) +
               (version > kTraceFormatVersion ? " is newer than" : " is not") + " the versions this build reads (" +
               std::to_string(kOldestReadableFormatVersion) + " to " + std::to_string(kTraceFormatVersion) + ")";
    }
    if (input.size() < total) {
        return "truncated at byte " + std::to_string(input.size()) + " (expected " + std::to_string(total) + ")";
    }
    if (input.size() > total) {
        return "corrupt: " + std::to_string(input.size() - total) + " bytes after the end of the trace";
    }
    framing.version = version;
    framing.after_version = prefix.position();
    framing.body_end = input.size() - 4;
    return check_checksum(input, framing.body_end);
}

// The contents after the prefix as they are read: the stream and how many bytes it gives.
struct Contents {
    std::unique_ptr<ByteStream> stream;
    ZstdStream* frame = nullptr;  // the stream, where the contents are compressed
    uint64_t size = 0;
};

// The zstd frame in [start, end), whose header must claim contents of a size it may hold; an error
// message or empty.
std::string open_zstd_frame(Input& input, uint64_t start, uint64_t end, Contents& contents)
{
    const uint64_t payload_size = end - start;
    std::vector<uint8_t> frame_head(static_cast<size_t>(std::min<uint64_t>(payload_size, kZstdFrameHeaderMax)));
    if (!input.read(start, frame_head.data(), frame_head.size())) return "read error";
    const unsigned long long size = ZSTD_getFrameContentSize(frame_head.data(), frame_head.size());
    if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN) {
        return "corrupt: the compressed trace has no valid zstd frame";
    }
    // Nothing is allocated for what the frame claims; the claim only bounds what is read.
    if (size > limits::kMostPayloadBytes || size > payload_size * limits::kMostCompressionRatio) {
        return "corrupt: the compressed trace claims " + std::to_string(size) + " bytes from " +
               std::to_string(payload_size) + " (at most " + std::to_string(limits::kMostPayloadBytes) + ", and " +
               std::to_string(limits::kMostCompressionRatio) + " times the frame)";
    }
    auto zstd = std::make_unique<ZstdStream>(input, start, end);
    contents.frame = zstd.get();
    contents.stream = std::move(zstd);
    contents.size = size;
    return {};
}

// From format 11 the contents may be one zstd frame (see Payload), as a byte after the version says.
std::string open_contents(Input& input, const Framing& framing, Contents& contents)
{
    uint64_t payload_start = framing.after_version;
    if (framing.version >= 11) {
        Decoder form(framing.head.data(), std::min<uint64_t>(framing.head.size(), framing.body_end), payload_start);
        const auto stored_form = static_cast<Payload>(form.byte());
        if (!form.ok()) return form.error();
        payload_start = form.position();
        if (stored_form == Payload::zstd) return open_zstd_frame(input, payload_start, framing.body_end, contents);
        if (stored_form != Payload::plain) return "corrupt: unknown form of the trace's contents";
    }
    contents.stream = std::make_unique<PlainStream>(input, payload_start, framing.body_end);
    contents.size = framing.body_end - payload_start;
    return {};
}

// The header, then the body, each checked, and nothing left over.
DecodeResult decode_contents(Contents& contents, uint64_t version)
{
    Decoder in(*contents.stream, static_cast<size_t>(contents.size));
    // Builds add MPI functions at the end of their table: an older build's codes are read as this one's.
    const uint64_t modelled = in.unsigned_int();
    const uint64_t posix = modelled_operation_count() - modelled_mpi_operation_count();
    if (in.ok() && (modelled > modelled_operation_count() || modelled < posix)) {
        return {std::nullopt, "written by a build that models " + std::to_string(modelled) +
                                  " operations, this build models " + std::to_string(modelled_operation_count())};
    }
    Trace trace;
    trace.header = read_header(in, version);
    if (!in.ok()) return {std::nullopt, in.error()};
    // The header first: the body's histograms take its config, and its rank lists its rank count.
    if (auto problem = check_header(trace.header); !problem.empty()) return {std::nullopt, problem};
    BodyReader body(in, Times::nanoseconds, version, trace.header.histogram, modelled, trace.header.ranks);
    trace.body = body.sequence();
    body.resolve_opaque_names(trace.body);
    body.resolve_site_times(trace.body);
    trace.locations = body.site_locations();
    if (in.ok() && !in.at_end()) in.fail("corrupt: unread bytes at byte " + std::to_string(in.position()));
    if (in.ok() && contents.frame != nullptr) {
        // The frame must end where its contents did, and the file with it.
        uint8_t beyond = 0;
        if (contents.frame->read(&beyond, 1) != 0 || !contents.frame->complete()) in.fail(contents.frame->error());
    }
    if (!in.ok()) return {std::nullopt, in.error()};
    if (auto problem = check_trace(trace); !problem.empty()) return {std::nullopt, problem};
    return {std::move(trace), {}};
}

// A whole trace file: its prefix and checksum checked first, then its contents decoded as they are
// read and decompressed, never all in memory at once.
DecodeResult decode(Input& input)
{
    Framing framing;
    if (std::string error = check_framing(input, framing); !error.empty()) return {std::nullopt, error};
    Contents contents;
    if (std::string error = open_contents(input, framing, contents); !error.empty()) return {std::nullopt, error};
    return decode_contents(contents, framing.version);
}

}  // namespace

DecodeResult decode_trace(const std::vector<uint8_t>& bytes)
{
    MemoryInput input(bytes);
    return decode(input);
}

// The file is read twice, a chunk at a time (its checksum, then its contents as they are decoded):
// a replaying rank holds the trace, not the file.
DecodeResult read_trace_file(const std::string& path)
{
    std::ifstream file(path, std::ios::binary | std::ios::ate);
    if (!file) return {std::nullopt, std::strerror(errno)};
    std::error_code ignored;
    if (std::filesystem::is_directory(path, ignored)) return {std::nullopt, std::strerror(EISDIR)};
    const std::streamoff size = file.tellg();
    if (size < 0) return {std::nullopt, "read error"};
    FileInput input(file, static_cast<uint64_t>(size));
    return decode(input);
}

namespace {

// All of `bytes` to `fd`, through short writes and interruptions; an error message or empty.
std::string write_all(int fd, const std::vector<uint8_t>& bytes)
{
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return std::strerror(errno);
        if (n == 0) return "write error";
        done += static_cast<size_t>(n);
    }
    return {};
}

}  // namespace

// The trace goes to PATH.tmp.PID first and replaces PATH only once it is all on disk: a failed write
// (full disk, file size limit) leaves whatever PATH held before, and no half file.
std::string write_trace_file(const std::string& path, const Trace& trace)
{
    const std::vector<uint8_t> bytes = encode_trace(trace);
    const std::string temporary = path + ".tmp." + std::to_string(::getpid());
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) return temporary + ": " + std::strerror(errno);
    std::string error = write_all(fd, bytes);
    if (error.empty() && ::fsync(fd) != 0) error = std::strerror(errno);
    if (::close(fd) != 0 && error.empty()) error = std::strerror(errno);
    if (error.empty() && std::rename(temporary.c_str(), path.c_str()) != 0) error = std::strerror(errno);
    if (!error.empty()) ::unlink(temporary.c_str());
    return error;
}

}  // namespace htrace
