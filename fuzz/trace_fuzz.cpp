// The --schedule-in parser on arbitrary text. The text and stream parsers must agree, errors
// must be one printable line within the input's lines, every accepted trace must keep the
// grammar's promises, and it must survive --schedule-out's format unchanged.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>

#include "schedule/stream.hpp"
#include "schedule/trace.hpp"

namespace {

namespace schedule = punctual::schedule;

void check(bool ok) {
  if (!ok) std::abort();
}

void check_error(const schedule::trace_error& e, std::string_view text) {
  const auto lines = static_cast<std::uint64_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  check(e.line <= lines);
  check(!e.message.empty());
  for (const char c : e.message) {
    check(static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f);
  }
}

bool same(const schedule::trace& a, const schedule::trace& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a.offset(i) != b.offset(i) || a.name(i) != b.name(i)) return false;
  }
  return true;
}

void check_accepted(const schedule::trace& t) {
  check(t.size() > 0 && t.size() <= schedule::max_trace_entries);
  for (std::size_t i = 0; i < t.size(); ++i) {
    check(t.offset(i).count() >= 0 && t.offset(i).count() < schedule::max_window_ns);
    if (i > 0) check(t.offset(i) >= t.offset(i - 1));
    const std::string_view name = t.name(i);
    check(name.size() <= schedule::max_request_name);
    check(name.find_first_not_of(
              "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") ==
          std::string_view::npos);
  }
  const auto end = t.natural_end();
  check(end > t.offset(t.size() - 1) && t.count_before(end) == t.size());
}

// --schedule-out of a replay reads back as the same trace.
void check_round_trip(const std::shared_ptr<const schedule::trace>& t) {
  schedule::plan p;
  p.arrival = schedule::arrival_kind::trace;
  p.replay = t;
  p.duration = t->natural_end();
  p.workers = 2;
  if (schedule::validate(p)) return;  // a time line past 2^62 ns: nothing to replay
  std::ostringstream out;
  schedule::write_schedule(out, p);
  schedule::trace_error error;
  const auto again = schedule::parse_trace(out.str(), "again", error);
  check(again != nullptr && same(*t, *again));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text{reinterpret_cast<const char*>(data), size};
  schedule::trace_error from_text_error;
  const auto from_text = schedule::parse_trace(text, "fuzz", from_text_error);
  std::istringstream in{std::string(text)};
  schedule::trace_error from_stream_error;
  const auto from_stream = schedule::parse_trace(in, "fuzz", from_stream_error);
  check((from_text == nullptr) == (from_stream == nullptr));
  if (!from_text) {
    check_error(from_text_error, text);
    check(from_text_error.line == from_stream_error.line);
    check(from_text_error.message == from_stream_error.message);
    return 0;
  }
  check(same(*from_text, *from_stream));
  check_accepted(*from_text);
  check_round_trip(from_text);
  return 0;
}
