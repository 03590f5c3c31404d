// One histogram per latency view, all with the same layout (ns, 1 ns .. 1 h, 3 digits).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "punctual/histogram/histogram.hpp"
#include "record/outcome.hpp"

namespace punctual::record {

hdr::histogram_params latency_params() noexcept;

// The views each request name keeps (a name's other views would cost memory no report uses).
enum class named_view : std::uint8_t { response_time, service_time };
inline constexpr std::size_t named_view_count = 2;
inline constexpr std::array<std::string_view, named_view_count> named_view_names{"response_time",
                                                                                 "service_time"};

// Counts of what happened within one interval, by the time it happened (a request's planning,
// send or outcome): the timeline's and the live progress's columns beside the latency views.
struct interval_counts {
  std::uint64_t planned = 0;    // requests planned (at their dispatch: about their intended time)
  std::uint64_t sent = 0;       // first attempts sent
  std::uint64_t attempts = 0;   // attempts sent, retries included
  std::uint64_t completed = 0;  // whole responses (ok and http_error outcomes)
  std::uint64_t ok = 0;
  std::uint64_t errors = 0;  // http_error and socket_error outcomes
  std::uint64_t timeouts = 0;
  std::uint64_t dropped = 0;
  std::uint64_t queue_depth_max = 0;  // the most requests that waited for a connection at once

  void add(const interval_counts& other) noexcept;
  friend bool operator==(const interval_counts&, const interval_counts&) = default;
};

class view_set {
 public:
  // `names`: how many request names keep their own named views (0: none).
  explicit view_set(std::size_t names = 0);
  hdr::histogram& operator[](view v) noexcept { return views_[index(v)]; }
  const hdr::histogram& operator[](view v) const noexcept { return views_[index(v)]; }
  hdr::histogram& named(std::size_t name, named_view v) noexcept {
    return named_[name * named_view_count + static_cast<std::size_t>(v)];
  }
  const hdr::histogram& named(std::size_t name, named_view v) const noexcept {
    return named_[name * named_view_count + static_cast<std::size_t>(v)];
  }
  std::size_t name_count() const noexcept { return named_.size() / named_view_count; }
  interval_counts& counts() noexcept { return counts_; }
  const interval_counts& counts() const noexcept { return counts_; }
  void add(const view_set& other) noexcept;
  void reset() noexcept;
  // reset() that gives the histograms' pages back (hdr::histogram::reset_releasing): for a set
  // reused interval after interval, whose memory must follow one interval's values.
  void reset_releasing() noexcept;
  bool empty() const noexcept;
  std::size_t histogram_count() const noexcept { return views_.size() + named_.size(); }
  std::size_t resident_bytes() const noexcept;

 private:
  std::array<hdr::histogram, view_count> views_;
  std::vector<hdr::histogram> named_;  // name_count() x named_view_count, by name
  interval_counts counts_;
};

// An interval in the few figures the timeline and the progress line show.
struct latency_summary {
  std::int64_t count = 0;
  std::int64_t p50 = 0;
  std::int64_t p99 = 0;
  std::int64_t max = 0;
};
latency_summary summarize(const hdr::histogram& h) noexcept;

struct interval_row {
  std::int64_t index = 0;
  interval_counts counts;
  latency_summary response_time;
  latency_summary service_time;
  std::int64_t send_lag_p99 = 0;
  std::int64_t queue_wait_p99 = 0;
};
interval_row summarize_interval(std::int64_t index, const view_set& v) noexcept;

}  // namespace punctual::record
