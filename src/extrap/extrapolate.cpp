#include "extrap/extrapolate.hpp"

#include "extrap/grid.hpp"
#include "extrap/model.hpp"
#include "trace/operation.hpp"
#include "trace/topology.hpp"
#include "trace/trace_check.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

namespace htrace {
namespace {

// What stops the extrapolation: thrown from deep in the walk, caught once at the top.
struct Refusal {
    std::string what;
};

struct Input {
    const Trace* trace;
    JobShape shape;
};

std::string list_text(const std::vector<int64_t>& xs)
{
    std::string text;
    for (int64_t x : xs) text += (text.empty() ? "" : ",") + std::to_string(x);
    return text;
}

std::string class_text(RankClass c, size_t dims, bool parity = false)
{
    static constexpr const char* kPlaces[] = {"first", "middle", "last", "only"};
    std::string text;
    for (size_t k = 0; k < dims; ++k) text += std::string(k == 0 ? "" : " ") + kPlaces[(c >> (2 * k)) & 3];
    if (parity) text += (c >> (2 * kMaxGridDims)) & 1 ? " odd" : " even";
    return text;
}

// A peer as a place relative to the rank, the same at any size where the grid's places are: per
// dimension a step of -4..4, or a wrap to the other edge. Symbolic peers (MPI_PROC_NULL ...) are
// themselves; a peer no step reaches is rank 0 or the last rank where it is one of those.
constexpr int64_t kStepToken = int64_t{1} << 40;
constexpr int64_t kAbsoluteToken = int64_t{1} << 41;
constexpr int64_t kMostStep = 4;
enum StepCode : int64_t { kWrapUp = 1, kWrapDown = 2, kFirstStep = 8 };

std::optional<int64_t> peer_token(int64_t relative, int64_t rank, const JobShape& shape, bool absolute)
{
    if (relative < 0) return relative;
    const int64_t peer = (rank + relative) % shape.ranks;
    if (absolute) {
        if (peer == 0) return kAbsoluteToken;
        if (peer == shape.ranks - 1) return kAbsoluteToken + 1;
        return std::nullopt;
    }
    const auto from = coordinates_of(shape.dims, rank);
    const auto to = coordinates_of(shape.dims, peer);
    int64_t token = kStepToken;
    for (size_t k = 0; k < shape.dims.size(); ++k) {
        const int64_t step = to[k] - from[k];
        // A step to the other edge is a wrap (a periodic grid's neighbour) where the edges are not
        // next to each other.
        int64_t code = 0;
        if (shape.dims[k] > 2 && step == shape.dims[k] - 1) {
            code = kWrapUp;
        } else if (shape.dims[k] > 2 && step == 1 - shape.dims[k]) {
            code = kWrapDown;
        } else if (std::abs(step) <= kMostStep) {
            code = kFirstStep + kMostStep + step;
        } else {
            return std::nullopt;
        }
        token += code << (5 * k);
    }
    return token;
}

// The relative peer a token names for `rank` at `shape`; nullopt where it leaves the grid.
std::optional<int64_t> peer_of_token(int64_t token, int64_t rank, const JobShape& shape)
{
    if (token < 0) return token;
    int64_t peer = 0;
    if (token >= kAbsoluteToken) {
        peer = token == kAbsoluteToken ? 0 : shape.ranks - 1;
    } else {
        auto at = coordinates_of(shape.dims, rank);
        for (size_t k = 0; k < shape.dims.size(); ++k) {
            const int64_t code = ((token - kStepToken) >> (5 * k)) & 31;
            at[k] += code == kWrapUp ? shape.dims[k] - 1 : code == kWrapDown ? 1 - shape.dims[k] : code - kFirstStep - kMostStep;
            if (at[k] < 0 || at[k] >= shape.dims[k]) return std::nullopt;
        }
        peer = rank_at(shape.dims, at);
    }
    return ((peer - rank) % shape.ranks + shape.ranks) % shape.ranks;
}

// Values that name something (a communicator, a file, a mode) rather than measure it: they must be
// the same at every rank count. Roots, keys, colours and view layouts are numbers that may follow
// the rank count or the ranks.
bool names_something(Role role)
{
    return role_is_categorical(role) && role != Role::root && role != Role::key && role != Role::color &&
           role != Role::view_lb && role != Role::view_block && role != Role::view_blocks &&
           role != Role::view_stride && role != Role::view_extent;
}

RankList participants(const Sequence& body)
{
    RankList all;
    for (const Node& node : body) all = all.unite(node.is_event() ? node.event().ranks : participants(node.loop().body));
    return all;
}

class Extrapolator {
public:
    Extrapolator(std::vector<Input> inputs, JobShape target) : inputs_(std::move(inputs)), target_(std::move(target)) {}

    // First: the run's length bounds every computation in it.
    void fit_run_length()
    {
        std::vector<Sample> seconds;
        for (const Input& input : inputs_) seconds.push_back({input.shape, input.trace->header.traced_seconds});
        traced_seconds_ = std::max(0.0, fit("traced seconds", seconds).at(target_));
    }

    Sequence sequence(const std::vector<const Sequence*>& seqs)
    {
        size_t longest = 0;
        for (const Sequence* s : seqs) longest = std::max(longest, s->size());
        Sequence out;
        for (size_t n = 0; n < longest; ++n) {
            for (size_t i = 0; i < seqs.size(); ++i) {
                if (seqs[i]->size() > n) continue;
                const size_t has = static_cast<size_t>(
                    std::find_if(seqs.begin(), seqs.end(), [&](const Sequence* s) { return s->size() > n; }) - seqs.begin());
                refuse(after_event() + ": the trace at " + std::to_string(ranks_of(has)) +
                       " ranks has a call or loop here that the one at " + std::to_string(ranks_of(i)) +
                       " has not (an event at some rank counts only)");
            }
            std::vector<const Node*> nodes;
            for (const Sequence* s : seqs) nodes.push_back(&(*s)[n]);
            const bool is_event = nodes[0]->is_event();
            for (const Node* node : nodes) {
                if (node->is_event() != is_event) refuse(after_event() + ": a call at some rank counts, a loop at others");
            }
            if (is_event) {
                std::vector<const Event*> events;
                for (const Node* node : nodes) events.push_back(&node->event());
                out.push_back(Node{event(events)});
            } else {
                std::vector<const Loop*> loops;
                for (const Node* node : nodes) loops.push_back(&node->loop());
                out.push_back(Node{loop(loops)});
            }
        }
        return out;
    }

    TraceHeader header()
    {
        const TraceHeader& largest = inputs_.back().trace->header;
        TraceHeader h = largest;
        h.ranks = static_cast<int32_t>(target_.ranks);
        for (const Input& input : inputs_) h.precision = std::min(h.precision, input.trace->header.precision);
        h.run_id = 0;
        h.host.clear();
        h.traced_seconds = traced_seconds_;
        h.topologies = topologies_;
        h.rank_times.reset();  // no rank ran at the target's count
        return h;
    }

    const std::vector<std::string>& models() const { return models_; }
    int64_t events_done() const { return event_number_; }

private:
    [[noreturn]] static void refuse(const std::string& what) { throw Refusal{what}; }

    int64_t ranks_of(size_t input) const { return inputs_[input].shape.ranks; }
    std::string after_event() const
    {
        return event_number_ == 0 ? "at the start" : "after event " + std::to_string(event_number_);
    }

    static bool changes(const std::vector<Sample>& samples)
    {
        return std::any_of(samples.begin(), samples.end(),
                           [&](const Sample& s) { return s.value != samples.front().value; });
    }

    Model fit_or_refuse(const std::string& what, const std::vector<Sample>& samples)
    {
        auto model = fit_model(samples);
        if (!model) refuse(what + ": no model fits its values");
        return *model;
    }

    // The model of a value, recorded in the header where the value changes with the rank count.
    Model fit(const std::string& what, const std::vector<Sample>& samples)
    {
        const Model model = fit_or_refuse(what, samples);
        if (changes(samples)) models_.push_back(what + ": " + model.text());
        return model;
    }

    Event event(const std::vector<const Event*>& events)
    {
        ++event_number_;
        const Event& first = *events.front();
        where_ = "event " + std::to_string(event_number_) + " (" + std::string(operation_name(first.op)) + ")";
        for (size_t i = 1; i < events.size(); ++i) {
            const Event& e = *events[i];
            if (e.op != first.op || e.signature != first.signature) {
                refuse(where_ + ": the trace at " + std::to_string(ranks_of(i)) + " ranks has " +
                       std::string(operation_name(e.op)) + " from another call site here");
            }
            if (e.params.size() != first.params.size()) refuse(where_ + ": other parameters at other rank counts");
            for (size_t p = 0; p < e.params.size(); ++p) {
                if (e.params[p].role != first.params[p].role) refuse(where_ + ": other parameters at other rank counts");
            }
        }
        std::vector<RankList> lists;
        for (const Event* e : events) lists.push_back(e->ranks);
        Event out;
        out.op = first.op;
        out.signature = first.signature;
        out.ranks = ranks(lists);
        const Value* comm = first.find(Role::comm);
        const bool on_world = comm != nullptr && comm->is_exact() && world_like_.count(comm->exact());
        for (size_t p = 0; p < first.params.size(); ++p) {
            std::vector<const Value*> values;
            for (const Event* e : events) values.push_back(&e->params[p].value);
            const Role role = first.params[p].role;
            out.params.push_back({role, role == Role::topology ? topology(values) : value(values, role, lists, out.ranks, on_world)});
        }
        out.compute = times(events, &Event::compute, "compute");
        if (std::all_of(events.begin(), events.end(), [](const Event* e) { return e->in_call.count > 0; })) {
            out.in_call = times(events, &Event::in_call, "in_call");
        }
        if (std::any_of(events.begin(), events.end(), [](const Event* e) { return !e->compute_by_rank.empty(); })) {
            models_.push_back(where_ + " compute: one distribution for every rank (the groups of ranks whose "
                              "times differ are not extrapolated)");
        }
        note_world_like(out);
        return out;
    }

    // Communicators whose ranks are the world's, in the world's order (a duplicate, a Cartesian grid
    // over every rank, which MPI libraries do not reorder): their relative peers are places on the
    // grid as the world's are.
    void note_world_like(const Event& e)
    {
        const std::string_view op = operation_name(e.op);
        if (op != "MPI_Comm_dup" && op != "MPI_Comm_idup" && op != "MPI_Comm_dup_with_info" && op != "MPI_Cart_create") {
            return;
        }
        const Value* comm = e.find(Role::comm);
        const Value* made = e.find(Role::new_comm);
        if (comm == nullptr || made == nullptr || !comm->is_exact() || !made->is_exact() || !world_like_.count(comm->exact())) {
            return;
        }
        if (e.ranks.size() == target_.ranks) world_like_.insert(made->exact());
    }

    Loop loop(const std::vector<const Loop*>& loops)
    {
        const std::string where = "the loop after " + (event_number_ == 0 ? std::string("the start") : "event " + std::to_string(event_number_));
        std::vector<RankList> lists;
        std::vector<const Sequence*> bodies;
        for (const Loop* l : loops) {
            if (l->last_leaves_out != loops.front()->last_leaves_out || l->body.size() != loops.front()->body.size()) {
                refuse(where + ": another shape at other rank counts");
            }
            lists.push_back(participants(l->body));
            bodies.push_back(&l->body);
        }
        std::vector<const Value*> counts;
        for (const Loop* l : loops) counts.push_back(&l->iterations);
        where_ = where;
        const RankList target_ranks = ranks(lists);
        Loop out;
        out.iterations = value(counts, Role::requests, lists, target_ranks, false);
        out.last_leaves_out = loops.front()->last_leaves_out;
        out.body = sequence(bodies);
        return out;
    }

    // A set of ranks at the target: the classes its ranks had at every input, which must hold
    // every rank of each and agree between inputs; classes no input had are nobody's where no
    // input's set held ranks of every class it had.
    RankList ranks(const std::vector<RankList>& lists)
    {
        std::set<RankClass> in;
        std::set<RankClass> seen;
        std::vector<std::set<RankClass>> described;
        for (size_t i = 0; i < lists.size(); ++i) {
            const auto classes = describe_ranks(inputs_[i].shape.dims, lists[i].expand());
            if (!classes) {
                refuse(where_ + ": its ranks at " + std::to_string(ranks_of(i)) + " (" + lists[i].to_string() +
                       ") are not whole places of the grid " + list_text(inputs_[i].shape.dims));
            }
            in.insert(classes->begin(), classes->end());
            described.push_back(*classes);
            const auto grid = classes_of_grid(inputs_[i].shape.dims);
            seen.insert(grid.begin(), grid.end());
        }
        for (size_t i = 0; i < lists.size(); ++i) {
            for (RankClass c : classes_of_grid(inputs_[i].shape.dims)) {
                if (in.count(c) != described[i].count(c)) {
                    refuse(where_ + ": the ranks at " + std::to_string(ranks_of(i)) + " (" + lists[i].to_string() +
                           ") " + (in.count(c) ? "leave out" : "take in") + " the ranks at " + class_text(c, inputs_[i].shape.dims.size()) +
                           " of the grid, unlike those at other rank counts");
                }
            }
        }
        for (RankClass c : classes_of_grid(target_.dims)) {
            if (!seen.count(c) && in.size() != seen.size()) {
                refuse(where_ + ": no input has ranks at " + class_text(c, target_.dims.size()) + " of the grid, which the target has");
            }
        }
        if (in.size() == seen.size()) in = classes_of_grid(target_.dims);
        return RankList::from_sorted(ranks_of_classes(target_.dims, in));
    }

    // A value each rank of `domain` has, at one input: peers as places (peer_token).
    std::vector<int64_t> rank_values(const Value& v, const std::vector<Rank>& domain, size_t input, bool peer, bool absolute)
    {
        std::vector<int64_t> out;
        for (Rank r : domain) {
            const auto x = v.value_for(r);
            if (!x) refuse(where_ + ": rank " + std::to_string(r) + " at " + std::to_string(ranks_of(input)) + " ranks has no value");
            if (!peer) {
                out.push_back(*x);
                continue;
            }
            const auto token = peer_token(*x, r, inputs_[input].shape, absolute);
            if (!token) return {};
            out.push_back(*token);
        }
        return out;
    }

    Value value(const std::vector<const Value*>& values, Role role, const std::vector<RankList>& lists,
                const RankList& target_ranks, bool on_world)
    {
        const std::string what = where_ + " " + std::string(role_name(role));
        const bool any_histogram = std::any_of(values.begin(), values.end(), [](const Value* v) { return v->is_histogram(); });
        if (any_histogram) return histogram(values, role, what);
        const bool same = std::all_of(values.begin(), values.end(), [&](const Value* v) { return *v == *values.front(); });
        const bool peer = role_is_relative(role) && on_world;
        if (same && values.front()->is_exact() && !peer) return *values.front();
        if (names_something(role) && !peer) {
            if (same) return *values.front();
            refuse(what + ": a categorical value that changes with the rank count");
        }
        unseen_.clear();
        std::vector<std::vector<Rank>> domains;
        for (const RankList& list : lists) domains.push_back(list.expand());
        const std::vector<Rank> target_domain = target_ranks.expand();
        for (bool parity : {false, true}) {
            for (bool absolute : {false, true}) {
                if (!peer && absolute) continue;
                if (auto v = by_class(values, domains, target_domain, what, peer, absolute, parity)) return *v;
            }
            if (!peer) {
                if (auto v = affine(values, domains, target_domain, what)) return *v;
            }
        }
        const std::string unseen = unseen_.empty() ? "" : "; " + unseen_;
        if (peer) refuse(what + ": peers that are no fixed place on the grid from the rank" + unseen);
        if (names_something(role) || role_is_peer(role)) {
            refuse(what + ": values that follow neither the ranks' places on the grid nor their ranks" + unseen);
        }
        // Values that follow nothing of the rank (a solver's iterations per pair of ranks): drawn
        // alike on every rank from the largest input's, their mean following the rank count.
        return histogram(values, role, what, true);
    }

    // Each class of ranks has one value at each input; numbers are fitted class by class.
    // `parity`: ranks of one place but of odd and even rank are of two classes (ranks in pairs).
    std::optional<Value> by_class(const std::vector<const Value*>& values, const std::vector<std::vector<Rank>>& domains,
                                  const std::vector<Rank>& target_domain, const std::string& what, bool peer, bool absolute,
                                  bool parity)
    {
        const auto class_at = [&](const JobShape& shape, Rank r) {
            return class_of(shape.dims, r) | (parity ? (RankClass(r & 1) << (2 * kMaxGridDims)) : 0);
        };
        std::map<RankClass, std::vector<Sample>> samples;
        for (size_t i = 0; i < values.size(); ++i) {
            const auto xs = rank_values(*values[i], domains[i], i, peer, absolute);
            if (xs.size() != domains[i].size()) return std::nullopt;
            std::map<RankClass, int64_t> of_class;
            for (size_t k = 0; k < xs.size(); ++k) {
                const RankClass c = class_at(inputs_[i].shape, domains[i][k]);
                const auto [at, fresh] = of_class.emplace(c, xs[k]);
                if (!fresh && at->second != xs[k]) return std::nullopt;
            }
            for (const auto& [c, x] : of_class) samples[c].push_back({inputs_[i].shape, static_cast<double>(x)});
        }
        std::map<RankClass, int64_t> at_target;
        for (auto& [c, s] : samples) s = fuller_samples(samples, s);
        // The models of the classes whose values change: one line where they are all the same.
        std::vector<std::pair<RankClass, std::string>> changing;
        for (const auto& [c, s] : samples) {
            if (peer) {
                if (changes(s)) return std::nullopt;
                at_target[c] = static_cast<int64_t>(s.front().value);
                continue;
            }
            const Model model = fit_or_refuse(what, s);
            at_target[c] = std::llround(model.at(target_));
            if (changes(s)) changing.emplace_back(c, model.text());
        }
        const bool one_model = std::all_of(changing.begin(), changing.end(),
                                           [&](const auto& m) { return m.second == changing.front().second; });
        for (const auto& [c, text] : changing) {
            models_.push_back(what + (one_model ? "" : " at " + class_text(c, target_.dims.size(), parity)) + ": " + text);
            if (one_model) break;
        }
        std::vector<PerRankValue> entries;
        for (Rank r : target_domain) {
            const auto found = at_target.find(class_at(target_, r));
            if (found == at_target.end()) {
                unseen_ = "no input has a rank in the place of rank " + std::to_string(r) + " (" +
                          class_text(class_at(target_, r), target_.dims.size(), parity) + ")";
                return std::nullopt;
            }
            int64_t x = found->second;
            if (peer) {
                const auto relative = peer_of_token(x, r, target_);
                if (!relative) refuse(what + ": the peer of rank " + std::to_string(r) + " falls off the grid");
                x = *relative;
            }
            entries.push_back({x, RankList(r), 0});
        }
        return per_rank_or_exact(entries, values.back()->is_exact());
    }

    // A class some inputs lack (the middle of a dimension that small grids have no room for) takes
    // the samples of a class every input has, where they agree at the inputs both are at: two
    // samples of its own would make a line of anything.
    std::vector<Sample> fuller_samples(const std::map<RankClass, std::vector<Sample>>& samples,
                                       const std::vector<Sample>& own) const
    {
        if (own.size() == inputs_.size()) return own;
        for (const auto& [c, full] : samples) {
            if (full.size() != inputs_.size()) continue;
            const bool agrees = std::all_of(own.begin(), own.end(), [&](const Sample& mine) {
                return std::any_of(full.begin(), full.end(), [&](const Sample& theirs) {
                    return theirs.at.ranks == mine.at.ranks && theirs.value == mine.value;
                });
            });
            if (agrees) return full;
        }
        return own;
    }

    // Values that follow the rank, or one coordinate of it on the grid: a + b x, with a and b fitted.
    std::optional<Value> affine(const std::vector<const Value*>& values, const std::vector<std::vector<Rank>>& domains,
                                const std::vector<Rank>& target_domain, const std::string& what)
    {
        const size_t features = 1 + target_.dims.size();
        const auto feature = [&](const JobShape& shape, Rank r, size_t f) {
            return f == 0 ? int64_t{r} : coordinates_of(shape.dims, r)[f - 1];
        };
        for (size_t f = 0; f < features; ++f) {
            std::vector<Sample> as, bs;
            bool fits = true;
            for (size_t i = 0; i < values.size() && fits; ++i) {
                const auto xs = rank_values(*values[i], domains[i], i, false, false);
                const JobShape& shape = inputs_[i].shape;
                // The slope from two ranks of different feature values, checked on every rank.
                std::optional<double> a, b;
                for (size_t k = 1; k < xs.size() && !b; ++k) {
                    const int64_t dx = feature(shape, domains[i][k], f) - feature(shape, domains[i][0], f);
                    if (dx != 0) b = double(xs[k] - xs[0]) / double(dx);
                }
                if (!b) {
                    fits = false;
                    break;
                }
                a = double(xs[0]) - *b * double(feature(shape, domains[i][0], f));
                for (size_t k = 0; k < xs.size() && fits; ++k) {
                    fits = std::abs(*a + *b * double(feature(shape, domains[i][k], f)) - double(xs[k])) < 1e-9;
                }
                as.push_back({shape, *a});
                bs.push_back({shape, *b});
            }
            if (!fits) continue;
            const std::string by = f == 0 ? "rank" : "coordinate " + std::to_string(f - 1);
            const double a = fit(what + " (a + b * " + by + ", a)", as).at(target_);
            const double b = fit(what + " (a + b * " + by + ", b)", bs).at(target_);
            std::vector<PerRankValue> entries;
            for (Rank r : target_domain) {
                entries.push_back({std::llround(a + b * double(feature(target_, r, f))), RankList(r), 0});
            }
            return per_rank_or_exact(entries, false);
        }
        return std::nullopt;
    }

    static Value per_rank_or_exact(const std::vector<PerRankValue>& entries, bool exact_allowed)
    {
        const bool one = std::all_of(entries.begin(), entries.end(),
                                     [&](const PerRankValue& e) { return e.value == entries.front().value; });
        if (exact_allowed && one && !entries.empty()) return Value(entries.front().value);
        return Value(entries);
    }

    // Drawn values: where they change with the rank count, those of the largest input scaled by the
    // model of their mean (sizes, counts); drawn peers and categories must not change.
    Value histogram(const std::vector<const Value*>& values, Role role, const std::string& what, bool drawn = false)
    {
        const bool same = std::all_of(values.begin(), values.end(), [&](const Value* v) { return *v == *values.front(); });
        if (same && !drawn) return *values.front();
        if (role_is_peer(role) || role_is_categorical(role)) {
            refuse(what + ": drawn values that change with the rank count (peers or categories)");
        }
        std::vector<Sample> means;
        for (size_t i = 0; i < values.size(); ++i) {
            const Value& v = *values[i];
            double mean = 0;
            if (v.is_histogram()) {
                mean = v.histogram().mean();
            } else if (v.is_exact()) {
                mean = double(v.exact());
            } else {
                double sum = 0, n = 0;
                for (const auto& e : v.per_rank()) {
                    sum += double(e.value) * double(e.ranks.size());
                    n += double(e.ranks.size());
                }
                mean = n > 0 ? sum / n : 0;
            }
            means.push_back({inputs_[i].shape, mean});
        }
        const Value& largest = *values.back();
        const double factor = means.back().value == 0 ? 1 : fit(what + " (mean)", means).at(target_) / means.back().value;
        Histogram scaled(inputs_.back().trace->header.histogram);
        if (largest.is_histogram()) {
            for (size_t b = 0; b < largest.histogram().bins().size(); ++b) {
                const auto& bin = largest.histogram().bins()[b];
                scaled.add(std::llround(double(largest.histogram().bin_value(b)) * factor), 0, bin.count);
            }
            return Value(std::move(scaled), largest.alike_on_every_rank());
        }
        if (!largest.is_per_rank()) refuse(what + ": drawn at some rank counts only, and changes with them");
        for (const auto& e : largest.per_rank()) {
            scaled.add(std::llround(double(e.value) * factor), e.ranks.first(), static_cast<uint64_t>(e.ranks.size()));
        }
        return Value(std::move(scaled), true);
    }

    // A Cartesian grid's extents at the target, as MPI_Dims_create would make them; other
    // topologies must be the same at every input.
    Value topology(const std::vector<const Value*>& values)
    {
        std::optional<std::string> text;
        for (size_t i = 0; i < values.size(); ++i) {
            if (!values[i]->is_exact()) refuse(where_ + ": its topology differs between ranks");
            if (values[i]->exact() == kNoComm) return *values[i];
            const auto& topologies = inputs_[i].trace->header.topologies;
            const auto found = topologies.find(values[i]->exact());
            if (found == topologies.end()) refuse(where_ + ": its topology is not in the header");
            auto t = parse_topology(found->second);
            if (!t) refuse(where_ + ": its topology is not one");
            if (t->cartesian) t->dims = balanced_dims(target_.ranks, static_cast<int>(t->dims.size()));
            const std::string at_target = topology_text(*t);
            if (text && *text != at_target) refuse(where_ + ": its topology changes shape with the rank count");
            text = at_target;
        }
        const int64_t key = topology_key(*text);
        topologies_[key] = *text;
        return Value(key);
    }

    // The computation before the events' calls, or the time in them (`which`, named `name`).
    TimeStats times(const std::vector<const Event*>& events, TimeStats Event::*which, const std::string& name)
    {
        std::vector<Sample> count, mean, low, high, spread;
        for (size_t i = 0; i < events.size(); ++i) {
            const TimeStats& c = events[i]->*which;
            const JobShape& at = inputs_[i].shape;
            count.push_back({at, double(c.count)});
            mean.push_back({at, c.mean});
            low.push_back({at, c.min});
            high.push_back({at, c.max});
            spread.push_back({at, c.count > 1 ? std::sqrt(c.m2 / double(c.count - 1)) : 0.0});
        }
        TimeStats out;
        // The calls follow from the ranks and the loops around the event: not a model of their own.
        out.count = static_cast<uint64_t>(std::max<int64_t>(1, std::llround(fit_quietly(count))));
        // No computation between two calls, and no call, outlasts the run. Computation measured on
        // oversubscribed cores is mostly waiting for a core, and grows fast with the ranks at the
        // inputs; a model of it may grow faster than the run's own length does.
        const double fitted_mean = fit(where_ + " " + name + " mean", mean).at(target_);
        out.mean = std::clamp(fitted_mean, 0.0, traced_seconds_);
        if (fitted_mean > traced_seconds_) {
            models_.push_back(where_ + " " + name + " mean: at most the run's length, " + std::to_string(traced_seconds_) + " s");
        }
        // The extremes and the spread follow the mean, so that they stay around it.
        out.min = std::clamp(fit_quietly(low), 0.0, out.mean);
        out.max = std::clamp(fit_quietly(high), out.mean, std::max(out.mean, traced_seconds_));
        const double sd = std::max(0.0, fit_quietly(spread));
        out.m2 = out.count > 1 ? sd * sd * double(out.count - 1) : 0;
        return out;
    }

    double fit_quietly(const std::vector<Sample>& samples) const
    {
        const auto model = fit_model(samples);
        return model ? model->at(target_) : samples.back().value;
    }

    std::vector<Input> inputs_;
    JobShape target_;
    std::vector<std::string> models_;
    double traced_seconds_ = 0;  // the run's length at the target (fit_run_length)
    std::map<int64_t, std::string> topologies_;
    int64_t event_number_ = 0;
    std::string where_;
    std::string unseen_;
    std::set<int64_t> world_like_{kWorldComm};  // why the last value by class failed, where a place was missing at the inputs
};

// The grid of `trace`'s ranks in `ndims` dimensions: the Cartesian grid the program made over all
// of its ranks where it made one, else MPI_Dims_create's.
std::vector<int64_t> grid_of(const Trace& trace, int ndims)
{
    for (const auto& [key, text] : trace.header.topologies) {
        const auto t = parse_topology(text);
        if (!t || !t->cartesian || t->dims.size() != static_cast<size_t>(ndims)) continue;
        if (std::accumulate(t->dims.begin(), t->dims.end(), int64_t{1}, std::multiplies<>()) == trace.header.ranks) {
            return t->dims;
        }
    }
    return balanced_dims(trace.header.ranks, ndims);
}

// The program and its input: under SimGrid the command line is its launcher's, which names the rank
// count (`--cfg=smpi/np:16`), and that is the one thing the inputs must differ in.
std::string program_and_input(const std::string& command_line)
{
    std::string out;
    size_t at = 0;
    while (at < command_line.size()) {
        const size_t end = std::min(command_line.find(' ', at), command_line.size());
        const std::string_view word(command_line.data() + at, end - at);
        if (!word.starts_with("--cfg=smpi/np:")) out += (out.empty() ? "" : " ") + std::string(word);
        at = end + 1;
    }
    return out;
}

std::string check_inputs(const std::vector<const Trace*>& traces, const std::vector<std::string>& names, int64_t target)
{
    if (traces.size() < 3) return "needs traces at three or more rank counts (" + std::to_string(traces.size()) + " given)";
    for (size_t i = 0; i < traces.size(); ++i) {
        const TraceHeader& h = traces[i]->header;
        if (h.incomplete()) return names[i] + ": an incomplete trace (h-merge of partial files)";
        if (h.extrapolated()) return names[i] + ": itself extrapolated";
        if (i > 0 && h.ranks == traces[i - 1]->header.ranks) {
            return "two traces at " + std::to_string(h.ranks) + " ranks: each rank count once";
        }
        if (program_and_input(h.command_line) != program_and_input(traces[0]->header.command_line)) {
            return names[i] + ": another command (" + h.command_line + ") than " + names[0] + "'s";
        }
        if (!(h.histogram == traces[0]->header.histogram)) return names[i] + ": other histogram settings";
        if (h.file_names != traces[0]->header.file_names) return names[i] + ": other file names at another rank count";
    }
    if (target < 1 || target > (int64_t{1} << 24)) return "--ranks " + std::to_string(target) + " is outside 1..16777216";
    return {};
}

}  // namespace

ExtrapolationResult extrapolate(const std::vector<Trace>& inputs, const std::vector<std::string>& names,
                                int64_t target_ranks)
{
    std::vector<size_t> order(inputs.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return inputs[a].header.ranks < inputs[b].header.ranks; });
    std::vector<const Trace*> traces;
    std::vector<std::string> sorted_names;
    for (size_t i : order) {
        traces.push_back(&inputs[i]);
        sorted_names.push_back(names[i]);
    }
    if (auto problem = check_inputs(traces, sorted_names, target_ranks); !problem.empty()) return {std::nullopt, problem};

    // The fewest dimensions that name every set of ranks: a Cartesian grid's where there is one.
    std::vector<int> candidates{1, 2, 3};
    for (const auto& [key, text] : traces.back()->header.topologies) {
        if (auto t = parse_topology(text); t && t->cartesian) candidates = {static_cast<int>(t->dims.size())};
    }
    std::string error;
    int64_t furthest = -1;
    for (int ndims : candidates) {
        std::vector<Input> shaped;
        for (const Trace* t : traces) shaped.push_back({t, {t->header.ranks, grid_of(*t, ndims)}});
        Extrapolator extrapolator(shaped, {target_ranks, balanced_dims(target_ranks, ndims)});
        try {
            extrapolator.fit_run_length();
            std::vector<const Sequence*> bodies;
            for (const Trace* t : traces) bodies.push_back(&t->body);
            Trace out;
            out.body = extrapolator.sequence(bodies);
            out.header = extrapolator.header();
            out.locations = traces.back()->locations;  // the same program: its call sites are where they were
            std::string from;
            for (size_t i = 0; i < traces.size(); ++i) {
                from += (i == 0 ? "" : ", ") + sorted_names[i] + " (" + std::to_string(traces[i]->header.ranks) + " ranks)";
            }
            out.header.extrapolation.push_back("from " + from);
            out.header.extrapolation.push_back("grid " + list_text(balanced_dims(target_ranks, ndims)) + " (" +
                                               std::to_string(ndims) + "-D; at the inputs " +
                                               [&] {
                                                   std::string g;
                                                   for (const Input& in : shaped) g += (g.empty() ? "" : " ") + list_text(in.shape.dims);
                                                   return g;
                                               }() + ")");
            for (const std::string& line : extrapolator.models()) out.header.extrapolation.push_back(line);
            // A model may leave the values' range (a size below 0): what every tool would refuse
            // is not written.
            if (auto problem = check_trace(out); !problem.empty()) {
                throw Refusal{"the extrapolated trace would not read (" + problem + ")"};
            }
            return {std::move(out), {}};
        } catch (const Refusal& refusal) {
            if (extrapolator.events_done() > furthest) {
                furthest = extrapolator.events_done();
                error = refusal.what + " (on a " + std::to_string(ndims) + "-D grid of ranks)";
            }
        }
    }
    return {std::nullopt, error};
}

}  // namespace htrace
