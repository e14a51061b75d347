#include "extrap/model.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

using namespace htrace;

namespace {

// The two-dimensional grid MPI_Dims_create makes: as square as the rank count allows, the larger
// extent first (8 -> {4, 2}).
JobShape grid_of(int64_t ranks)
{
    int64_t smaller = 1;
    for (int64_t d = 1; d * d <= ranks; ++d) {
        if (ranks % d == 0) smaller = d;
    }
    return JobShape{ranks, {ranks / smaller, smaller}};
}

std::vector<Sample> samples_of(const std::vector<int64_t>& rank_counts, const std::function<double(double)>& value)
{
    std::vector<Sample> samples;
    for (int64_t ranks : rank_counts) samples.push_back({JobShape{ranks, {}}, value(static_cast<double>(ranks))});
    return samples;
}

double relative_error(double got, double want) { return std::abs(got - want) / std::abs(want); }

Model model_of(ModelShape shape, double a, double b, ModelVariable variable = ModelVariable::ranks, int dimension = 0)
{
    Model model;
    model.shape = shape;
    model.a = a;
    model.b = b;
    model.variable = variable;
    model.dimension = dimension;
    return model;
}

}  // namespace

TEST_CASE("each shape is recovered from exact data and predicts a larger rank count")
{
    struct Case {
        ModelShape shape;
        std::function<double(double)> value;
    };
    const std::vector<Case> cases = {
        {ModelShape::linear, [](double n) { return 3.25 + 2.5 * n; }},
        {ModelShape::logarithmic, [](double n) { return 16.5 + 4.25 * std::log(n); }},
        {ModelShape::power, [](double n) { return 3.5 * std::pow(n, 0.7); }},
        {ModelShape::power, [](double n) { return -1000.5 / n; }},
        {ModelShape::linear_log, [](double n) { return 1.5 + 2 * n * std::log(n); }},
        {ModelShape::power_log, [](double n) { return 0.25 * std::sqrt(n) * std::log(n); }},
    };
    for (const std::vector<int64_t>& rank_counts : {std::vector<int64_t>{4, 8, 16}, std::vector<int64_t>{2, 4, 8, 16}}) {
        for (size_t i = 0; i < cases.size(); ++i) {
            CAPTURE(i);
            CAPTURE(rank_counts.size());
            const std::vector<Sample> samples = samples_of(rank_counts, cases[i].value);
            const std::optional<Model> model = fit_model(samples);
            REQUIRE(model);
            CAPTURE(model->text());
            CHECK(model->shape == cases[i].shape);
            CHECK(model->variable == ModelVariable::ranks);
            CHECK_FALSE(model->integral);
            CHECK(relative_error(model->at(JobShape{64, {}}), cases[i].value(64)) < 1e-9);
            CHECK(worst_relative_error(*model, samples) < 1e-12);
        }
    }
}

TEST_CASE("constant data gives a constant although a line fits it too")
{
    const std::optional<Model> model = fit_model(samples_of({4, 8, 16, 32}, [](double) { return 12.0; }));
    REQUIRE(model);
    CHECK(model->shape == ModelShape::constant);
    CHECK(model->integral);
    CHECK(model->at(JobShape{1024, {}}) == 12);
    CHECK(model->text() == "12");
}

TEST_CASE("where several models fit exactly the simplest is chosen")
{
    // 0.3 N is also a power law with exponent 1, 0.3 ln N a power_log with exponent 0.
    const std::optional<Model> line = fit_model(samples_of({3, 7, 11}, [](double n) { return 0.3 * n; }));
    REQUIRE(line);
    CHECK(line->shape == ModelShape::linear);
    CHECK(line->text() == "0.3 * N");
    const std::optional<Model> logarithm = fit_model(samples_of({3, 7, 11}, [](double n) { return 0.3 * std::log(n); }));
    REQUIRE(logarithm);
    CHECK(logarithm->shape == ModelShape::logarithmic);
    CHECK(logarithm->text() == "0.3 * ln(N)");
}

TEST_CASE("a simpler model whose score is within 1 percent of the best is preferred")
{
    // Noisy counts about 1500: the power law N^-0.01 predicts the left-out samples a hair better
    // than the logarithm, by less than 1% of its score.
    const std::vector<Sample> samples = {{JobShape{4, {}}, 1516}, {JobShape{8, {}}, 1522},
                                         {JobShape{16, {}}, 1481}, {JobShape{32, {}}, 1495}};
    const std::optional<Model> model = fit_model(samples);
    REQUIRE(model);
    CHECK(model->shape == ModelShape::logarithmic);
}

TEST_CASE("strong-scaling bytes extrapolate to an exact integral count")
{
    const std::vector<Sample> samples = samples_of({4, 8, 16}, [](double n) { return 8 * 1048576 / n; });
    const std::optional<Model> model = fit_model(samples);
    REQUIRE(model);
    CHECK(model->shape == ModelShape::power);
    CHECK(model->integral);
    CHECK(model->at(JobShape{64, {}}) == 131072);
    CHECK(model->at(JobShape{1024, {}}) == 8192);
    CHECK(worst_relative_error(*model, samples) == 0);
}

TEST_CASE("a value that follows a grid dimension is modelled in that dimension, not in the rank count")
{
    // A halo under strong scaling: its size is the local extent along dimension 1, 64 / d1.
    // Rank count 2 ({2, 1}) is needed: at 4, 8, 16 alone d1 takes two values, through which a line
    // and a power law fit equally well.
    std::vector<Sample> samples;
    for (int64_t ranks : {2, 4, 8, 16}) {
        const JobShape shape = grid_of(ranks);
        samples.push_back({shape, 8.0 * (64.0 / static_cast<double>(shape.dims[1]))});
    }
    CHECK(samples[2].at.dims == std::vector<int64_t>{4, 2});
    const std::optional<Model> model = fit_model(samples);
    REQUIRE(model);
    CHECK(model->variable == ModelVariable::dimension);
    CHECK(model->dimension == 1);
    CHECK(model->shape == ModelShape::power);
    CHECK(model->integral);
    CHECK(model->text() == "512 * d1^-1");
    CHECK(model->at(grid_of(64)) == 64);
    CHECK(model->at(grid_of(256)) == 32);
    CHECK(std::isnan(model->at(JobShape{64, {}})));  // no grid: no d1
}

TEST_CASE("a grid dimension with only two values among three samples does not make a curve")
{
    // d1 at 4, 8, 16 is 2, 2, 4: leaving out 16 leaves one value of d1, so nothing checks a curve
    // in d1; any would fit the other two exactly (the line 384 - 64 d1 gives -128 at 64 ranks).
    std::vector<Sample> samples;
    for (int64_t ranks : {4, 8, 16}) {
        const JobShape shape = grid_of(ranks);
        samples.push_back({shape, 8.0 * (64.0 / static_cast<double>(shape.dims[1]))});
    }
    const std::optional<Model> model = fit_model(samples);
    REQUIRE(model);
    CAPTURE(model->text());
    CHECK(model->variable == ModelVariable::ranks);
    CHECK(model->at(grid_of(64)) > 0);
}

TEST_CASE("where a grid dimension equals the rank count the model is in the rank count")
{
    std::vector<Sample> samples;
    for (int64_t ranks : {4, 8, 16}) samples.push_back({JobShape{ranks, {ranks}}, 5.0 * static_cast<double>(ranks)});
    const std::optional<Model> model = fit_model(samples);
    REQUIRE(model);
    CHECK(model->variable == ModelVariable::ranks);
    CHECK(model->text() == "5 * N");
}

TEST_CASE("a dimension missing from some samples is not tried")
{
    // d0 would fit exactly, but the 16-rank job has no grid.
    std::vector<Sample> samples = {{JobShape{4, {3}}, 3.0}, {JobShape{8, {5}}, 5.0}, {JobShape{16, {}}, 9.0}};
    const std::optional<Model> model = fit_model(samples);
    REQUIRE(model);
    CHECK(model->variable == ModelVariable::ranks);
}

TEST_CASE("noisy compute times still give a model that predicts within 10 percent")
{
    // Every pattern of +-2% over the four samples, the corners of the noise. (A growth as slow as
    // the noise, or three samples only, can be bent further: each fold then fits the noise.)
    const std::vector<int64_t> rank_counts = {4, 8, 16, 32};
    const auto noisy = [&](const std::function<double(double)>& time, int pattern) {
        std::vector<Sample> samples;
        for (size_t i = 0; i < rank_counts.size(); ++i) {
            const double noise = (pattern >> i) & 1 ? 1.02 : 0.98;
            samples.push_back({JobShape{rank_counts[i], {}}, time(static_cast<double>(rank_counts[i])) * noise});
        }
        return samples;
    };
    for (int pattern = 0; pattern < 16; ++pattern) {
        CAPTURE(pattern);
        const auto strong_scaling = [](double n) { return 0.8 / n; };
        const std::optional<Model> strong = fit_model(noisy(strong_scaling, pattern));
        REQUIRE(strong);
        CAPTURE(strong->text());
        CHECK(strong->shape == ModelShape::power);
        CHECK(relative_error(strong->at(JobShape{64, {}}), strong_scaling(64)) < 0.10);

        const std::optional<Model> weak = fit_model(noisy([](double) { return 1.5; }, pattern));
        REQUIRE(weak);
        CAPTURE(weak->text());
        CHECK(relative_error(weak->at(JobShape{64, {}}), 1.5) < 0.10);
    }
}

TEST_CASE("a single sample gives a constant")
{
    const std::vector<Sample> samples = {{JobShape{8, {4, 2}}, 42.5}};
    const std::optional<Model> model = fit_model(samples);
    REQUIRE(model);
    CHECK(model->shape == ModelShape::constant);
    CHECK_FALSE(model->integral);
    CHECK(model->at(JobShape{512, {}}) == 42.5);
}

TEST_CASE("two samples give a constant where they agree and a line in the rank count where not")
{
    const std::optional<Model> same = fit_model(samples_of({4, 8}, [](double) { return 7.0; }));
    REQUIRE(same);
    CHECK(same->shape == ModelShape::constant);
    CHECK(same->at(JobShape{64, {}}) == 7);

    const std::optional<Model> changing = fit_model(samples_of({4, 8}, [](double n) { return 1.0 / n; }));
    REQUIRE(changing);
    CHECK(changing->shape == ModelShape::linear);
    CHECK(changing->variable == ModelVariable::ranks);
    CHECK(worst_relative_error(*changing, samples_of({4, 8}, [](double n) { return 1.0 / n; })) < 1e-12);

    // Both at one rank count: no slope, so their mean.
    const std::vector<Sample> one_count = {{JobShape{4, {}}, 2.0}, {JobShape{4, {}}, 4.0}};
    const std::optional<Model> mean = fit_model(one_count);
    REQUIRE(mean);
    CHECK(mean->shape == ModelShape::constant);
    CHECK(mean->at(JobShape{64, {}}) == 3);
}

TEST_CASE("no model is given where none is finite at every sample")
{
    CHECK_FALSE(fit_model(std::vector<Sample>{}));
    CHECK_FALSE(fit_model(samples_of({4, 8, 16}, [](double) { return std::nan(""); })));
    // Values of both signs rule out the power laws, not the others.
    const std::optional<Model> crossing = fit_model(samples_of({4, 8, 16}, [](double n) { return n - 8; }));
    REQUIRE(crossing);
    CHECK(crossing->shape == ModelShape::linear);
}

TEST_CASE("integer data is integral only where the model gives it back when rounded")
{
    const std::optional<Model> exact = fit_model(samples_of({4, 8, 16}, [](double n) { return 3 + 8 * n; }));
    REQUIRE(exact);
    CHECK(exact->integral);
    CHECK(exact->at(JobShape{64, {}}) == 515);

    // Counts that scatter: no model gives every one back.
    const std::vector<Sample> scattered = {{JobShape{4, {}}, 100}, {JobShape{8, {}}, 103},
                                           {JobShape{16, {}}, 99}, {JobShape{32, {}}, 101}};
    const std::optional<Model> model = fit_model(scattered);
    REQUIRE(model);
    CHECK_FALSE(model->integral);
    CHECK(model->at(JobShape{64, {}}) != std::round(model->at(JobShape{64, {}})));

    const std::optional<Model> fractional = fit_model(samples_of({4, 8, 16}, [](double n) { return 0.3 * n; }));
    REQUIRE(fractional);
    CHECK_FALSE(fractional->integral);
}

TEST_CASE("an integral model rounds values a hair off an integer")
{
    Model model = model_of(ModelShape::linear, 2.999999999, 2.0);
    model.integral = true;
    CHECK(model.at(JobShape{8, {}}) == 19);
    model.a = 3.000000001;
    CHECK(model.at(JobShape{8, {}}) == 19);
    model.a = 2.5;
    model.b = -1;
    CHECK(model.at(JobShape{5, {}}) == -3);  // -2.5: half away from zero, as std::llround
    model.integral = false;
    CHECK(model.at(JobShape{5, {}}) == -2.5);
}

TEST_CASE("text writes the formula with N for the rank count and d0, d1 for grid dimensions")
{
    CHECK(model_of(ModelShape::power, 2048, -1).text() == "2048 * N^-1");
    CHECK(model_of(ModelShape::logarithmic, 16, 4).text() == "16 + 4 * ln(N)");
    CHECK(model_of(ModelShape::logarithmic, 16, -4).text() == "16 - 4 * ln(N)");
    CHECK(model_of(ModelShape::linear, 3, 8, ModelVariable::dimension, 1).text() == "3 + 8 * d1");
    CHECK(model_of(ModelShape::linear, 0, 8, ModelVariable::dimension, 0).text() == "8 * d0");
    CHECK(model_of(ModelShape::constant, 12, 0).text() == "12");
    CHECK(model_of(ModelShape::linear_log, 1.5, 2).text() == "1.5 + 2 * N * ln(N)");
    CHECK(model_of(ModelShape::power_log, 0.25, 0.5).text() == "0.25 * N^0.5 * ln(N)");
    CHECK(model_of(ModelShape::constant, 1.0 / 3.0, 0).text() == "0.333333");
    CHECK(model_of(ModelShape::power, 8388608, -1).text() == "8.38861e+06 * N^-1");
}

TEST_CASE("worst relative error is the largest error relative to each value")
{
    const Model ten = model_of(ModelShape::constant, 10, 0);
    const std::vector<Sample> samples = {{JobShape{4, {}}, 10}, {JobShape{8, {}}, 12.5}, {JobShape{16, {}}, 9}};
    CHECK(worst_relative_error(ten, samples) == doctest::Approx(0.2));
    CHECK(worst_relative_error(ten, std::vector<Sample>{{JobShape{4, {}}, 10}}) == 0);
}
