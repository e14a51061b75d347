#pragma once
// Times as trace files store them from format 18: logarithmic codes, whose relative error is the
// same for a 100 ns call and a 10 s one. The mean time inside a call site's calls takes two bytes;
// the minimum, maximum and standard deviation of both times (of a site's calls, and of an event's
// computation before them) one each. The mean computation keeps its nanoseconds: replay re-enacts it, whereas
// the rest only describes the run (replay makes the calls themselves).

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace htrace::time_code {

// The mean's code in steps of 1/1024 of a doubling of 1 + nanoseconds: within 0.034%, to 2^64 ns;
// a call site's table entry says with the largest that it has no times (trace_file.cpp).
inline constexpr double kMeanSteps = 1024;
inline constexpr uint16_t kSiteNotMeasured = 0xffff;
// The other statistics' in steps of 1/6 of a doubling, up to 2^42.5 ns (100 minutes; longer times
// keep the largest code): the minimum rounded down and the maximum up, so that they stay bounds of
// the calls' times (within 12%, and an eighth of a nanosecond), the standard deviation to the
// nearest (within 6%).
inline constexpr double kSpreadSteps = 6;

// In place of the minimum's code: every call took the mean's time (no minimum takes 100 minutes).
inline constexpr uint8_t kAllAlike = 0xff;

enum class Rounding { nearest, down, up };

inline double code_of(double seconds, double steps, double largest, Rounding rounding = Rounding::nearest)
{
    const double nanoseconds = std::isfinite(seconds) ? std::max(seconds, 0.0) * 1e9 : 0.0;
    const double exact = std::log2(1 + nanoseconds) * steps;
    // A time decoded from a code encodes to that code again, whatever the rounding of log2.
    constexpr double kSlack = 1e-6;
    const double code = rounding == Rounding::down ? std::floor(exact + kSlack)
                        : rounding == Rounding::up ? std::ceil(exact - kSlack)
                                                   : std::round(exact);
    return std::clamp(code, 0.0, largest);
}

inline double seconds_of(double code, double steps) { return (std::exp2(code / steps) - 1) / 1e9; }

inline uint16_t mean_code(double seconds) { return static_cast<uint16_t>(code_of(seconds, kMeanSteps, 0xffff)); }
inline double mean_seconds(uint16_t code) { return seconds_of(code, kMeanSteps); }
inline uint8_t spread_code(double seconds, Rounding rounding = Rounding::nearest)
{
    return static_cast<uint8_t>(code_of(seconds, kSpreadSteps, 255, rounding));
}
inline double spread_seconds(uint8_t code) { return seconds_of(code, kSpreadSteps); }

}  // namespace htrace::time_code
