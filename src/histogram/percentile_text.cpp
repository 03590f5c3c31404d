#include "punctual/histogram/percentile_text.hpp"

#include <charconv>
#include <cmath>
#include <string_view>

#include "punctual/histogram/iteration.hpp"

namespace punctual::hdr {

namespace {

// Decimal digits (no leading zeros, "0" for zero) and the position of the decimal point
// relative to their start, from the shortest representation that round-trips.
struct shortest_decimal {
  std::string digits;
  int point = 0;  // value = 0.<digits> * 10^point
};

shortest_decimal to_shortest(double non_negative) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, non_negative, std::chars_format::scientific);
  const char* p = buf;
  shortest_decimal out;
  for (; p < res.ptr && *p != 'e'; ++p) {
    if (*p != '.') out.digits += *p;
  }
  int exp10 = 0;
  if (p < res.ptr) {
    ++p;
    if (p < res.ptr && *p == '+') ++p;
    std::from_chars(p, res.ptr, exp10);
  }
  out.point = exp10 + 1;
  return out;
}

// Adds one to a string of decimal digits, growing it on carry out.
void increment_digits(std::string& digits) {
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (*it != '9') {
      ++*it;
      return;
    }
    *it = '0';
  }
  digits.insert(digits.begin(), '1');
}

void append_padded(std::string& out, std::string_view text, std::size_t width) {
  if (text.size() < width) out.append(width - text.size(), ' ');
  out.append(text);
}

void append_fixed_padded(std::string& out, double value, int decimals, std::size_t width) {
  std::string text;
  append_java_fixed(text, value, decimals);
  append_padded(out, text, width);
}

void append_int_padded(std::string& out, std::int64_t value, std::size_t width) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof buf, value);
  append_padded(out, std::string_view(buf, static_cast<std::size_t>(res.ptr - buf)), width);
}

struct row_format {
  int decimals;
  double ratio;
  bool csv;
};

void append_row(std::string& out, const row_format& f, std::int64_t value, double level,
                std::int64_t running) {
  const double fraction = level / 100.0;
  const bool last = level == 100.0;
  const double scaled = static_cast<double>(value) / f.ratio;
  if (f.csv) {
    append_java_fixed(out, scaled, f.decimals);
    out += ',';
    append_java_fixed(out, fraction, 12);
    out += ',';
    append_int_padded(out, running, 0);
    out += ',';
    if (last) {
      out += "Infinity";
    } else {
      append_java_fixed(out, 1.0 / (1.0 - fraction), 2);
    }
    out += '\n';
    return;
  }
  append_fixed_padded(out, scaled, f.decimals, 12);
  out += ' ';
  append_fixed_padded(out, fraction, 12, 2);
  out += ' ';
  append_int_padded(out, running, 10);
  if (!last) {
    out += ' ';
    append_fixed_padded(out, 1.0 / (1.0 - fraction), 2, 14);
  }
  out += '\n';
}

void append_rows(std::string& out, const histogram& h, const percentile_text_options& o) {
  const row_format f{h.params().significant_digits, o.output_value_unit_ratio, o.csv};
  for (const iteration_step& step : percentile_steps(h, o.ticks_per_half_distance)) {
    append_row(out, f, step.value_iterated_to, step.percentile_level_iterated_to,
               step.total_count_to_this_value);
  }
}

void append_footer(std::string& out, const histogram& h, const percentile_text_options& o) {
  const int sig = h.params().significant_digits;
  const bool empty = h.total_count() == 0;
  const double mean = empty ? 0.0 : h.mean();
  const double stddev = empty ? 0.0 : h.stddev();
  out += "#[Mean    = ";
  append_fixed_padded(out, mean / o.output_value_unit_ratio, sig, 12);
  out += ", StdDeviation   = ";
  append_fixed_padded(out, stddev / o.output_value_unit_ratio, sig, 12);
  out += "]\n#[Max     = ";
  append_fixed_padded(out, static_cast<double>(h.max()) / o.output_value_unit_ratio, sig, 12);
  out += ", Total count    = ";
  append_int_padded(out, h.total_count(), 12);
  out += "]\n#[Buckets = ";
  append_int_padded(out, h.bucket_count(), 12);
  out += ", SubBuckets     = ";
  append_int_padded(out, h.sub_bucket_count(), 12);
  out += "]\n";
}

}  // namespace

void append_java_fixed(std::string& out, double value, int decimals) {
  if (std::isnan(value)) {
    out += "NaN";
    return;
  }
  if (std::signbit(value)) out += '-';
  if (std::isinf(value)) {
    out += "Infinity";
    return;
  }
  if (decimals < 0) decimals = 0;
  const shortest_decimal d = to_shortest(std::fabs(value));
  const int n = static_cast<int>(d.digits.size());
  // Scaled by 10^decimals the value is digits * 10^shift; Java rounds those digits half-up.
  const int shift = d.point - n + decimals;
  std::string scaled;
  if (shift >= 0) {
    scaled = d.digits;
    scaled.append(static_cast<std::size_t>(shift), '0');
  } else if (n + shift < 0) {
    scaled = "0";
  } else {
    const auto keep = static_cast<std::size_t>(n + shift);
    scaled = keep == 0 ? std::string("0") : d.digits.substr(0, keep);
    if (d.digits[keep] >= '5') increment_digits(scaled);
  }
  const auto frac = static_cast<std::size_t>(decimals);
  if (scaled.size() < frac + 1) scaled.insert(0, frac + 1 - scaled.size(), '0');
  out.append(scaled, 0, scaled.size() - frac);
  if (frac > 0) {
    out += '.';
    out.append(scaled, scaled.size() - frac, frac);
  }
}

std::string java_fixed(double value, int decimals) {
  std::string out;
  append_java_fixed(out, value, decimals);
  return out;
}

std::string percentile_distribution_text(const histogram& h,
                                         const percentile_text_options& options) {
  std::string out;
  if (options.csv) {
    out += "\"Value\",\"Percentile\",\"TotalCount\",\"1/(1-Percentile)\"\n";
  } else {
    append_padded(out, "Value", 12);
    out += ' ';
    append_padded(out, "Percentile", 14);
    out += ' ';
    append_padded(out, "TotalCount", 10);
    out += ' ';
    append_padded(out, "1/(1-Percentile)", 14);
    out += "\n\n";
  }
  append_rows(out, h, options);
  if (!options.csv) append_footer(out, h, options);
  return out;
}

void write_percentile_distribution(std::ostream& out, const histogram& h,
                                   const percentile_text_options& options) {
  const std::string text = percentile_distribution_text(h, options);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

}  // namespace punctual::hdr
