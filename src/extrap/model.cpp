#include "extrap/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace htrace {
namespace {

constexpr double kTiny = 1e-300;
constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The model's variable at `shape`: NaN where the shape has no such grid dimension.
double variable_at(ModelVariable variable, int dimension, const JobShape& shape)
{
    if (variable == ModelVariable::ranks) return static_cast<double>(shape.ranks);
    if (dimension < 0 || static_cast<size_t>(dimension) >= shape.dims.size()) return kNaN;
    return static_cast<double>(shape.dims[static_cast<size_t>(dimension)]);
}

double formula(ModelShape shape, double a, double b, double x)
{
    switch (shape) {
    case ModelShape::constant: return a;
    case ModelShape::linear: return a + b * x;
    case ModelShape::logarithmic: return a + b * std::log(x);
    case ModelShape::power: return a * std::pow(x, b);
    case ModelShape::linear_log: return a + b * x * std::log(x);
    case ModelShape::power_log: return a * std::pow(x, b) * std::log(x);
    }
    return kNaN;
}

struct Point {
    double x;
    double value;
};

struct Coefficients {
    double a;
    double b;
};

// Least squares of w on u: (intercept, slope); nullopt where all u are equal (no slope to fit).
std::optional<Coefficients> fit_line(const std::vector<double>& u, const std::vector<double>& w)
{
    const double n = static_cast<double>(u.size());
    double u_mean = 0, w_mean = 0;
    for (size_t i = 0; i < u.size(); ++i) {
        u_mean += u[i] / n;
        w_mean += w[i] / n;
    }
    double suu = 0, suw = 0;
    for (size_t i = 0; i < u.size(); ++i) {
        suu += (u[i] - u_mean) * (u[i] - u_mean);
        suw += (u[i] - u_mean) * (w[i] - w_mean);
    }
    if (!(suu > 0)) return std::nullopt;
    const double slope = suw / suu;
    return Coefficients{w_mean - slope * u_mean, slope};
}

// Fits `shape` where it is a straight line: in x, ln x or x ln x for the additive shapes, in
// ln|v| (or ln|v / ln x|) against ln x for the multiplicative ones, whose sign is then put back.
std::optional<Coefficients> fit_points(ModelShape shape, const std::vector<Point>& points)
{
    if (points.empty()) return std::nullopt;
    if (shape == ModelShape::constant) {
        double mean = 0;
        for (const Point& p : points) mean += p.value / static_cast<double>(points.size());
        return Coefficients{mean, 0};
    }
    const double sign = points[0].value < 0 ? -1.0 : 1.0;
    const bool multiplicative = shape == ModelShape::power || shape == ModelShape::power_log;
    std::vector<double> u, w;
    for (const Point& p : points) {
        const bool needs_log_of_x = shape != ModelShape::linear;
        if (needs_log_of_x && !(p.x > 0)) return std::nullopt;
        if (multiplicative && (p.value == 0 || p.value * sign < 0)) return std::nullopt;
        if (shape == ModelShape::power_log && !(p.x > 1)) return std::nullopt;  // ln x would be <= 0
        switch (shape) {
        case ModelShape::linear: u.push_back(p.x); break;
        case ModelShape::linear_log: u.push_back(p.x * std::log(p.x)); break;
        default: u.push_back(std::log(p.x)); break;
        }
        switch (shape) {
        case ModelShape::power: w.push_back(std::log(std::abs(p.value))); break;
        case ModelShape::power_log: w.push_back(std::log(std::abs(p.value) / std::log(p.x))); break;
        default: w.push_back(p.value); break;
        }
    }
    std::optional<Coefficients> line = fit_line(u, w);
    if (!line) return std::nullopt;
    if (multiplicative) return Coefficients{sign * std::exp(line->a), line->b};
    // Rounding leaves a residue where the offset is zero, which text() would show ("-4e-16 + ...").
    double largest = 0;
    for (const Point& p : points) largest = std::max(largest, std::abs(p.value));
    if (std::abs(line->a) <= 1e-12 * largest) line->a = 0;
    return line;
}

// Fits `form` (its shape and variable) to the samples but the one at `left_out` (none: past the end).
std::optional<Model> fit_form(const Model& form, std::span<const Sample> samples, size_t left_out)
{
    std::vector<Point> points;
    for (size_t i = 0; i < samples.size(); ++i) {
        if (i == left_out) continue;
        points.push_back({variable_at(form.variable, form.dimension, samples[i].at), samples[i].value});
    }
    const std::optional<Coefficients> fitted = fit_points(form.shape, points);
    if (!fitted) return std::nullopt;
    Model model = form;
    model.a = fitted->a;
    model.b = fitted->b;
    return model;
}

bool finite_at_every_sample(const Model& model, std::span<const Sample> samples)
{
    return std::all_of(samples.begin(), samples.end(),
                       [&](const Sample& s) { return std::isfinite(model.at(s.at)); });
}

// The worst relative error of the form at each sample when fitted on all the others.
double leave_one_out_score(const Model& form, std::span<const Sample> samples)
{
    double worst = 0;
    for (size_t i = 0; i < samples.size(); ++i) {
        const std::optional<Model> model = fit_form(form, samples, i);
        if (!model) return kInfinity;  // the others cannot pin it down, so nothing validates it
        const double error = std::abs(model->at(samples[i].at) - samples[i].value) /
                             std::max(std::abs(samples[i].value), kTiny);
        if (!std::isfinite(error)) return kInfinity;
        worst = std::max(worst, error);
    }
    return worst;
}

bool varies(std::span<const Sample> samples, ModelVariable variable, int dimension)
{
    const double first = variable_at(variable, dimension, samples[0].at);
    return std::any_of(samples.begin(), samples.end(),
                       [&](const Sample& s) { return variable_at(variable, dimension, s.at) != first; });
}

// The forms to try, simplest first: constant, then each two-parameter shape in the enum's order,
// for the rank count and then each grid dimension that is a variable of its own.
std::vector<Model> candidate_forms(std::span<const Sample> samples)
{
    std::vector<std::pair<ModelVariable, int>> variables;
    if (varies(samples, ModelVariable::ranks, 0)) variables.emplace_back(ModelVariable::ranks, 0);
    size_t shared_dims = samples[0].at.dims.size();
    for (const Sample& s : samples) shared_dims = std::min(shared_dims, s.at.dims.size());
    for (size_t d = 0; d < shared_dims; ++d) {
        const bool same_as_ranks = std::all_of(samples.begin(), samples.end(),
                                               [&](const Sample& s) { return s.at.dims[d] == s.at.ranks; });
        const int dimension = static_cast<int>(d);
        if (!same_as_ranks && varies(samples, ModelVariable::dimension, dimension)) {
            variables.emplace_back(ModelVariable::dimension, dimension);
        }
    }
    std::vector<Model> forms{Model{}};
    for (ModelShape shape : {ModelShape::linear, ModelShape::logarithmic, ModelShape::power,
                             ModelShape::linear_log, ModelShape::power_log}) {
        for (const auto& [variable, dimension] : variables) forms.push_back(Model{shape, variable, dimension});
    }
    return forms;
}

std::string number(double v)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", v + 0.0);  // + 0.0: no "-0"
    return text;
}

}  // namespace

double Model::at(const JobShape& where) const
{
    const double x = shape == ModelShape::constant ? 0.0 : variable_at(variable, dimension, where);
    const double value = formula(shape, a, b, x);
    // std::round rounds half away from zero like std::llround, without its range limit.
    return integral && std::isfinite(value) ? std::round(value) : value;
}

std::string Model::text() const
{
    const std::string x = variable == ModelVariable::ranks ? "N" : "d" + std::to_string(dimension);
    switch (shape) {
    case ModelShape::constant: return number(a);
    case ModelShape::power: return number(a) + " * " + x + "^" + number(b);
    case ModelShape::power_log: return number(a) + " * " + x + "^" + number(b) + " * ln(" + x + ")";
    default: break;
    }
    const std::string term = shape == ModelShape::linear        ? x
                             : shape == ModelShape::logarithmic ? "ln(" + x + ")"
                                                                : x + " * ln(" + x + ")";
    const std::string slope_term = number(std::abs(b)) + " * " + term;
    if (a == 0) return (b < 0 ? "-" : "") + slope_term;
    return number(a) + (b < 0 ? " - " : " + ") + slope_term;
}

// How well a form must predict measured values left out to be as good as any (fit_model).
constexpr double kMeasuredTolerance = 0.05;

std::optional<Model> fit_model(std::span<const Sample> samples)
{
    if (samples.empty()) return std::nullopt;
    std::vector<Model> forms;
    if (samples.size() >= 3) {
        forms = candidate_forms(samples);
    } else {
        // Two samples fit every two-parameter model exactly, so nothing tells one from another: a
        // line where the value changes. The constant after it for two samples at one rank count.
        const double v0 = samples[0].value, v1 = samples.back().value;
        if (std::abs(v0 - v1) > 1e-12 * std::max(std::abs(v0), std::abs(v1))) forms.push_back({ModelShape::linear});
        forms.push_back(Model{});
    }
    double best_score = kInfinity;
    std::vector<std::pair<Model, double>> scored;
    for (const Model& form : forms) {
        const std::optional<Model> model = fit_form(form, samples, samples.size());
        if (!model || !finite_at_every_sample(*model, samples)) continue;
        const double score = samples.size() >= 3 ? leave_one_out_score(form, samples) : 0.0;
        scored.emplace_back(*model, score);
        best_score = std::min(best_score, score);
        if (samples.size() < 3) break;  // no comparison: the first form that fits
    }
    // The simplest form whose score is as good as the best within noise. Measured values (times,
    // the means of drawn values) vary a few percent from run to run, so that three of them can make a
    // curve of noise: there, a form that predicts each input within 5% is as good as any. Whole
    // numbers (bytes, counts) are the program's own, and their trends real.
    const bool measured = std::any_of(samples.begin(), samples.end(), [](const Sample& s) {
        return s.value != std::round(s.value);
    });
    std::optional<Model> chosen;
    for (const auto& [model, score] : scored) {
        if (score <= best_score + 1e-9 || score <= best_score * 1.01 || (measured && score <= kMeasuredTolerance)) {
            chosen = model;
            break;
        }
    }
    if (!chosen) return std::nullopt;

    chosen->integral = std::all_of(samples.begin(), samples.end(), [&](const Sample& s) {
        return std::isfinite(s.value) && s.value == std::round(s.value) &&
               std::round(chosen->at(s.at)) == s.value;
    });
    return chosen;
}

double worst_relative_error(const Model& model, std::span<const Sample> samples)
{
    double worst = 0;
    for (const Sample& s : samples) {
        const double error = std::abs(model.at(s.at) - s.value) / std::max(std::abs(s.value), kTiny);
        worst = std::max(worst, std::isnan(error) ? kInfinity : error);
    }
    return worst;
}

}  // namespace htrace
