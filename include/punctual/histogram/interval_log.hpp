// HdrHistogram interval logs (.hlog, spec section 4): a Java-canonical writer and a tolerant,
// bounded reader for V2 logs written by Java, C, JS or punctual.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "punctual/histogram/histogram.hpp"

namespace punctual::hdr {

// Writes Java HistogramLogWriter's text (version 1.3, StartTime == BaseTime, legend, then one
// line per interval). All numbers use '.' whatever the locale. Not thread-safe; it only touches
// `out`, and reports I/O failure through the stream's state.
class interval_log_writer {
 public:
  // max_value_unit_ratio divides the max column (1e6: values in ns, column in ms).
  interval_log_writer(std::ostream& out, double log_start_unix_seconds,
                      double max_value_unit_ratio = 1e6, int zlib_level = 9);

  // Comment lines as Java's outputComment ("#" + each `\n`-separated line of `comment`, so pass
  // "[Logged with ...]" for the usual "#[...]" form; a line over 126 characters is split, keeping
  // the brackets; nothing when empty), then version, StartTime, BaseTime and legend.
  void write_header(std::string_view comment = {});
  // Throws std::invalid_argument if tag holds ',', ' ', '\r' or '\n'. An empty tag is the
  // untagged stream. start is relative to the log start (BaseTime).
  void write_interval(std::string_view tag, double start_seconds_relative, double length_seconds,
                      const histogram& h);

  double log_start_unix_seconds() const noexcept { return start_; }
  double max_value_unit_ratio() const noexcept { return ratio_; }

 private:
  std::ostream& out_;
  double start_;
  double ratio_;
  int zlib_level_;
  std::string line_;  // reused between lines
};

// Java Date.toString() in UTC, e.g. "Tue Nov 14 22:13:20 UTC 2023".
std::string java_utc_date_text(double unix_seconds);

struct log_interval {
  std::string tag;                // empty: untagged
  double start_unix_seconds = 0;  // absolute: start field + base time
  double length_seconds = 0;
  double max_column = 0;  // informational, as written (its unit ratio is not recorded)
  int line = 0;
  histogram value;
};

struct interval_log {
  std::string format_version;  // "" when the log has no version line
  double start_time_unix_seconds = 0;
  double base_time_unix_seconds = 0;
  bool has_start_time_line = false;
  bool has_base_time_line = false;
  std::vector<std::string> comments;    // text after '#', other than the recognised lines
  std::vector<log_interval> intervals;  // in file order
};

// Caps that keep memory bounded whatever the input.
struct log_read_limits {
  std::size_t max_line_bytes = 16u << 20;
  std::size_t max_intervals = 1'000'000;
  std::size_t max_total_slots = 64u << 20;  // summed counts_length of kept histograms (8 B each)
};

struct log_read_result {
  std::optional<interval_log> log;
  int error_line = 0;  // 1-based; 0 when the error is not tied to a line
  std::string error;   // "line N: what", empty on success
  explicit operator bool() const noexcept { return log.has_value(); }
};

// Never throws on bad input (std::bad_alloc aside); every failure names the line.
log_read_result read_interval_log(std::string_view text, const log_read_limits& limits = {});
log_read_result read_interval_log(std::istream& in, const log_read_limits& limits = {});
log_read_result read_interval_log_file(const std::string& path, const log_read_limits& limits = {});

// The same reading, one interval at a time: each is handed to `on_interval`, with the header as
// read so far, and not kept, so memory stays one histogram however long the log (the total-slot
// cap does not apply; max_intervals still does). The result's log has the header, no intervals.
using interval_handler = std::function<void(const interval_log& header, log_interval&& interval)>;
log_read_result read_interval_log_file(const std::string& path, const interval_handler& on_interval,
                                       const log_read_limits& limits = {});

}  // namespace punctual::hdr
