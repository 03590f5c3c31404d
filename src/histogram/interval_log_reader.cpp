#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>

#include "punctual/histogram/codec.hpp"
#include "punctual/histogram/interval_log.hpp"

namespace punctual::hdr {

namespace {

constexpr double seconds_per_year = 365 * 24 * 3600.0;
constexpr std::size_t max_kept_comments = 64;
constexpr std::size_t max_kept_comment_bytes = 1024;
constexpr std::size_t max_tag_bytes = 256;

bool parse_double(std::string_view text, double& out) {
  if (text.empty()) return false;
  if (text.front() == '+') text.remove_prefix(1);  // Java's Double.parseDouble allows it
  const auto res = std::from_chars(text.data(), text.data() + text.size(), out);
  return res.ec == std::errc{} && res.ptr == text.data() + text.size() && std::isfinite(out);
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// Java HistogramLogReader's state machine (spec 4.4): explicit StartTime/BaseTime lines win;
// otherwise the first interval decides.
class log_parser {
 public:
  explicit log_parser(const log_read_limits& limits, const interval_handler* on_interval = nullptr)
      : limits_(limits), on_interval_(on_interval) {}

  // False once an error has been recorded; later lines are then ignored.
  bool feed(std::string_view line) {
    ++line_number_;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) return true;
    if (line.front() == '#') return header_line(line);
    if (starts_with(line, "\"StartTimestamp\"")) return true;
    return interval_line(line);
  }

  bool fail(std::string message) {
    if (result_.error.empty()) {
      result_.error_line = line_number_;
      result_.error = "line " + std::to_string(line_number_) + ": " + std::move(message);
    }
    return false;
  }

  bool failed() const noexcept { return !result_.error.empty(); }
  // An over-long line is refused before it is parsed; it still counts for the error's number.
  bool fail_long_line() {
    ++line_number_;
    return fail("line longer than " + std::to_string(limits_.max_line_bytes) + " bytes");
  }

  log_read_result finish() {
    if (!failed()) result_.log = std::move(log_);
    return std::move(result_);
  }

 private:
  bool time_line(std::string_view rest, double& out, bool& seen, const char* what) {
    const auto end = rest.find_first_of(" ]");
    if (!parse_double(rest.substr(0, end), out)) {
      return fail(std::string("bad number in ") + what + " line");
    }
    seen = true;
    return true;
  }

  bool header_line(std::string_view line) {
    constexpr std::string_view start_prefix = "#[StartTime: ";
    constexpr std::string_view base_prefix = "#[BaseTime: ";
    constexpr std::string_view version_prefix = "#[Histogram log format version ";
    if (starts_with(line, start_prefix)) {
      return time_line(line.substr(start_prefix.size()), log_.start_time_unix_seconds,
                       log_.has_start_time_line, "StartTime");
    }
    if (starts_with(line, base_prefix)) {
      return time_line(line.substr(base_prefix.size()), log_.base_time_unix_seconds,
                       log_.has_base_time_line, "BaseTime");
    }
    if (starts_with(line, version_prefix)) {
      std::string_view version = line.substr(version_prefix.size());
      version = version.substr(0, version.find(']'));
      log_.format_version.assign(version.substr(0, 32));
      return true;
    }
    if (log_.comments.size() < max_kept_comments) {
      log_.comments.emplace_back(line.substr(1, max_kept_comment_bytes));
    }
    return true;
  }

  // Fields are separated by commas (Java also accepts spaces); no field may be empty.
  bool split_fields(std::string_view line, std::string_view (&fields)[5], std::size_t& count) {
    count = 0;
    std::size_t pos = 0;
    while (true) {
      const auto end = line.find_first_of(", ", pos);
      const std::string_view field =
          line.substr(pos, end == std::string_view::npos ? end : end - pos);
      if (field.empty()) return fail("empty field " + std::to_string(count + 1));
      if (count == 5) return fail("too many fields");
      fields[count++] = field;
      if (end == std::string_view::npos) return true;
      pos = end + 1;
    }
  }

  bool interval_line(std::string_view line) {
    std::string_view fields[5];
    std::size_t count = 0;
    if (!split_fields(line, fields, count)) return false;
    std::size_t first = 0;
    std::string_view tag;
    if (starts_with(fields[0], "Tag=")) {
      tag = fields[0].substr(4);
      if (tag.size() > max_tag_bytes) return fail("tag too long");
      first = 1;
    }
    if (count - first != 4) {
      return fail("expected [Tag=T,]start,length,max,histogram but found " + std::to_string(count) +
                  " fields");
    }
    double start = 0, length = 0, max_column = 0;
    if (!parse_double(fields[first], start)) return fail("start timestamp is not a number");
    if (!parse_double(fields[first + 1], length) || length < 0) {
      return fail("interval length is not a non-negative number");
    }
    if (!parse_double(fields[first + 2], max_column)) return fail("interval max is not a number");
    if (intervals_read_ >= limits_.max_intervals) return fail("too many intervals");
    auto decoded = decode_compressed_base64(fields[first + 3]);
    if (!decoded || !decoded.value) {
      return fail(std::string("bad histogram: ") + std::string(to_string(decoded.error)));
    }
    const auto slots = static_cast<std::size_t>(decoded.value->counts_length());
    if (!on_interval_ && slots > limits_.max_total_slots - slots_used_) {
      return fail("histograms too large in total");
    }
    slots_used_ += slots;
    ++intervals_read_;
    apply_time_rules(start);
    log_interval interval{std::string(tag), start + log_.base_time_unix_seconds,
                          length,           max_column,
                          line_number_,     std::move(*decoded.value)};
    if (on_interval_) {
      (*on_interval_)(log_, std::move(interval));
    } else {
      log_.intervals.push_back(std::move(interval));
    }
    return true;
  }

  void apply_time_rules(double start_field) {
    if (!log_.has_start_time_line && !start_observed_) {
      log_.start_time_unix_seconds = start_field;
    }
    start_observed_ = true;
    if (!log_.has_base_time_line && !base_observed_) {
      const bool relative = start_field < log_.start_time_unix_seconds - seconds_per_year;
      log_.base_time_unix_seconds = relative ? log_.start_time_unix_seconds : 0.0;
    }
    base_observed_ = true;
  }

  log_read_limits limits_;
  const interval_handler* on_interval_;
  std::size_t intervals_read_ = 0;
  interval_log log_;
  log_read_result result_;
  int line_number_ = 0;
  std::size_t slots_used_ = 0;
  bool start_observed_ = false;
  bool base_observed_ = false;
};

}  // namespace

log_read_result read_interval_log(std::string_view text, const log_read_limits& limits) {
  log_parser parser(limits);
  while (!text.empty()) {
    const auto newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    if (line.size() > limits.max_line_bytes) {
      parser.fail_long_line();
      break;
    }
    if (!parser.feed(line)) break;
    if (newline == std::string_view::npos) break;
    text.remove_prefix(newline + 1);
  }
  return parser.finish();
}

namespace {

log_read_result parse_stream(std::istream& in, const log_read_limits& limits, log_parser& parser) {
  std::string line;
  char block[1 << 16];
  bool ok = true;
  while (ok && in) {
    in.read(block, sizeof block);
    const std::string_view chunk(block, static_cast<std::size_t>(in.gcount()));
    std::size_t pos = 0;
    while (ok && pos < chunk.size()) {
      const auto newline = chunk.find('\n', pos);
      line.append(chunk.substr(pos, newline == std::string_view::npos ? newline : newline - pos));
      if (line.size() > limits.max_line_bytes) {
        ok = parser.fail_long_line();
        break;
      }
      if (newline == std::string_view::npos) break;
      ok = parser.feed(line);
      line.clear();
      pos = newline + 1;
    }
  }
  if (ok && in.bad()) ok = parser.fail("read error");
  if (ok && !line.empty()) parser.feed(line);
  return parser.finish();
}

}  // namespace

log_read_result read_interval_log(std::istream& in, const log_read_limits& limits) {
  log_parser parser(limits);
  return parse_stream(in, limits, parser);
}

log_read_result read_interval_log_file(const std::string& path, const log_read_limits& limits) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    log_read_result result;
    result.error = "cannot open " + path + ": " + std::strerror(errno);
    return result;
  }
  return read_interval_log(in, limits);
}

log_read_result read_interval_log_file(const std::string& path, const interval_handler& on_interval,
                                       const log_read_limits& limits) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    log_read_result result;
    result.error = "cannot open " + path + ": " + std::strerror(errno);
    return result;
  }
  log_parser parser(limits, &on_interval);
  return parse_stream(in, limits, parser);
}

}  // namespace punctual::hdr
