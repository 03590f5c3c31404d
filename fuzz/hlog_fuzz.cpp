// Feeds arbitrary bytes to the .hlog reader. Whatever it accepts must survive a merge and a
// write/read round trip with the same counts.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "punctual/histogram/interval_log.hpp"
#include "punctual/histogram/log_merge.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace punctual::hdr;
  log_read_limits limits;
  limits.max_line_bytes = 1 << 20;
  limits.max_intervals = 64;
  limits.max_total_slots = 1 << 22;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto read = read_interval_log(text, limits);
  if (!read) {
    if (read.error.empty()) __builtin_trap();
    return 0;
  }
  const interval_log& log = *read.log;
  const std::vector<interval_log> logs{log};
  (void)merge_logs(logs);

  std::ostringstream out;
  interval_log_writer writer(out, log.start_time_unix_seconds, 1000.0);
  writer.write_header("[fuzz]");
  std::size_t written = 0;
  for (const log_interval& iv : log.intervals) {
    try {
      writer.write_interval(iv.tag, iv.start_unix_seconds - log.start_time_unix_seconds,
                            iv.length_seconds, iv.value);
      ++written;
    } catch (const std::invalid_argument&) {
      // A tag the reader tolerates but the writer refuses (e.g. holding a CR).
      return 0;
    }
  }
  const auto again = read_interval_log(out.str(), limits);
  if (!again || again.log->intervals.size() != written) __builtin_trap();
  for (std::size_t i = 0; i < written; ++i) {
    if (again.log->intervals[i].value.total_count() != log.intervals[i].value.total_count()) {
      __builtin_trap();
    }
  }
  return 0;
}
