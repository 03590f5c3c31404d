#include "schedule/trace.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <istream>
#include <unordered_map>

#include "schedule/plan.hpp"
#include "schedule/stages.hpp"

namespace punctual::schedule {
namespace {

constexpr std::size_t max_columns = 5;
// A request mix names a handful of requests; this only stops a hostile file from making the
// name table as big as the trace.
constexpr std::size_t max_request_names = std::size_t{1} << 16;

using columns = std::array<std::string_view, max_columns + 1>;

bool is_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\r';
}

// Splits on spaces and tabs. Stops after max_columns + 1, which is enough to say "too many".
std::size_t split(std::string_view line, columns& out) noexcept {
  std::size_t n = 0;
  std::size_t i = 0;
  while (n < out.size()) {
    while (i < line.size() && is_space(line[i])) ++i;
    if (i == line.size()) break;
    const std::size_t start = i;
    while (i < line.size() && !is_space(line[i])) ++i;
    out[n++] = line.substr(start, i - start);
  }
  return n;
}

// A value as an error message quotes it: printable, short, so the message stays one line.
std::string shown(std::string_view text) {
  constexpr std::size_t limit = 40;
  std::string out;
  for (const char c : text.substr(0, limit)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u >= 0x20 && u < 0x7f) ? c : '?';
  }
  if (text.size() > limit) out += "...";
  return out;
}

std::string quoted(std::string_view text) {
  return "'" + shown(text) + "'";
}

bool all_digits(std::string_view text) noexcept {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool name_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

std::string column_count(std::size_t n) {
  if (n > max_columns) return "more than " + std::to_string(max_columns) + " columns";
  return std::to_string(n) + (n == 1 ? " column" : " columns");
}

std::string too_big() {
  return "over the bound of " + std::to_string(max_trace_bytes >> 20) + " MiB";
}

}  // namespace

// Builds a trace one line at a time, so a file is never held in memory as text.
class trace_reader {
 public:
  explicit trace_reader(std::string source) : t_(std::make_shared<trace>()) {
    t_->source_ = std::move(source);
  }
  // False, with `error` set, at the first bad line.
  bool feed(std::string_view line, trace_error& error);
  std::shared_ptr<const trace> finish(trace_error& error);

 private:
  enum class layout { unknown, trace, schedule_out };
  bool fail(trace_error& error, std::string message) {
    error = {line_, std::move(message)};
    return false;
  }
  bool check_layout(std::size_t n, trace_error& error);
  bool check_schedule_out(const columns& c, trace_error& error);
  bool read_offset(std::string_view text, std::chrono::nanoseconds& out, trace_error& error);
  bool add_name(std::string_view name, trace_error& error);

  std::shared_ptr<trace> t_;
  std::uint64_t line_ = 0;
  layout layout_ = layout::unknown;
  std::uint64_t layout_line_ = 0;
  std::unordered_map<std::string, std::uint32_t> name_ids_;
};

bool trace_reader::feed(std::string_view line, trace_error& error) {
  ++line_;
  columns c;
  const std::size_t n = split(line, c);
  if (n == 0 || c[0].front() == '#') return true;
  if (!check_layout(n, error)) return false;
  if (t_->offsets_.size() == max_trace_entries) {
    return fail(error, "more than " + std::to_string(max_trace_entries) +
                           " entries (the bound of a trace)");
  }
  const bool schedule_out = layout_ == layout::schedule_out;
  if (schedule_out && !check_schedule_out(c, error)) return false;
  std::chrono::nanoseconds offset{};
  if (!read_offset(c[schedule_out ? 1 : 0], offset, error)) return false;
  if (!t_->offsets_.empty() && offset < t_->offsets_.back()) {
    return fail(error, "offsets must not decrease (" + std::to_string(offset.count()) + " after " +
                           std::to_string(t_->offsets_.back().count()) + ")");
  }
  const std::size_t name_column = schedule_out ? 4 : 1;
  if (n > name_column) {
    if (!add_name(c[name_column], error)) return false;
  } else if (t_->has_names()) {
    t_->name_ids_.push_back(0);
  }
  t_->offsets_.push_back(offset);
  return true;
}

bool trace_reader::check_layout(std::size_t n, trace_error& error) {
  const layout seen = n <= 2             ? layout::trace
                      : n == 4 || n == 5 ? layout::schedule_out
                                         : layout::unknown;
  if (layout_ == layout::unknown) {
    if (seen == layout::unknown) {
      return fail(error, column_count(n) +
                             " (expected OFFSET_NS [NAME], or INDEX OFFSET_NS WORKER PHASE [NAME] "
                             "as --schedule-out writes)");
    }
    layout_ = seen;
    layout_line_ = line_;
    return true;
  }
  if (seen == layout_) return true;
  return fail(error,
              column_count(n) + ", but line " + std::to_string(layout_line_) +
                  (layout_ == layout::trace
                       ? " began a trace of OFFSET_NS [NAME]"
                       : " began a --schedule-out file of INDEX OFFSET_NS WORKER PHASE [NAME]"));
}

bool trace_reader::check_schedule_out(const columns& c, trace_error& error) {
  std::uint64_t number = 0;
  for (const auto& [text, what] : {std::pair{c[0], "index"}, std::pair{c[2], "worker"}}) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (!all_digits(text) || ec != std::errc{} || end != text.data() + text.size()) {
      return fail(error, std::string(what) + " " + quoted(text) + " is not a whole number");
    }
  }
  if (c[3] != "warmup" && c[3] != "measured") {
    return fail(error, "phase " + quoted(c[3]) + " is neither warmup nor measured");
  }
  return true;
}

bool trace_reader::read_offset(std::string_view text, std::chrono::nanoseconds& out,
                               trace_error& error) {
  if (text.front() == '-' && all_digits(text.substr(1))) {
    return fail(error, "offsets must not be negative (" + shown(text) + ")");
  }
  if (!all_digits(text)) {
    return fail(error, "offset " + quoted(text) + " is not a whole number of nanoseconds");
  }
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || value >= static_cast<std::uint64_t>(max_window_ns)) {
    return fail(error, "offset " + shown(text) + " is beyond the bound of 2^62 ns (~146 years)");
  }
  out = std::chrono::nanoseconds{static_cast<std::int64_t>(value)};
  return true;
}

bool trace_reader::add_name(std::string_view name, trace_error& error) {
  if (name.size() > max_request_name) {
    return fail(error, "request name " + quoted(name) + " is longer than " +
                           std::to_string(max_request_name) + " characters");
  }
  if (!std::all_of(name.begin(), name.end(), name_char)) {
    return fail(error,
                "request name " + quoted(name) + " may hold only letters, digits, '_' and '-'");
  }
  auto& names = t_->names_;
  if (names.empty()) names.emplace_back();       // id 0: no name
  t_->name_ids_.resize(t_->offsets_.size(), 0);  // the lines before named nothing
  const auto [it, added] =
      name_ids_.try_emplace(std::string(name), static_cast<std::uint32_t>(names.size()));
  if (added) {
    if (names.size() > max_request_names) {
      return fail(error,
                  "more than " + std::to_string(max_request_names) + " distinct request names");
    }
    names.emplace_back(name);
  }
  t_->name_ids_.push_back(it->second);
  return true;
}

std::shared_ptr<const trace> trace_reader::finish(trace_error& error) {
  if (t_->offsets_.empty()) {
    error = {0, "no offsets in it (a trace holds one offset in ns per line)"};
    return nullptr;
  }
  return std::move(t_);
}

std::string_view trace::name(std::size_t i) const noexcept {
  return name_ids_.empty() ? std::string_view{} : std::string_view{names_[name_ids_[i]]};
}

std::uint64_t trace::count_before(std::chrono::nanoseconds end) const noexcept {
  return static_cast<std::uint64_t>(std::lower_bound(offsets_.begin(), offsets_.end(), end) -
                                    offsets_.begin());
}

std::chrono::nanoseconds trace::natural_end() const noexcept {
  if (offsets_.empty()) return std::chrono::seconds{1};
  return std::chrono::floor<std::chrono::seconds>(offsets_.back()) + std::chrono::seconds{1};
}

std::shared_ptr<const trace> parse_trace(std::string_view text, std::string source,
                                         trace_error& error) {
  if (text.size() > max_trace_bytes) {
    error = {0, "it is " + too_big()};
    return nullptr;
  }
  trace_reader reader(std::move(source));
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    if (!reader.feed(text.substr(0, end), error)) return nullptr;
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return reader.finish(error);
}

std::shared_ptr<const trace> parse_trace(std::istream& in, std::string source, trace_error& error) {
  trace_reader reader(std::move(source));
  std::string line;
  std::uint64_t bytes = 0;
  while (std::getline(in, line)) {
    bytes += line.size() + (in.eof() ? 0 : 1);
    if (bytes > max_trace_bytes) {
      error = {0, "it is " + too_big()};
      return nullptr;
    }
    if (!reader.feed(line, error)) return nullptr;
  }
  if (in.bad()) {
    error = {0, "cannot read it (read error)"};
    return nullptr;
  }
  return reader.finish(error);
}

std::shared_ptr<const trace> load_trace(const std::string& path, trace_error& error) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || fs::is_directory(status)) {
    error = {0, "cannot read it (" + (ec ? ec.message() : std::string("a directory")) + ")"};
    return nullptr;
  }
  // A regular file is refused by its size before reading; a pipe is bounded as it is read.
  if (fs::is_regular_file(status)) {
    const auto size = fs::file_size(path, ec);
    if (!ec && size > max_trace_bytes) {
      error = {0, "it is " + too_big() + " (" + std::to_string(size) + " bytes)"};
      return nullptr;
    }
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = {0, std::string("cannot read it (") + std::strerror(errno) + ")"};
    return nullptr;
  }
  return parse_trace(in, path, error);
}

replay_summary summarize(const trace& t, std::chrono::nanoseconds end) noexcept {
  replay_summary s;
  s.requests = t.count_before(end);
  s.cut = t.size() - s.requests;
  if (end.count() > 0) {
    s.mean_rate_per_s = static_cast<double>(s.requests) * 1e9 / static_cast<double>(end.count());
  }
  return s;
}

std::string describe_replay(const trace& t, std::chrono::nanoseconds end) {
  const replay_summary s = summarize(t, end);
  const std::string span = format_duration(end);
  // Three decimals are plenty for a mean, and keep "200" from printing as "199.99999999999997".
  const double mean = std::round(s.mean_rate_per_s * 1000) / 1000;
  std::string out = "trace replay of " + t.source() + " (" + std::to_string(s.requests) +
                    (s.requests == 1 ? " request" : " requests") + " over " + span + ", mean " +
                    format_rate(mean) + " req/s";
  if (s.cut > 0) {
    out += "; " + std::to_string(s.cut) + (s.cut == 1 ? " entry" : " entries") + " at or after " +
           span + " left out";
  }
  return out + ")";
}

}  // namespace punctual::schedule
