#include "cli/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>

#include "analysis/attribution.hpp"
#include "analysis/text.hpp"

namespace punctual::cli {
namespace {

using std::chrono::nanoseconds;
constexpr nanoseconds plain_every{std::chrono::seconds(10)};
// Erase the line: carriage return, then clear to its end (ANSI EL).
constexpr std::string_view erase_line = "\r\x1b[K";

std::atomic<bool> line_drawn{false};

std::string seconds_text(nanoseconds d) {
  return fmt::format("{:.0f}s", static_cast<double>(d.count()) / 1e9);
}

}  // namespace

progress_mode choose_progress(bool quiet, bool progress_flag, bool stderr_is_terminal) noexcept {
  if (quiet) return progress_mode::off;
  if (stderr_is_terminal) return progress_mode::terminal;
  return progress_flag ? progress_mode::plain : progress_mode::off;
}

progress_line::progress_line(progress_mode mode, std::FILE* out, nanoseconds window,
                             nanoseconds interval)
    : mode_(mode), out_(out), window_(window), interval_(interval) {}

std::string progress_line::text(std::int64_t index, const record::view_set& v) const {
  using analysis::duration_text;
  const auto& rt = v[record::view::response_time];
  const nanoseconds elapsed = interval_ * (index + 1);
  const double rate =
      static_cast<double>(v.counts().sent) * 1e9 / static_cast<double>(interval_.count());
  std::string line =
      fmt::format("{}/{}  sent {}/{}  {:.0f}/s  p50 {}  p99 {}  errors {}  timeouts {}  queue {}",
                  seconds_text(elapsed), seconds_text(window_), sent_, planned_, rate,
                  rt.total_count() ? duration_text(rt.value_at_percentile(50)) : "-",
                  rt.total_count() ? duration_text(rt.value_at_percentile(99)) : "-", errors_,
                  timeouts_, v.counts().queue_depth_max);
  // The generator is falling behind its schedule: the figures above include its lateness.
  const auto lag = static_cast<double>(v[record::view::send_lag].value_at_percentile(99));
  if (lag > analysis::send_lag_allowance(static_cast<double>(rt.value_at_percentile(99)))) {
    line += "  ! send lag " + duration_text(lag);
  }
  return line;
}

void progress_line::on_interval(std::int64_t index, const record::view_set& v) {
  const auto& n = v.counts();
  sent_ += n.sent;
  planned_ += n.planned;
  errors_ += n.errors;
  timeouts_ += n.timeouts;
  if (mode_ == progress_mode::off) return;
  const nanoseconds elapsed = interval_ * (index + 1);
  if (mode_ == progress_mode::plain) {
    if (last_plain_.count() >= 0 && elapsed - last_plain_ < plain_every) return;
    last_plain_ = elapsed;
    fmt::print(out_, "{}\n", text(index, v));
  } else {
    fmt::print(out_, "{}{}", erase_line, text(index, v));
    drawn_ = true;
    line_drawn.store(true);
  }
  std::fflush(out_);
}

void progress_line::finish() {
  if (!drawn_) return;
  fmt::print(out_, "{}", erase_line);
  std::fflush(out_);
  drawn_ = false;
  line_drawn.store(false);
}

void clear_progress_from_signal() noexcept {
  if (!line_drawn.load()) return;
  const ssize_t written = ::write(STDERR_FILENO, erase_line.data(), erase_line.size());
  static_cast<void>(written);
}

}  // namespace punctual::cli
