#include "trace/render.hpp"

#include "trace/completion_set.hpp"
#include "trace/walk.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
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

// compute=2.1e-03s(n=40) by_rank={1.1e-03s@1-3,5e-03s@0}: what the groups of ranks computed.
std::string render_times(const Event& e)
{
    std::string out = render_time(e.compute);
    for (size_t i = 0; i < e.compute_by_rank.size(); ++i) {
        const RankCompute& group = e.compute_by_rank[i];
        out += (i ? "," : " by_rank={") + format_double(group.compute.mean) + "s@" + group.ranks.to_string();
    }
    return out + (e.compute_by_rank.empty() ? "" : "}");
}

std::string json_time(const TimeStats& t)
{
    return "{\"count\": " + std::to_string(t.count) + ", \"mean\": " + format_double(t.mean) +
           ", \"min\": " + format_double(t.min) + ", \"max\": " + format_double(t.max) + "}";
}

std::string json_string(std::string_view s);

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

void render_sequence(std::ostringstream& out, const Sequence& seq, int depth, const FileNames& file_names)
{
    const std::string indent(static_cast<size_t>(depth) * 2, ' ');
    for (const auto& node : seq) {
        if (node.is_loop()) {
            out << indent << "loop " << render_value(node.loop().iterations, Role::requests);
            if (node.loop().last_leaves_out > 0) out << " (the last leaves out " << node.loop().last_leaves_out << ")";
            out << " {\n";
            render_sequence(out, node.loop().body, depth + 1, file_names);
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

std::string json_string(std::string_view s)
{
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += c;
        }
    }
    return out + "\"";
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

void json_sequence(std::ostringstream& out, const Sequence& seq)
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

}  // namespace

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

std::string render_text(const Trace& trace)
{
    std::ostringstream out;
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
    for (const auto& [key, name] : h.file_names) out << "file_name " << key << " " << name << "\n";
    for (const auto& [key, text] : h.topologies) out << "topology " << key << " " << text << "\n";
    out << "\n";
    render_sequence(out, trace.body, 0, h.file_names);
    return out.str();
}

std::string render_json(const Trace& trace)
{
    std::ostringstream out;
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
    out << "], \"file_names\": {";
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
    return out.str();
}

namespace {

struct CallTotals {
    double calls = 0;
    double bytes = 0;
    std::map<std::string, double> peers;
    std::map<std::string, double> matched;
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

// What a value averages to on one rank: its own value, or a histogram's mean.
double expected_value(const Value& v, Rank rank)
{
    if (v.is_histogram()) return v.histogram().mean();
    return double(v.value_for(rank).value_or(0));
}

using PerRankTotals = std::map<Rank, std::map<std::string, CallTotals>>;

PerRankTotals count_calls(const Trace& trace)
{
    PerRankTotals totals;
    TraceWalker walker(trace, [&](const Event& e, Rank r, const CommunicatorTable& comms, double weight) {
        auto& t = totals[r][std::string(operation_name(e.op))];
        t.calls += weight;
        const Value* comm = e.find(Role::comm);
        const int64_t comm_id = comm ? comm->value_for(r).value_or(0) : 0;
        for (const auto& p : e.params) {
            for (const auto& [value, share] : shares(p.value, r)) {
                const double calls = weight * share;
                if (p.role == Role::bytes || p.role == Role::recv_bytes || p.role == Role::target_bytes) {
                    t.bytes += double(value) * calls;
                }
                if (p.role == Role::peer || p.role == Role::source || p.role == Role::root) {
                    t.peers[peer_key(comms, r, comm_id, value, p.role)] += calls;
                }
                if (p.role == Role::matched_peer) t.matched[peer_key(comms, r, comm_id, value, p.role)] += calls;
            }
        }
    });
    walker.run();
    return totals;
}

// Whole numbers print as such: a lossless trace stands for whole calls.
std::string number(double x)
{
    if (x == std::floor(x) && std::fabs(x) < 9e15) return std::to_string(static_cast<int64_t>(x));
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", x);
    return buf;
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

}  // namespace

std::string render_sequence(const Trace& trace)
{
    std::map<Rank, std::string> by_rank;
    // How many requests each rank has pending, as the tracer counts them: completed sets name the
    // oldest by that count.
    std::map<Rank, uint32_t> pending;
    TraceWalker walker(trace, [&](const Event& e, Rank r, const CommunicatorTable& comms, double) {
        std::string& out = by_rank[r];
        out += std::to_string(r) + ' ' + std::string(kind_name(operation_kind(e.op))) + ' ' +
               std::string(operation_name(e.op));
        const Value* comm = e.find(Role::comm);
        const int64_t comm_id = comm ? comm->value_for(r).value_or(0) : 0;
        std::vector<int64_t> completed_set;
        bool completed_set_exact = true;
        for (const auto& p : e.params) {
            if (p.role == Role::new_comm || p.role == Role::color || p.role == Role::key ||
                p.role == Role::remote_leader) {
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
        uint32_t& rank_pending = pending[r];
        if (!completed_set.empty() || !completed_set_exact) {
            // How many requests the call completed, which a reader of one rank's calls can check.
            const auto positions =
                completed_set_exact ? decode_completed_set(completed_set, rank_pending) : std::nullopt;
            rank_pending -= positions ? static_cast<uint32_t>(std::count_if(positions->begin(), positions->end(),
                                                                     [&](uint32_t p) { return p < rank_pending; }))
                                      : 0;
            out += " completes=" + (positions ? std::to_string(positions->size()) : std::string("unknown"));
            // Which of the rank's pending requests, newest first: a program's log can name them too.
            for (size_t i = 0; positions && i < positions->size(); ++i) {
                out += (i ? "," : " positions=") + std::to_string((*positions)[i]);
            }
        }
        if (creates_request(e.op)) rank_pending = std::min<uint32_t>(rank_pending + 1, PendingRequests<int>::kKept);
        out += '\n';
    });
    walker.run();
    std::string all;
    for (const auto& [rank, text] : by_rank) all += text;
    return all;
}

std::string render_call_counts(const Trace& trace)
{
    std::map<std::string, double> per_op;
    for (const auto& [rank, ops] : count_calls(trace)) {
        for (const auto& [name, t] : ops) per_op[name] += t.calls;
    }
    std::ostringstream out;
    double total = 0;
    for (const auto& [name, calls] : per_op) {
        out << name << ' ' << number(calls) << '\n';
        total += calls;
    }
    out << "total " << number(total) << '\n';
    return out.str();
}

std::string render_call_counts_json(const Trace& trace)
{
    const PerRankTotals totals = count_calls(trace);
    std::map<std::string, double> per_op;
    std::ostringstream out;
    out << "{\"ranks\": " << trace.header.ranks << ", \"by_rank\": {";
    bool first_rank = true;
    for (const auto& [rank, ops] : totals) {
        out << (first_rank ? "" : ", ") << '"' << rank << "\": {";
        first_rank = false;
        bool first_op = true;
        for (const auto& [name, t] : ops) {
            per_op[name] += t.calls;
            out << (first_op ? "" : ", ") << json_string(name) << ": {\"calls\": " << number(t.calls)
                << ", \"bytes\": " << number(t.bytes) << ", \"peers\": {";
            first_op = false;
            bool first = true;
            for (const auto& [peer, n] : t.peers) {
                out << (first ? "" : ", ") << json_string(peer) << ": " << number(n);
                first = false;
            }
            out << "}, \"matched\": {";
            first = true;
            for (const auto& [peer, n] : t.matched) {
                out << (first ? "" : ", ") << json_string(peer) << ": " << number(n);
                first = false;
            }
            out << "}}";
        }
        out << '}';
    }
    out << "}, \"operations\": {";
    bool first = true;
    for (const auto& [name, calls] : per_op) {
        out << (first ? "" : ", ") << json_string(name) << ": " << number(calls);
        first = false;
    }
    out << "}}\n";
    return out.str();
}

CommunicationMatrix communication_matrix(const Trace& trace)
{
    CommunicationMatrix matrix;
    matrix.ranks = trace.header.ranks;
    TraceWalker walker(trace, [&](const Event& e, Rank sender, const CommunicatorTable& comms, double weight) {
        const auto kind = operation_kind(e.op);
        if (kind != OperationKind::send && kind != OperationKind::sendrecv && kind != OperationKind::start) return;
        // A started persistent receive carries recv_bytes, a started send bytes, as replay tells them apart.
        const Value* bytes = e.find(Role::bytes);
        const Value* peer = e.find(Role::peer);
        if (!bytes || !peer) return;
        const double size = expected_value(*bytes, sender);
        const Value* comm = e.find(Role::comm);
        const int64_t comm_id = comm ? comm->value_for(sender).value_or(0) : 0;
        for (const auto& [relative, share] : shares(*peer, sender)) {
            if (relative == kProcNull) continue;  // a send to MPI_PROC_NULL moves nothing
            const auto receiver = comms.world_peer(sender, comm_id, relative);
            Traffic& traffic = receiver ? matrix.pairs[{sender, *receiver}] : matrix.unresolved;
            traffic.messages += weight * share;
            traffic.bytes += weight * share * size;
        }
    });
    walker.run();
    return matrix;
}

std::string render_matrix(const Trace& trace)
{
    const CommunicationMatrix matrix = communication_matrix(trace);
    std::ostringstream out;
    out << "# point-to-point traffic between world ranks (collectives are not pairwise: left out)\n"
        << "# sender receiver messages bytes\n";
    Traffic total;
    for (const auto& [pair, traffic] : matrix.pairs) {
        out << pair.first << ' ' << pair.second << ' ' << number(traffic.messages) << ' ' << number(traffic.bytes)
            << '\n';
        total.messages += traffic.messages;
        total.bytes += traffic.bytes;
    }
    out << "total " << number(total.messages) << ' ' << number(total.bytes) << '\n';
    if (matrix.unresolved.messages > 0) {
        out << "unresolved " << number(matrix.unresolved.messages) << ' ' << number(matrix.unresolved.bytes) << '\n';
    }
    return out.str();
}

std::string render_matrix_json(const Trace& trace)
{
    const CommunicationMatrix matrix = communication_matrix(trace);
    std::ostringstream out;
    out << "{\"ranks\": " << matrix.ranks << ", \"pairs\": [";
    Traffic total;
    bool first = true;
    for (const auto& [pair, traffic] : matrix.pairs) {
        out << (first ? "" : ", ") << "{\"from\": " << pair.first << ", \"to\": " << pair.second
            << ", \"messages\": " << number(traffic.messages) << ", \"bytes\": " << number(traffic.bytes) << '}';
        first = false;
        total.messages += traffic.messages;
        total.bytes += traffic.bytes;
    }
    out << "], \"total\": {\"messages\": " << number(total.messages) << ", \"bytes\": " << number(total.bytes)
        << "}, \"unresolved\": {\"messages\": " << number(matrix.unresolved.messages)
        << ", \"bytes\": " << number(matrix.unresolved.bytes) << "}}\n";
    return out.str();
}

}  // namespace htrace
