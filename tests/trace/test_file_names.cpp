#include "trace/file_names.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace htrace;

TEST_CASE("a file name with the rank in it is one pattern for all ranks, and gives each rank its name back")
{
    for (Rank rank : {0, 1, 7, 17, 123, 4095}) {
        CAPTURE(rank);
        const std::string padded = [&] {
            std::string digits = std::to_string(rank);
            return std::string(digits.size() < 4 ? 4 - digits.size() : 0, '0') + digits;
        }();
        const std::string names[] = {"out." + std::to_string(rank), "ckpt_" + padded + ".dat", "shared.dat",
                                     "run_2024/step_0/rank" + std::to_string(rank) + ".h5", "{odd}}name." +
                                     std::to_string(rank)};
        for (const auto& name : names) {
            CAPTURE(name);
            const std::string pattern = file_name_pattern(name, rank);
            CHECK(file_name_for(pattern, rank) == name);
        }
        CHECK(file_name_pattern("out." + std::to_string(rank), rank) == "out.{rank}");
        CHECK(file_name_pattern("shared.dat", rank) == "shared.dat");
        // Padding shows only where the rank has fewer digits than the name: 4095 in a 4-digit field
        // could be unpadded.
        CHECK(file_name_pattern("ckpt_" + padded + ".dat", rank) ==
              (rank < 1000 ? "ckpt_{rank:04}.dat" : "ckpt_{rank}.dat"));
    }
    // Only the last run of digits that spells the rank: a step number equal to it stays.
    CHECK(file_name_pattern("step_0/out.0", 0) == "step_0/out.{rank}");
    CHECK(file_name_for("step_0/out.{rank}", 5) == "step_0/out.5");
    CHECK(file_name_for("ckpt_{rank:04}.dat", 12345) == "ckpt_12345.dat");
    CHECK(file_name_key("a") != file_name_key("b"));
}
