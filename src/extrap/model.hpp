#pragma once
// Models of how a value changes with the rank count: what extrapolation fits to the values of one
// event at a few rank counts and evaluates at the target count.
//
// The family: constant, linear, logarithmic, power law, and the products of the linear and power
// laws with the logarithm. Each is a function of one variable of the job: the rank count, or the
// extent of one dimension of its process grid (a halo's size under strong scaling follows the grid's
// side, not the rank count). A model is chosen by how well it predicts each input from the others
// (leave one out), the simpler model on a tie, so that two inputs never make a curve of their own.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace htrace {

// Where a value was seen, or is wanted: the rank count and the process grid's extents (empty where
// the job has no grid; dims[0] the slowest-varying, as MPI_Dims_create orders them).
struct JobShape {
    int64_t ranks = 0;
    std::vector<int64_t> dims;
};

struct Sample {
    JobShape at;
    double value = 0;
};

enum class ModelShape : uint8_t {
    constant,      // a
    linear,        // a + b x
    logarithmic,   // a + b ln x
    power,         // a x^b
    linear_log,    // a + b x ln x
    power_log,     // a x^b ln x
};

// x: the rank count, or the extent of grid dimension `dimension`.
enum class ModelVariable : uint8_t { ranks, dimension };

struct Model {
    ModelShape shape = ModelShape::constant;
    ModelVariable variable = ModelVariable::ranks;
    int dimension = 0;  // where variable is dimension
    double a = 0;
    double b = 0;
    // Whether the fitted model gives back every input exactly once rounded (integral values: byte
    // counts, loop counts), so that its value at the target is rounded too.
    bool integral = false;

    double at(const JobShape& shape) const;  // rounded where integral
    // "2048 * N^-1", "16 + 4 * ln(N)", "8 * d1" (d1: the grid's dimension 1): h-dump shows it.
    std::string text() const;
};

// The model that best predicts the samples (at least one; a single sample gives a constant), fitted
// on all of them; nullopt where none is finite at every sample (a power law of values of both signs).
// The dimensions are tried only where every sample has a grid of that many dimensions.
std::optional<Model> fit_model(std::span<const Sample> samples);

// The largest relative error of `model` at the samples (|model - value| / max(|value|, tiny)).
double worst_relative_error(const Model& model, std::span<const Sample> samples);

}  // namespace htrace
