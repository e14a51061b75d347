#include "trace/render.hpp"

#include "trace/completion_set.hpp"
#include "trace/rank_times.hpp"
#include "trace/walk.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <sstream>

namespace htrace {
namespace {

std::string symbolic(int64_t v, Role role)
{
    if (role_is_peer(role)) {
        if (v == kAnySource) return "ANY_SOURCE";
        if (v == kProcNull) return "PROC_NULL";
        if (v == kRootSelf) return "ROOT";
    }
    if ((role == Role::tag || role == Role::recv_tag || role == Role::matched_tag) && v == kAnyTag) return "ANY_TAG";
    if ((role == Role::color || role == Role::new_comm || role == Role::remote_leader) && v == kNoComm) return "COMM_NULL";
    return std::to_string(v);
}

std::string format_double(double d)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", d);
    return buf;
}

std::string render_histogram(const Histogram& h, Role role)
{
    std::string out = "hist(n=" + std::to_string(h.count()) + " mean=" + format_double(h.mean()) +
                      " min=" + symbolic(h.min().value, role) + "@" + std::to_string(h.min().rank) +
                      " max=" + symbolic(h.max().value, role) + "@" + std::to_string(h.max().rank) + " bins=[";
    bool first = true;
    for (const auto& bin : h.bins()) {
        if (!first) out += ' ';
        first = false;
        out += symbolic(bin.min, role);
        if (bin.max != bin.min) out += ".." + symbolic(bin.max, role);
        out += ":" + std::to_string(bin.count);
        if (bin.max != bin.min) out += "~" + format_double(bin.mean());
    }
    out += "]";
    if (h.keeps_seen_values()) {
        out += " seen={";
        for (size_t i = 0; i < h.seen_values().size(); ++i) {
            out += (i ? "," : "") + symbolic(h.seen_values()[i], role);
        }
        out += "}";
    }
    return out + ")";
}

std::string render_time(const TimeStats& t)
{
    if (t.count == 0) return {};
    return " compute=" + format_double(t.mean) + "s(n=" + std::to_string(t.count) + ")";
}

// compute=2.1e-03s(n=40) by_rank={1.1e-03s@1-3,5e-03s@0} in_call=3e-06s: what the groups of ranks
// computed before the calls, and the mean time in them.
std::string render_times(const Event& e)
{
    std::string out = render_time(e.compute);
    for (size_t i = 0; i < e.compute_by_rank.size(); ++i) {
        const RankCompute& group = e.compute_by_rank[i];
        out += (i ? "," : " by_rank={") + format_double(group.compute.mean) + "s@" + group.ranks.to_string();
    }
    if (!e.compute_by_rank.empty()) out += "}";
    if (e.in_call.count > 0) out += " in_call=" + format_double(e.in_call.mean) + "s";
    return out;
}

std::string json_rank_times(const std::optional<RankTimes>& times)
{
    if (!times) return "null";
    std::string out = "{";
    for (const auto& [name, spread] : named_spreads(*times, &RankSpreadField::key)) {
        out += std::string(out.size() > 1 ? ", " : "") + "\"" + name + "\": {\"min\": " + format_double(spread->min) +
               ", \"min_rank\": " + std::to_string(spread->min_rank) + ", \"mean\": " + format_double(spread->mean) +
               ", \"max\": " + format_double(spread->max) + ", \"max_rank\": " + std::to_string(spread->max_rank) + "}";
    }
    // Older than format 21: the tracer's time is unknown, not none.
    if (!times->tracer) out += std::string(", \"") + kTracerSpreadField.key + "\": null";
    return out + "}";
}

std::string json_time(const TimeStats& t)
{
    return "{\"count\": " + std::to_string(t.count) + ", \"mean\": " + format_double(t.mean) +
           ", \"min\": " + format_double(t.min) + ", \"max\": " + format_double(t.max) + "}";
}

// A file name one for all its ranks shows as its pattern, in quotes.
using FileNames = std::map<int64_t, std::string>;
std::string render_param(const Param& p, const FileNames& file_names)
{
    if (p.role == Role::file_name && p.value.is_exact()) {
        const auto found = file_names.find(p.value.exact());
        if (found != file_names.end()) return json_string(found->second);
    }
    return render_value(p.value, p.role);
}

void render_tree(std::ostream& out, const Sequence& seq, int depth, const FileNames& file_names)
{
    const std::string indent(static_cast<size_t>(depth) * 2, ' ');
    for (const auto& node : seq) {
        if (node.is_loop()) {
            out << indent << "loop " << render_value(node.loop().iterations, Role::requests);
            if (node.loop().last_leaves_out > 0) out << " (the last leaves out " << node.loop().last_leaves_out << ")";
            out << " {\n";
            render_tree(out, node.loop().body, depth + 1, file_names);
            out << indent << "}\n";
            continue;
        }
        const Event& e = node.event();
        out << indent << operation_name(e.op) << " @" << render_signature(e.signature)
            << " ranks=" << e.ranks.to_string();
        for (const auto& p : e.params) out << ' ' << role_name(p.role) << '=' << render_param(p, file_names);
        out << render_times(e) << '\n';
    }
}

std::string json_value(const Value& v, Role role)
{
    if (v.is_exact()) {
        return role_is_peer(v.exact() < 0 ? role : Role::bytes) ? json_string(symbolic(v.exact(), role))
                                                                : std::to_string(v.exact());
    }
    if (v.is_per_rank()) {
        std::string out = "{\"per_rank\": [";
        const auto& entries = v.per_rank_entries();
        for (size_t i = 0; i < entries.size(); ++i) {
            const auto& entry = entries[i];
            out += (i ? ", " : "") + std::string("{\"value\": ") + std::to_string(entry.value) + ", \"step\": " +
                   std::to_string(entry.step) + ", \"ranks\": " + json_string(entry.ranks.to_string()) + "}";
        }
        return out + "]}";
    }
    const Histogram& h = v.histogram();
    std::string out = "{\"histogram\": {\"count\": " + std::to_string(h.count()) + ", \"mean\": " +
                      format_double(h.mean()) + ", \"variance\": " + format_double(h.variance()) +
                      ", \"min\": " + std::to_string(h.min().value) + ", \"min_rank\": " +
                      std::to_string(h.min().rank) + ", \"max\": " + std::to_string(h.max().value) +
                      ", \"max_rank\": " + std::to_string(h.max().rank) + ", \"bins\": [";
    for (size_t i = 0; i < h.bins().size(); ++i) {
        const auto& b = h.bins()[i];
        out += (i ? ", " : "") + std::string("{\"min\": ") + std::to_string(b.min) + ", \"max\": " +
               std::to_string(b.max) + ", \"count\": " + std::to_string(b.count) + ", \"mean\": " +
               format_double(b.mean()) + "}";
    }
    return out + "], \"alike_on_every_rank\": " + (v.alike_on_every_rank() ? "true" : "false") + "}}";
}

void json_sequence(std::ostream& out, const Sequence& seq)
{
    out << '[';
    for (size_t i = 0; i < seq.size(); ++i) {
        if (i) out << ", ";
        const Node& node = seq[i];
        if (node.is_loop()) {
            out << "{\"loop\": " << json_value(node.loop().iterations, Role::requests);
            if (node.loop().last_leaves_out > 0) out << ", \"last_leaves_out\": " << node.loop().last_leaves_out;
            out << ", \"body\": ";
            json_sequence(out, node.loop().body);
            out << '}';
            continue;
        }
        const Event& e = node.event();
        out << "{\"op\": " << json_string(operation_name(e.op))
            << ", \"signature\": \"" << render_signature(e.signature) << "\", \"ranks\": " << json_string(e.ranks.to_string())
            << ", \"params\": {";
        for (size_t p = 0; p < e.params.size(); ++p) {
            out << (p ? ", " : "") << json_string(role_name(e.params[p].role)) << ": "
                << json_value(e.params[p].value, e.params[p].role);
        }
        out << "}, \"compute\": " << json_time(e.compute);
        if (!e.compute_by_rank.empty()) {
            out << ", \"compute_by_rank\": [";
            for (size_t g = 0; g < e.compute_by_rank.size(); ++g) {
                out << (g ? ", " : "") << "{\"ranks\": " << json_string(e.compute_by_rank[g].ranks.to_string())
                    << ", \"compute\": " << json_time(e.compute_by_rank[g].compute) << '}';
            }
            out << ']';
        }
        if (e.in_call.count > 0) out << ", \"in_call\": " << json_time(e.in_call);
        out << '}';
    }
    out << ']';
}

std::string format_start(int64_t seconds)
{
    std::time_t t = static_cast<std::time_t>(seconds);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[40];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
    return buf;
}

// The length of the valid UTF-8 sequence at the start of `s` (1 to 4), or 0 where its first byte
// does not start one: a stray continuation byte, a truncated or overlong sequence, a surrogate, or a
// code point past U+10FFFF.
size_t utf8_sequence_length(std::string_view s)
{
    const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
    const unsigned char lead = byte(0);
    if (lead < 0x80) return 1;
    size_t length = 0;
    unsigned char low = 0x80;  // the bounds of the second byte, narrower after some lead bytes
    unsigned char high = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf) {
        length = 2;
    } else if (lead >= 0xe0 && lead <= 0xef) {
        length = 3;
        if (lead == 0xe0) low = 0xa0;   // overlong
        if (lead == 0xed) high = 0x9f;  // surrogates
    } else if (lead >= 0xf0 && lead <= 0xf4) {
        length = 4;
        if (lead == 0xf0) low = 0x90;   // overlong
        if (lead == 0xf4) high = 0x8f;  // past U+10FFFF
    } else {
        return 0;
    }
    if (s.size() < length || byte(1) < low || byte(1) > high) return 0;
    for (size_t i = 2; i < length; ++i) {
        if (byte(i) < 0x80 || byte(i) > 0xbf) return 0;
    }
    return length;
}

}  // namespace

std::string json_string(std::string_view s)
{
    std::string out = "\"";
    while (!s.empty()) {
        const char c = s.front();
        const size_t length = utf8_sequence_length(s);
        if (length == 0) {
            out += "\xef\xbf\xbd";  // U+FFFD REPLACEMENT CHARACTER, for the one byte
            s.remove_prefix(1);
            continue;
        }
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
            out += buf;
        } else {
            out.append(s.substr(0, length));
        }
        s.remove_prefix(length);
    }
    return out + "\"";
}

std::string render_signature(uint64_t signature)
{
    char text[24];
    std::snprintf(text, sizeof text, "%08" PRIx64, signature);
    return text;
}

std::string render_value(const Value& value, Role role)
{
    if (value.is_exact()) return symbolic(value.exact(), role);
    if (value.is_per_rank()) {
        std::string out = "{";
        const auto& entries = value.per_rank_entries();
        for (size_t i = 0; i < entries.size(); ++i) {
            const auto& entry = entries[i];
            // A step reads as the i-th rank's value: "0+1*i@0-127" is key = rank.
            std::string text = symbolic(entry.value, role);
            if (entry.step != 0) {
                text = std::to_string(entry.value) + (entry.step > 0 ? "+" : "-") +
                       std::to_string(entry.step > 0 ? entry.step : -entry.step) + "*i";
            }
            out += (i ? "," : "") + text + "@" + entry.ranks.to_string();
        }
        return out + "}";
    }
    std::string out = render_histogram(value.histogram(), role);
    if (value.alike_on_every_rank()) out.insert(out.size() - 1, " alike");  // hist(... alike)
    return out;
}

void render_text(std::ostream& out, const Trace& trace)
{
    const auto& h = trace.header;
    out << "# h-trace trace\n"
        << "ranks " << h.ranks << "\n"
        << "precision " << h.precision << "\n"
        << "bins " << h.histogram.bins << "\n"
        << "rebalance " << h.histogram.rebalance_interval << "\n"
        << "seed " << h.seed << "\n"
        << "mpi " << h.mpi_library << "\n"
        << "command " << h.command_line << "\n"
        << "started " << format_start(h.start_time) << "\n"
        << "traced_seconds " << format_double(h.traced_seconds) << "\n";
    if (h.run_id != 0) out << "run " << format_run_id(h.run_id) << " host " << h.host << "\n";  // format 16
    for (const RankStop& stop : h.stops) {
        out << "incomplete: rank " << stop.rank << " stopped after " << stop.calls << " calls: " << stop.reason << "\n";
    }
    for (const std::string& line : h.extrapolation) out << "extrapolated " << line << "\n";  // format 17
    if (h.rank_times) {  // format 19
        for (const auto& [name, spread] : named_spreads(*h.rank_times, &RankSpreadField::key)) {
            out << "rank_times " << name << " min=" << format_double(spread->min) << "@" << spread->min_rank
                << " mean=" << format_double(spread->mean) << " max=" << format_double(spread->max) << "@"
                << spread->max_rank << "\n";
        }
    }
    for (const auto& [key, name] : h.file_names) out << "file_name " << key << " " << name << "\n";
    for (const auto& [key, text] : h.topologies) out << "topology " << key << " " << text << "\n";
    out << "\n";
    render_tree(out, trace.body, 0, h.file_names);
}

std::string render_text(const Trace& trace)
{
    std::ostringstream out;
    render_text(out, trace);
    return out.str();
}

void render_json(std::ostream& out, const Trace& trace)
{
    const auto& h = trace.header;
    out << "{\"ranks\": " << h.ranks << ", \"precision\": " << h.precision << ", \"bins\": " << h.histogram.bins
        << ", \"rebalance\": " << h.histogram.rebalance_interval << ", \"seed\": " << h.seed
        << ", \"mpi\": " << json_string(h.mpi_library) << ", \"command\": " << json_string(h.command_line)
        << ", \"start_time\": " << h.start_time << ", \"traced_seconds\": " << format_double(h.traced_seconds)
        << ", \"run_id\": " << json_string(format_run_id(h.run_id)) << ", \"host\": " << json_string(h.host)
        << ", \"incomplete\": " << (h.incomplete() ? "true" : "false") << ", \"stops\": [";
    for (size_t i = 0; i < h.stops.size(); ++i) {
        out << (i == 0 ? "" : ", ") << "{\"rank\": " << h.stops[i].rank << ", \"calls\": " << h.stops[i].calls
            << ", \"reason\": " << json_string(h.stops[i].reason) << "}";
    }
    out << "], \"extrapolation\": [";
    for (size_t i = 0; i < h.extrapolation.size(); ++i) out << (i == 0 ? "" : ", ") << json_string(h.extrapolation[i]);
    out << "], \"rank_times\": " << json_rank_times(h.rank_times) << ", \"file_names\": {";
    for (auto it = h.file_names.begin(); it != h.file_names.end(); ++it) {
        out << (it == h.file_names.begin() ? "" : ", ") << json_string(std::to_string(it->first)) << ": "
            << json_string(it->second);
    }
    out << "}, \"topologies\": {";
    for (auto it = h.topologies.begin(); it != h.topologies.end(); ++it) {
        out << (it == h.topologies.begin() ? "" : ", ") << json_string(std::to_string(it->first)) << ": "
            << json_string(it->second);
    }
    out << "}, \"body\": ";
    json_sequence(out, trace.body);
    out << "}\n";
}

namespace {

// Whole numbers print as such: a lossless trace stands for whole calls.
std::string number(double x)
{
    if (x == std::floor(x) && std::fabs(x) < 9e15) return std::to_string(static_cast<int64_t>(x));
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", x);
    return buf;
}

}  // namespace

void Amount::add(int64_t value, uint64_t repeats, double weight)
{
    // Exact while no histogram's mean takes part and the sum fits 128 bits; repeats saturated at
    // UINT64_MAX (loops nested beyond 2^64 calls) is not exact either.
    Whole product = 0;
    Whole sum = 0;
    if (weight == 1 && repeats != UINT64_MAX && !__builtin_mul_overflow(Whole(value), Whole(repeats), &product) &&
        !__builtin_add_overflow(whole_, product, &sum)) {
        whole_ = sum;
        return;
    }
    expected_ += double(value) * double(repeats) * weight;
}

void Amount::add_mean(double mean, uint64_t repeats, double weight)
{
    expected_ += mean * double(repeats) * weight;
}

void Amount::add(const Amount& other)
{
    Whole sum = 0;
    if (__builtin_add_overflow(whole_, other.whole_, &sum)) {
        expected_ += double(other.whole_);
    } else {
        whole_ = sum;
    }
    expected_ += other.expected_;
}

double Amount::approximate() const { return double(whole_) + expected_; }

std::string Amount::to_string() const
{
    if (expected_ != 0) return number(approximate());
    // Negated unsigned, so that the most negative value has its magnitude too.
    __extension__ using Magnitude = unsigned __int128;
    Magnitude rest = whole_ < 0 ? Magnitude(0) - Magnitude(whole_) : Magnitude(whole_);
    std::string digits;
    do {
        digits.insert(digits.begin(), char('0' + int(rest % 10)));
        rest /= 10;
    } while (rest != 0);
    return (whole_ < 0 ? "-" : "") + digits;
}

namespace {

struct CallTotals {
    Amount calls;
    Amount bytes;
    std::map<std::string, Amount> peers;
    std::map<std::string, Amount> matched;
};

std::string peer_key(const CommunicatorTable& comms, Rank caller, int64_t comm, int64_t value, Role role)
{
    if (value < 0) return symbolic(value, role);
    // Roots are stored as they are; point-to-point peers relative to the caller.
    auto world = role == Role::root ? comms.world_rank(caller, comm, value) : comms.world_peer(caller, comm, value);
    return world ? std::to_string(*world) : "unknown";
}

// What a value stands for on one rank: (value, share of the calls) pairs; a histogram spreads the
// calls over its bins.
std::vector<std::pair<int64_t, double>> shares(const Value& v, Rank rank)
{
    if (!v.is_histogram()) {
        if (auto exact = v.value_for(rank)) return {{*exact, 1.0}};
        return {};
    }
    std::vector<std::pair<int64_t, double>> out;
    const Histogram& h = v.histogram();
    for (const auto& bin : h.bins()) {
        out.emplace_back(std::llround(bin.mean()), double(bin.count) / double(std::max<uint64_t>(h.count(), 1)));
    }
    return out;
}

// Walks the trace for a view that counts: loops of exact counts visited once (fold_exact_loops), and
// at most `max_calls` calls visited one by one, where loops must be walked iteration by iteration.
class CountingWalk {
public:
    CountingWalk(const Trace& trace, uint64_t max_calls) : cursor_(trace, nullptr, true), max_calls_(max_calls) {}

    // Calls `visit(event, rank, comms, repeats, weight)` for each participant of each instance; an
    // error when there are more than max_calls of them.
    template <typename Visit>
    RenderError run(Visit&& visit)
    {
        uint64_t visited = 0;
        while (const auto instance = cursor_.next()) {
            // An instance none of whose ranks is active costs a step too.
            visited += std::max<size_t>(instance->participants->size(), 1);
            if (visited > max_calls_) {
                return "more than --max-calls " + std::to_string(max_calls_) +
                       " calls to visit one by one (loops that make or free communicators, or whose ranks have "
                       "more than 64 different counts, are walked iteration by iteration)";
            }
            for (Rank r : *instance->participants) {
                visit(*instance->event, r, cursor_.communicators(), instance->repeats, instance->weight);
            }
        }
        return {};
    }

private:
    WalkCursor cursor_;
    uint64_t max_calls_;
};

using PerRankTotals = std::map<Rank, std::map<std::string, CallTotals>>;

RenderError count_calls(const Trace& trace, uint64_t max_calls, PerRankTotals& totals)
{
    CountingWalk walk(trace, max_calls);
    return walk.run([&](const Event& e, Rank r, const CommunicatorTable& comms, uint64_t repeats, double weight) {
        auto& t = totals[r][std::string(operation_name(e.op))];
        t.calls.add(1, repeats, weight);
        const Value* comm = e.find(Role::comm);
        const int64_t comm_id = comm ? comm->value_for(r).value_or(0) : 0;
        for (const auto& p : e.params) {
            for (const auto& [value, share] : shares(p.value, r)) {
                const double calls = weight * share;
                if (p.role == Role::bytes || p.role == Role::recv_bytes || p.role == Role::target_bytes) {
                    t.bytes.add(value, repeats, calls);
                }
                if (p.role == Role::peer || p.role == Role::source || p.role == Role::root) {
                    t.peers[peer_key(comms, r, comm_id, value, p.role)].add(1, repeats, calls);
                }
                if (p.role == Role::matched_peer) {
                    t.matched[peer_key(comms, r, comm_id, value, p.role)].add(1, repeats, calls);
                }
            }
        }
    });
}

std::string_view kind_name(OperationKind kind)
{
    switch (kind) {
    case OperationKind::init: return "init";
    case OperationKind::finalize: return "finalize";
    case OperationKind::send: return "send";
    case OperationKind::recv: return "recv";
    case OperationKind::sendrecv: return "sendrecv";
    case OperationKind::probe: return "probe";
    case OperationKind::completion: return "completion";
    case OperationKind::collective: return "collective";
    case OperationKind::comm_create: return "comm_create";
    case OperationKind::comm_free: return "comm_free";
    case OperationKind::one_sided: return "one_sided";
    case OperationKind::opaque: return "opaque";
    case OperationKind::persistent_init: return "persistent_init";
    case OperationKind::start: return "start";
    case OperationKind::request_free: return "request_free";
    case OperationKind::cancel: return "cancel";
    case OperationKind::io: return "io";
    case OperationKind::buffer: return "buffer";
    }
    return "unknown";
}

// One line of --sequence: rank `r`'s call `e`. `pending` is how many requests the rank has pending,
// as the tracer counts them: completed sets name the oldest by that count.
void sequence_line(std::string& out, const Event& e, Rank r, const CommunicatorTable& comms, uint32_t& pending)
{
    out = std::to_string(r) + ' ' + std::string(kind_name(operation_kind(e.op))) + ' ' +
          std::string(operation_name(e.op));
    const Value* comm = e.find(Role::comm);
    const int64_t comm_id = comm ? comm->value_for(r).value_or(0) : 0;
    std::vector<int64_t> completed_set;
    bool completed_set_exact = true;
    for (const auto& p : e.params) {
        if (p.role == Role::new_comm || p.role == Role::color || p.role == Role::key || p.role == Role::remote_leader) {
            continue;
        }
        const auto value = p.value.value_for(r);
        if (p.role == Role::completed_set) {
            completed_set_exact = completed_set_exact && value.has_value();
            if (value) completed_set.push_back(*value);
            continue;
        }
        out += ' ' + std::string(role_name(p.role)) + '=';
        if (!value) {
            out += render_value(p.value, p.role);
        } else if (p.role == Role::comm) {
            const auto* members = comms.members(r, *value);
            std::vector<Rank> sorted = members ? *members : std::vector<Rank>{};
            std::sort(sorted.begin(), sorted.end());
            out += members ? RankList::from_sorted(sorted).to_string() : "unknown";
        } else if (role_is_peer(p.role) || p.role == Role::root) {
            out += peer_key(comms, r, comm_id, *value, p.role);
        } else {
            out += std::to_string(*value);
        }
    }
    if (!completed_set.empty() || !completed_set_exact) {
        // How many requests the call completed, which a reader of one rank's calls can check.
        const auto positions = completed_set_exact ? decode_completed_set(completed_set, pending) : std::nullopt;
        pending -= positions ? static_cast<uint32_t>(std::count_if(positions->begin(), positions->end(),
                                                                   [&](uint32_t p) { return p < pending; }))
                             : 0;
        out += " completes=" + (positions ? std::to_string(positions->size()) : std::string("unknown"));
        // Which of the rank's pending requests, newest first: a program's log can name them too.
        for (size_t i = 0; positions && i < positions->size(); ++i) {
            out += (i ? "," : " positions=") + std::to_string((*positions)[i]);
        }
    }
    if (creates_request(e.op)) pending = std::min<uint32_t>(pending + 1, PendingRequests<int>::kKept);
    out += '\n';
}

// The ranks one pass of --sequence writes: each keeps its lines in a temporary file until its turn,
// so that memory does not grow with the output; a pass per this many ranks keeps the files open few.
constexpr size_t kSequenceRanksPerPass = 256;

using File = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

// One pass: the lines of `ranks` (ascending), each rank's after the one before.
RenderError sequence_pass(std::ostream& out, const Trace& trace, const std::vector<Rank>& ranks)
{
    std::vector<File> files;
    for (size_t i = 0; i < ranks.size(); ++i) {
        files.emplace_back(std::tmpfile(), &std::fclose);
        if (!files.back()) return std::string("cannot make a temporary file: ") + std::strerror(errno);
    }
    std::vector<uint32_t> pending(ranks.size(), 0);
    std::string line;
    WalkCursor cursor(trace, nullptr);
    while (const auto instance = cursor.next()) {
        for (Rank r : *instance->participants) {
            const auto found = std::lower_bound(ranks.begin(), ranks.end(), r);
            if (found == ranks.end() || *found != r) continue;
            const auto slot = static_cast<size_t>(found - ranks.begin());
            sequence_line(line, *instance->event, r, cursor.communicators(), pending[slot]);
            if (std::fwrite(line.data(), 1, line.size(), files[slot].get()) != line.size()) {
                return std::string("cannot write a temporary file: ") + std::strerror(errno);
            }
        }
    }
    char buffer[1 << 16];
    for (auto& file : files) {
        std::rewind(file.get());
        size_t got = 0;
        while ((got = std::fread(buffer, 1, sizeof buffer, file.get())) > 0) out.write(buffer, std::streamsize(got));
        if (std::ferror(file.get())) return std::string("cannot read a temporary file: ") + std::strerror(errno);
    }
    return {};
}

}  // namespace

RenderError check_call_count(const Trace& trace, uint64_t max_calls, std::vector<char>* calling_ranks,
                             uint64_t* walk_steps)
{
    // At the trace's cost, so that a loop of 10^15 iterations is refused at once: the calls, and the
    // steps of the full walk (instances with and without active ranks), which each pass takes.
    uint64_t lines = 0;
    uint64_t steps = 0;
    const auto add = [](uint64_t& sum, uint64_t more) { sum = more > UINT64_MAX - sum ? UINT64_MAX : sum + more; };
    const auto times = [](uint64_t a, uint64_t b) {
        uint64_t product = 0;
        return __builtin_mul_overflow(a, b, &product) ? UINT64_MAX : product;
    };
    WalkCursor cursor(trace, nullptr, true);
    uint64_t visited = 0;
    // The ranks that make any call: a pass for the others would write nothing.
    std::vector<char> calling(static_cast<size_t>(std::max(trace.header.ranks, 0)), 0);
    while (const auto instance = cursor.next()) {
        if (++visited > max_calls) {
            return "the sequence has more than --max-calls " + std::to_string(max_calls) + " calls";
        }
        add(steps, instance->repeats);
        add(lines, times(instance->repeats, instance->participants->size()));
        for (Rank r : *instance->participants) calling[static_cast<size_t>(r)] = 1;
    }
    if (lines > max_calls) {
        return "the sequence has " + std::to_string(lines) + " calls, more than --max-calls " +
               std::to_string(max_calls);
    }
    if (steps > max_calls) {
        return "the sequence has more than --max-calls " + std::to_string(max_calls) + " calls to visit";
    }
    if (calling_ranks != nullptr) *calling_ranks = std::move(calling);
    if (walk_steps != nullptr) *walk_steps = steps;
    return {};
}

RenderError render_sequence(std::ostream& out, const Trace& trace, uint64_t max_calls)
{
    std::vector<char> calling;
    if (RenderError error = check_call_count(trace, max_calls, &calling); !error.empty()) return error;
    std::vector<Rank> ranks;
    for (size_t r = 0; r <= calling.size(); ++r) {
        if (ranks.size() == kSequenceRanksPerPass || (r == calling.size() && !ranks.empty())) {
            if (RenderError pass = sequence_pass(out, trace, ranks); !pass.empty()) return pass;
            ranks.clear();
        }
        if (r < calling.size() && calling[r]) ranks.push_back(static_cast<Rank>(r));
    }
    return {};
}

RenderError render_call_counts(std::ostream& out, const Trace& trace, uint64_t max_calls)
{
    PerRankTotals totals;
    if (RenderError error = count_calls(trace, max_calls, totals); !error.empty()) return error;
    std::map<std::string, Amount> per_op;
    for (const auto& [rank, ops] : totals) {
        for (const auto& [name, t] : ops) per_op[name].add(t.calls);
    }
    Amount total;
    for (const auto& [name, calls] : per_op) {
        out << name << ' ' << calls.to_string() << '\n';
        total.add(calls);
    }
    out << "total " << total.to_string() << '\n';
    return {};
}

namespace {

void json_counts(std::ostream& out, const std::map<std::string, Amount>& counts)
{
    bool first = true;
    for (const auto& [key, n] : counts) {
        out << (first ? "" : ", ") << json_string(key) << ": " << n.to_string();
        first = false;
    }
}

}  // namespace

RenderError render_call_counts_json(std::ostream& out, const Trace& trace, uint64_t max_calls)
{
    PerRankTotals totals;
    if (RenderError error = count_calls(trace, max_calls, totals); !error.empty()) return error;
    std::map<std::string, Amount> per_op;
    out << "{\"ranks\": " << trace.header.ranks << ", \"by_rank\": {";
    bool first_rank = true;
    for (const auto& [rank, ops] : totals) {
        out << (first_rank ? "" : ", ") << '"' << rank << "\": {";
        first_rank = false;
        bool first_op = true;
        for (const auto& [name, t] : ops) {
            per_op[name].add(t.calls);
            out << (first_op ? "" : ", ") << json_string(name) << ": {\"calls\": " << t.calls.to_string()
                << ", \"bytes\": " << t.bytes.to_string() << ", \"peers\": {";
            first_op = false;
            json_counts(out, t.peers);
            out << "}, \"matched\": {";
            json_counts(out, t.matched);
            out << "}}";
        }
        out << '}';
    }
    out << "}, \"operations\": {";
    json_counts(out, per_op);
    out << "}}\n";
    return {};
}

CommunicationMatrix communication_matrix(const Trace& trace, uint64_t max_calls)
{
    CommunicationMatrix matrix;
    matrix.ranks = trace.header.ranks;
    CountingWalk walk(trace, max_calls);
    matrix.error = walk.run([&](const Event& e, Rank sender, const CommunicatorTable& comms, uint64_t repeats,
                                double weight) {
        const auto kind = operation_kind(e.op);
        if (kind != OperationKind::send && kind != OperationKind::sendrecv && kind != OperationKind::start) return;
        // A started persistent receive carries recv_bytes, a started send bytes, as replay tells them apart.
        const Value* bytes = e.find(Role::bytes);
        const Value* peer = e.find(Role::peer);
        if (!bytes || !peer) return;
        const Value* comm = e.find(Role::comm);
        const int64_t comm_id = comm ? comm->value_for(sender).value_or(0) : 0;
        for (const auto& [relative, share] : shares(*peer, sender)) {
            if (relative == kProcNull) continue;  // a send to MPI_PROC_NULL moves nothing
            const auto receiver = comms.world_peer(sender, comm_id, relative);
            Traffic& traffic = receiver ? matrix.pairs[{sender, *receiver}] : matrix.unresolved;
            traffic.messages.add(1, repeats, weight * share);
            // A size that is a histogram counts by its mean.
            if (bytes->is_histogram()) {
                traffic.bytes.add_mean(bytes->histogram().mean(), repeats, weight * share);
            } else {
                traffic.bytes.add(bytes->value_for(sender).value_or(0), repeats, weight * share);
            }
        }
    });
    if (!matrix.error.empty()) {
        matrix.pairs.clear();
        matrix.unresolved = {};
    }
    return matrix;
}

RenderError render_matrix(std::ostream& out, const Trace& trace, uint64_t max_calls)
{
    const CommunicationMatrix matrix = communication_matrix(trace, max_calls);
    if (!matrix.error.empty()) return matrix.error;
    out << "# point-to-point traffic between world ranks (collectives are not pairwise: left out)\n"
        << "# sender receiver messages bytes\n";
    Traffic total;
    for (const auto& [pair, traffic] : matrix.pairs) {
        out << pair.first << ' ' << pair.second << ' ' << traffic.messages.to_string() << ' '
            << traffic.bytes.to_string() << '\n';
        total.messages.add(traffic.messages);
        total.bytes.add(traffic.bytes);
    }
    out << "total " << total.messages.to_string() << ' ' << total.bytes.to_string() << '\n';
    if (matrix.unresolved.messages.approximate() > 0) {
        out << "unresolved " << matrix.unresolved.messages.to_string() << ' ' << matrix.unresolved.bytes.to_string()
            << '\n';
    }
    return {};
}

RenderError render_matrix_json(std::ostream& out, const Trace& trace, uint64_t max_calls)
{
    const CommunicationMatrix matrix = communication_matrix(trace, max_calls);
    if (!matrix.error.empty()) return matrix.error;
    out << "{\"ranks\": " << matrix.ranks << ", \"pairs\": [";
    Traffic total;
    bool first = true;
    for (const auto& [pair, traffic] : matrix.pairs) {
        out << (first ? "" : ", ") << "{\"from\": " << pair.first << ", \"to\": " << pair.second
            << ", \"messages\": " << traffic.messages.to_string() << ", \"bytes\": " << traffic.bytes.to_string()
            << '}';
        first = false;
        total.messages.add(traffic.messages);
        total.bytes.add(traffic.bytes);
    }
    out << "], \"total\": {\"messages\": " << total.messages.to_string() << ", \"bytes\": " << total.bytes.to_string()
        << "}, \"unresolved\": {\"messages\": " << matrix.unresolved.messages.to_string()
        << ", \"bytes\": " << matrix.unresolved.bytes.to_string() << "}}\n";
    return {};
}

namespace {

// One call site of the profile: a call path and the operation called there.
struct SiteProfile {
    Op op{};
    uint64_t signature = 0;
    TimeStats in_call;  // over every call the site's events measured
    Amount calls;       // as the walk counts them (loops expanded)
    Amount bytes;
    std::vector<char> callers;  // by world rank: whether it called here
    size_t ranks() const { return static_cast<size_t>(std::count(callers.begin(), callers.end(), 1)); }
};

struct Profile {
    std::vector<SiteProfile> sites;  // by their total time in calls, most first
    double seconds_in_calls = 0;     // over every site
};

RenderError make_profile(const Trace& trace, uint64_t max_calls, Profile& profile)
{
    std::map<std::pair<uint64_t, Op>, SiteProfile> sites;
    const auto site_of = [&](const Event& e) -> SiteProfile& {
        SiteProfile& site = sites[{e.signature, e.op}];
        site.op = e.op;
        site.signature = e.signature;
        if (site.callers.empty()) site.callers.assign(static_cast<size_t>(std::max(trace.header.ranks, 0)), 0);
        return site;
    };
    for_each_event(trace.body, [&](const Event& e) {
        if (e.in_call.count > 0) site_of(e).in_call.merge(e.in_call);
    });
    CountingWalk walk(trace, max_calls);
    RenderError error = walk.run([&](const Event& e, Rank r, const CommunicatorTable&, uint64_t repeats, double weight) {
        SiteProfile& site = site_of(e);
        site.calls.add(1, repeats, weight);
        if (r >= 0 && static_cast<size_t>(r) < site.callers.size()) site.callers[static_cast<size_t>(r)] = 1;
        for (const auto& p : e.params) {
            if (p.role != Role::bytes && p.role != Role::recv_bytes && p.role != Role::target_bytes) continue;
            for (const auto& [value, share] : shares(p.value, r)) site.bytes.add(value, repeats, weight * share);
        }
    });
    if (!error.empty()) return error;
    for (auto& [key, site] : sites) {
        profile.seconds_in_calls += site.in_call.total();
        profile.sites.push_back(std::move(site));
    }
    std::stable_sort(profile.sites.begin(), profile.sites.end(), [](const SiteProfile& a, const SiteProfile& b) {
        return a.in_call.total() > b.in_call.total();
    });
    return {};
}

std::string percent(double share)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.1f%%", 100 * share);
    return text;
}

std::string rank_time_line(const char* name, const RankSpread& spread, bool share)
{
    const auto shown = [&](double value) { return share ? percent(value) : format_double(value) + " s"; };
    char text[160];
    std::snprintf(text, sizeof text, "  %-14s %14s (rank %d) %14s %14s (rank %d)\n", name, shown(spread.min).c_str(),
                  spread.min_rank, shown(spread.mean).c_str(), shown(spread.max).c_str(), spread.max_rank);
    return text;
}

std::string base_name(const std::string& path)
{
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Where a site is, for the text: its source line (and function) where resolved, else its module and
// address, else "-" (a site named by Python's frames, or a trace older than format 20).
std::string site_place(uint64_t signature, const Trace& trace, const SourceLines& source_lines)
{
    if (const auto line = source_lines.find(signature); line != source_lines.end()) {
        const SourceLine& at = line->second;
        return base_name(at.file) + ":" + std::to_string(at.line) + (at.function.empty() ? "" : " (" + at.function + ")");
    }
    if (const auto location = trace.locations.find(signature); location != trace.locations.end()) {
        char address[24];
        std::snprintf(address, sizeof address, "+0x%" PRIx64, location->second.address);
        return base_name(location->second.module) + address;
    }
    return "-";
}

std::string json_site_location(uint64_t signature, const Trace& trace, const SourceLines& source_lines)
{
    const auto location = trace.locations.find(signature);
    if (location == trace.locations.end()) return "null";
    char address[24];
    std::snprintf(address, sizeof address, "0x%" PRIx64, location->second.address);
    std::string json = "{\"module\": " + json_string(location->second.module) + ", \"address\": \"" + address + "\"";
    if (const auto line = source_lines.find(signature); line != source_lines.end()) {
        json += ", \"file\": " + json_string(line->second.file) + ", \"line\": " + std::to_string(line->second.line) +
                ", \"function\": " + (line->second.function.empty() ? "null" : json_string(line->second.function));
    } else {
        json += ", \"file\": null, \"line\": null, \"function\": null";
    }
    return json + "}";
}

}  // namespace

RenderError render_profile(std::ostream& out, const Trace& trace, size_t top, uint64_t max_calls,
                           const SourceLines& source_lines)
{
    Profile profile;
    if (RenderError error = make_profile(trace, max_calls, profile); !error.empty()) return error;
    const auto& h = trace.header;
    out << "# profile of " << h.command_line << "\n"
        << h.ranks << " ranks, " << format_double(h.traced_seconds) << " s from MPI_Init to MPI_Finalize (slowest rank)\n\n";
    if (h.rank_times) {
        const RankTimes& t = *h.rank_times;
        out << "time per rank            least                        mean           most\n"
            << rank_time_line("computation", t.computation, false) << rank_time_line("in MPI", t.mpi, false)
            << rank_time_line("in I/O", t.io, false) << rank_time_line("share in MPI", t.mpi_share, true)
            << rank_time_line("share in I/O", t.io_share, true);
        // Format 21: what the tracer itself took, in none of the above (the shares leave it out).
        if (t.tracer) out << rank_time_line("in the tracer", *t.tracer, false);
        // As mpiP has it: how much the most loaded rank's time in MPI exceeds the mean's.
        if (t.mpi.max > 0) {
            out << "imbalance in MPI: the most is " << percent((t.mpi.max - t.mpi.mean) / t.mpi.max)
                << " above the mean\n";
        }
    } else {
        out << "time per rank: not in this trace (older than format 19, extrapolated, or not measured)\n";
    }
    out << "\ncall sites by their time in calls, all ranks (" << std::min(top, profile.sites.size()) << " of "
        << profile.sites.size() << ")\n";
    char line[256];
    std::snprintf(line, sizeof line, "%-8s %-26s %12s %12s %7s %11s %11s %11s %14s %6s  %s\n", "site", "operation",
                  "calls", "seconds", "share", "mean", "min", "max", "bytes", "ranks", "where");
    out << line;
    for (size_t i = 0; i < profile.sites.size() && i < top; ++i) {
        const SiteProfile& site = profile.sites[i];
        const bool timed = site.in_call.count > 0;
        const auto shown = [&](double value) { return timed ? format_double(value) : std::string("-"); };
        const std::string name(operation_name(site.op));
        std::snprintf(line, sizeof line, "%-8s %-26s %12s %12s %7s %11s %11s %11s %14s %6zu  ",
                      render_signature(site.signature).c_str(), name.c_str(), site.calls.to_string().c_str(),
                      shown(site.in_call.total()).c_str(),
                      timed && profile.seconds_in_calls > 0 ? percent(site.in_call.total() / profile.seconds_in_calls).c_str() : "-",
                      shown(site.in_call.mean).c_str(), shown(site.in_call.min).c_str(), shown(site.in_call.max).c_str(),
                      site.bytes.to_string().c_str(), site.ranks());
        out << line << site_place(site.signature, trace, source_lines) << '\n';
    }
    return {};
}

RenderError render_profile_json(std::ostream& out, const Trace& trace, uint64_t max_calls,
                                const SourceLines& source_lines)
{
    Profile profile;
    if (RenderError error = make_profile(trace, max_calls, profile); !error.empty()) return error;
    const auto& h = trace.header;
    out << "{\"ranks\": " << h.ranks << ", \"traced_seconds\": " << format_double(h.traced_seconds)
        << ", \"rank_times\": " << json_rank_times(h.rank_times)
        << ", \"seconds_in_calls\": " << format_double(profile.seconds_in_calls) << ", \"sites\": [";
    for (size_t i = 0; i < profile.sites.size(); ++i) {
        const SiteProfile& site = profile.sites[i];
        out << (i ? ", " : "") << "{\"site\": " << json_string(render_signature(site.signature))
            << ", \"op\": " << json_string(operation_name(site.op)) << ", \"calls\": " << site.calls.to_string()
            << ", \"in_call\": " << (site.in_call.count > 0 ? json_time(site.in_call) : "null")
            << ", \"seconds\": " << (site.in_call.count > 0 ? format_double(site.in_call.total()) : "null")
            << ", \"bytes\": " << site.bytes.to_string() << ", \"ranks\": " << site.ranks()
            << ", \"location\": " << json_site_location(site.signature, trace, source_lines) << "}";
    }
    out << "]}\n";
    return {};
}

}  // namespace htrace
