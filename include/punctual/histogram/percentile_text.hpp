// Java HdrHistogram's outputPercentileDistribution (the .hgrm text, spec section 5), and the
// Java-compatible "%.Nf" number formatting that the .hgrm and .hlog texts share.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "punctual/histogram/histogram.hpp"

namespace punctual::hdr {

struct percentile_text_options {
  int ticks_per_half_distance = 5;
  double output_value_unit_ratio = 1e6;  // ns -> ms, as Java's default
  bool csv = false;                      // Java's useCsvFormat variant
};

// The whole .hgrm text, byte for byte what Java 2.2.2 writes for the same histogram.
std::string percentile_distribution_text(const histogram& h,
                                         const percentile_text_options& options = {});
void write_percentile_distribution(std::ostream& out, const histogram& h,
                                   const percentile_text_options& options = {});

// Appends value formatted like Java's String.format(Locale.US, "%.<decimals>f", value): the
// shortest round-trip digits rounded half-up, '.' as the decimal point whatever the C locale.
// (printf rounds the exact binary value instead, so 0.125 -> "0.12" where Java writes "0.13".)
void append_java_fixed(std::string& out, double value, int decimals);
std::string java_fixed(double value, int decimals);

}  // namespace punctual::hdr
