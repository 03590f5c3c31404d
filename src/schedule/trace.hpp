// An arrival trace replayed as the schedule (--schedule-in): intended offsets read from a file
// instead of computed from a rate. The grammar (docs/design.md, "Workload models"):
//
//   file    = { line "\n" } [ line ]
//   line    = blank | comment | entry            (columns are separated by spaces or tabs)
//   blank   = only spaces, tabs and CRs          (so CRLF files read as LF files)
//   comment = optional spaces or tabs, then "#", then anything
//   entry   = OFFSET_NS [ NAME ]                              (a trace)
//           | INDEX OFFSET_NS WORKER PHASE [ NAME ]           (what --schedule-out writes)
//   OFFSET_NS, INDEX, WORKER = decimal digits, no sign; OFFSET_NS < 2^62 (schedule::max_window_ns)
//   PHASE   = "warmup" | "measured"
//   NAME    = 1 to 64 of [A-Za-z0-9_-]
//
// The first entry fixes the layout (2 or fewer columns: a trace; 4 or more: --schedule-out's);
// every later entry must have the same layout. Offsets are from the run start (the start of
// warm-up) and must not decrease. Only the offsets and names are kept: a --schedule-out file's
// index, worker and phase are what the replaying run recomputes from its own options.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace punctual::schedule {

// Bounds that keep a trace's memory sane: 8 bytes per entry in memory, at most 512 MiB.
inline constexpr std::uint64_t max_trace_bytes = std::uint64_t{1} << 30;
inline constexpr std::size_t max_trace_entries = std::size_t{1} << 26;
inline constexpr std::size_t max_request_name = 64;

// The parsed trace: immutable once built, shared by every copy of a plan and every stream.
class trace {
 public:
  // The file name as given, for reports.
  const std::string& source() const noexcept { return source_; }
  std::size_t size() const noexcept { return offsets_.size(); }
  std::chrono::nanoseconds offset(std::size_t i) const noexcept { return offsets_[i]; }
  // Entry i's request name; empty when its line named none.
  std::string_view name(std::size_t i) const noexcept;
  bool has_names() const noexcept { return !name_ids_.empty(); }
  // Entry i's name as an index into names(); 0 (the empty name) when its line named none.
  std::uint32_t name_id(std::size_t i) const noexcept {
    return name_ids_.empty() ? 0 : name_ids_[i];
  }
  // The distinct names, "" first.
  const std::vector<std::string>& names() const noexcept { return names_; }

  // How many entries have offset < end.
  std::uint64_t count_before(std::chrono::nanoseconds end) const noexcept;
  // The end of the time line when no -d is given: the next whole second after the last offset,
  // so the last entry is inside [0, end).
  std::chrono::nanoseconds natural_end() const noexcept;

 private:
  friend class trace_reader;
  std::string source_;
  std::vector<std::chrono::nanoseconds> offsets_;
  // Names are few (a request mix) and repeat on every line: each entry keeps an index into
  // names_, whose entry 0 is "". Empty when no line has a name.
  std::vector<std::uint32_t> name_ids_;
  std::vector<std::string> names_;
};

struct trace_error {
  std::uint64_t line = 0;  // 1-based; 0 when the problem is the input as a whole
  std::string message;     // one line, e.g. "offsets must not decrease (1200 after 1500)"
};

// Parse a whole trace; on failure returns null and fills `error`. `source` names the input in
// the trace (and so in reports).
std::shared_ptr<const trace> parse_trace(std::string_view text, std::string source,
                                         trace_error& error);
std::shared_ptr<const trace> parse_trace(std::istream& in, std::string source, trace_error& error);
// Reads the file at `path` (refusing one over max_trace_bytes before reading it).
std::shared_ptr<const trace> load_trace(const std::string& path, trace_error& error);

// What a replay over the time line [0, end) runs.
struct replay_summary {
  std::uint64_t requests = 0;  // entries with offset < end, warm-up included
  std::uint64_t cut = 0;       // entries at or after end, left out of the run
  double mean_rate_per_s = 0;  // requests per second of [0, end)
};
replay_summary summarize(const trace& t, std::chrono::nanoseconds end) noexcept;

// "trace replay of trace.txt (12000 requests over 60s, mean 200 req/s)", and when entries are
// cut: "...; 3000 entries at or after 60s left out)".
std::string describe_replay(const trace& t, std::chrono::nanoseconds end);

}  // namespace punctual::schedule
