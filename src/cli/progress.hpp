// The live progress of a run on stderr. On a terminal: one line, redrawn at each interval (about
// once a second), cleared before the report. Elsewhere: nothing, or with --progress a plain line
// every 10 s. It reads the intervals the collector hands over (engine::interval_sink), on the
// collector's thread, so the workers' hot path gains nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "record/view_set.hpp"

namespace punctual::cli {

enum class progress_mode { off, terminal, plain };

// --quiet wins; a terminal redraws; --progress prints plain lines elsewhere.
progress_mode choose_progress(bool quiet, bool progress_flag, bool stderr_is_terminal) noexcept;

class progress_line {
 public:
  // `window`: the measured window asked for; `interval`: the length of one handed-over interval.
  progress_line(progress_mode mode, std::FILE* out, std::chrono::nanoseconds window,
                std::chrono::nanoseconds interval);
  ~progress_line() { finish(); }
  progress_line(const progress_line&) = delete;
  progress_line& operator=(const progress_line&) = delete;

  void on_interval(std::int64_t index, const record::view_set& v);
  // Leaves the terminal at the start of an empty line (idempotent).
  void finish();

  // The text of one update, without control codes (exposed for its test).
  std::string text(std::int64_t index, const record::view_set& v) const;

 private:
  progress_mode mode_;
  std::FILE* out_;
  std::chrono::nanoseconds window_;
  std::chrono::nanoseconds interval_;
  std::uint64_t sent_ = 0;
  std::uint64_t planned_ = 0;
  std::uint64_t errors_ = 0;
  std::uint64_t timeouts_ = 0;
  std::chrono::nanoseconds last_plain_{-1};
  bool drawn_ = false;
};

// Clears a drawn line from a signal handler (async-signal-safe); no-op when none is drawn.
void clear_progress_from_signal() noexcept;

}  // namespace punctual::cli
