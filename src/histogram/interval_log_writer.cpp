#include <algorithm>
#include <cmath>
#include <ctime>
#include <stdexcept>

#include "punctual/histogram/codec.hpp"
#include "punctual/histogram/interval_log.hpp"
#include "punctual/histogram/percentile_text.hpp"

namespace punctual::hdr {

namespace {

// HdrHistogram_c reads header lines through a 128-byte buffer (spec 4.5).
constexpr std::size_t max_comment_line = 126;
constexpr std::string_view legend =
    "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n";

void append_two_digits(std::string& out, int value) {
  out += static_cast<char>('0' + value / 10 % 10);
  out += static_cast<char>('0' + value % 10);
}

// Java's outputComment writes "#" + text; a text too long for C readers is cut into pieces,
// each re-wrapped in "[...]" when the text was bracketed.
void append_comment_lines(std::string& out, std::string_view text) {
  const bool bracketed = text.size() >= 2 && text.front() == '[' && text.back() == ']';
  if (text.size() + 1 <= max_comment_line || text.empty()) {
    out += '#';
    out += text;
    out += '\n';
    return;
  }
  if (bracketed) text = text.substr(1, text.size() - 2);
  const std::size_t room = max_comment_line - (bracketed ? 3 : 1);
  while (!text.empty()) {
    out += bracketed ? "#[" : "#";
    out += text.substr(0, room);
    out += bracketed ? "]\n" : "\n";
    text.remove_prefix(std::min(room, text.size()));
  }
}

}  // namespace

std::string java_utc_date_text(double unix_seconds) {
  static constexpr const char* days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                           "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  // Dates beyond year 9999 (or before 1970) are not dates a log can mean; converting such a
  // double to time_t would be undefined, so they print as the epoch.
  constexpr double last_second_of_9999 = 253402300799.0;
  const bool plausible =
      std::isfinite(unix_seconds) && unix_seconds >= 0 && unix_seconds <= last_second_of_9999;
  const auto seconds = static_cast<std::time_t>(plausible ? std::floor(unix_seconds) : 0.0);
  std::tm tm{};
  if (gmtime_r(&seconds, &tm) == nullptr) return "Thu Jan 01 00:00:00 UTC 1970";
  std::string out;
  out += days[tm.tm_wday % 7];
  out += ' ';
  out += months[tm.tm_mon % 12];
  out += ' ';
  append_two_digits(out, tm.tm_mday);
  out += ' ';
  append_two_digits(out, tm.tm_hour);
  out += ':';
  append_two_digits(out, tm.tm_min);
  out += ':';
  append_two_digits(out, tm.tm_sec);
  out += " UTC ";
  out += std::to_string(tm.tm_year + 1900);
  return out;
}

interval_log_writer::interval_log_writer(std::ostream& out, double log_start_unix_seconds,
                                         double max_value_unit_ratio, int zlib_level)
    : out_(out),
      start_(log_start_unix_seconds),
      ratio_(max_value_unit_ratio > 0 ? max_value_unit_ratio : 1.0),
      zlib_level_(zlib_level) {}

void interval_log_writer::write_header(std::string_view comment) {
  line_.clear();
  while (!comment.empty()) {
    const auto newline = comment.find('\n');
    std::string_view text = comment.substr(0, newline);
    comment = newline == std::string_view::npos ? std::string_view{} : comment.substr(newline + 1);
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    append_comment_lines(line_, text);
  }
  line_ += "#[Histogram log format version 1.3]\n#[StartTime: ";
  append_java_fixed(line_, start_, 3);
  line_ += " (seconds since epoch), ";
  line_ += java_utc_date_text(start_);
  line_ += "]\n#[BaseTime: ";
  append_java_fixed(line_, start_, 3);
  line_ += " (seconds since epoch)]\n";
  line_ += legend;
  out_.write(line_.data(), static_cast<std::streamsize>(line_.size()));
}

void interval_log_writer::write_interval(std::string_view tag, double start_seconds_relative,
                                         double length_seconds, const histogram& h) {
  if (tag.find_first_of(", \r\n") != std::string_view::npos) {
    throw std::invalid_argument("interval log tag must not contain ',', space, CR or LF");
  }
  line_.clear();
  if (!tag.empty()) {
    line_ += "Tag=";
    line_ += tag;
    line_ += ',';
  }
  append_java_fixed(line_, start_seconds_relative, 3);
  line_ += ',';
  append_java_fixed(line_, length_seconds, 3);
  line_ += ',';
  append_java_fixed(line_, static_cast<double>(h.max()) / ratio_, 3);
  line_ += ',';
  line_ += encode_compressed_base64(h, zlib_level_);
  line_ += '\n';
  out_.write(line_.data(), static_cast<std::streamsize>(line_.size()));
}

}  // namespace punctual::hdr
