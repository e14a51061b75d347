#include "capture/config.hpp"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <utility>
#include <string>

using htrace::capture::check_output_path;
using htrace::capture::Config;
using htrace::capture::read_config;

namespace {

std::map<std::string, std::string> environment;

const char* fake_getenv(const char* name)
{
    auto found = environment.find(name);
    return found == environment.end() ? nullptr : found->second.c_str();
}

}  // namespace

TEST_CASE("MERGE_PRECISION must be a whole number from 0 to 100")
{
    for (const char* bad : {"abc", "101", "-1", "95.5", "", " 95", "95 ", "1e2"}) {
        environment = {{"MERGE_PRECISION", bad}};
        CAPTURE(bad);
        const auto result = read_config(fake_getenv);
        CHECK(result.error.find("MERGE_PRECISION") != std::string::npos);
    }
    for (int good : {0, 50, 95, 100}) {
        environment = {{"MERGE_PRECISION", std::to_string(good)}};
        const auto result = read_config(fake_getenv);
        CHECK(result.error.empty());
        CHECK(result.config.precision == good);
    }
}

TEST_CASE("without any variable the tracer is lossless and writes trace.h")
{
    environment.clear();
    const auto result = read_config(fake_getenv);
    CHECK(result.error.empty());
    CHECK(result.config.precision == 100);
    CHECK(result.config.file == "trace.h");
}

TEST_CASE("HTRACE_BINS and HTRACE_REBALANCE must be positive integers")
{
    environment = {{"HTRACE_BINS", "0"}};
    CHECK(read_config(fake_getenv).error.find("HTRACE_BINS") != std::string::npos);
    environment = {{"HTRACE_REBALANCE", "x"}};
    CHECK(read_config(fake_getenv).error.find("HTRACE_REBALANCE") != std::string::npos);
    environment = {{"HTRACE_BINS", "12"}, {"HTRACE_REBALANCE", "100"}};
    const auto result = read_config(fake_getenv);
    CHECK(result.config.histogram.bins == 12);
    CHECK(result.config.histogram.rebalance_interval == 100);
}

TEST_CASE("an HTRACE_FILE in a directory that cannot be written is refused, naming it")
{
    CHECK(check_output_path("/nonexistent-dir/trace.h").find("/nonexistent-dir") != std::string::npos);
    CHECK(check_output_path("/").find("is a directory") != std::string::npos);
    CHECK(check_output_path("/tmp/some-trace.h").empty());
}

TEST_CASE("an HTRACE_FILE that is a device is refused: a trace is written aside and renamed over it")
{
    CHECK(check_output_path("/dev/full").find("not a regular file") != std::string::npos);
    CHECK(check_output_path("/dev/null").find("not a regular file") != std::string::npos);
}

TEST_CASE("the destination check leaves nothing behind in the directory")
{
    const std::string dir = "/tmp/htrace-config-probe-" + std::to_string(::getpid());
    REQUIRE(::mkdir(dir.c_str(), 0700) == 0);
    CHECK(check_output_path(dir + "/trace.h").empty());
    CHECK(::rmdir(dir.c_str()) == 0);  // fails unless the directory is empty again
}

TEST_CASE("HTRACE_FLUSH_SECONDS is a whole number of seconds, 0 for never")
{
    environment = {{"HTRACE_FLUSH_SECONDS", "30"}};
    CHECK(read_config(fake_getenv).config.flush_seconds == 30);
    for (const char* bad : {"-1", "1.5", "x", ""}) {
        environment = {{"HTRACE_FLUSH_SECONDS", bad}};
        CAPTURE(bad);
        CHECK(read_config(fake_getenv).error.find("HTRACE_FLUSH_SECONDS") != std::string::npos);
    }
    environment.clear();
    CHECK(read_config(fake_getenv).config.flush_seconds == 0);
}

TEST_CASE("HTRACE_STATS and HTRACE_PYTHON_IMPORTS are 0 or 1, off by default")
{
    for (auto [name, on] : {std::pair{"HTRACE_STATS", &Config::stats},
                            std::pair{"HTRACE_PYTHON_IMPORTS", &Config::python_imports}}) {
        CAPTURE(name);
        environment.clear();
        CHECK_FALSE(read_config(fake_getenv).config.*on);
        environment = {{name, "1"}};
        CHECK(read_config(fake_getenv).config.*on);
        environment = {{name, "0"}};
        CHECK_FALSE(read_config(fake_getenv).config.*on);
        for (const char* bad : {"2", "yes", "", "-1"}) {
            environment = {{name, bad}};
            CAPTURE(bad);
            CHECK(read_config(fake_getenv).error.find(name) != std::string::npos);
        }
    }
    environment.clear();
}

TEST_CASE("HTRACE_IO_EXCLUDE is a colon-separated list of paths, empty entries skipped")
{
    environment = {{"HTRACE_IO_EXCLUDE", "/scratch/logs::relative/dir:"}};
    const auto result = read_config(fake_getenv);
    CHECK(result.error.empty());
    CHECK(result.config.io_excluded == std::vector<std::string>{"/scratch/logs", "relative/dir"});
    environment.clear();
    CHECK(read_config(fake_getenv).config.io_excluded.empty());
}
