// One histogram per latency view, all with the same layout (ns, 1 ns .. 1 h, 3 digits).
#pragma once

#include <array>

#include "punctual/histogram/histogram.hpp"
#include "record/outcome.hpp"

namespace punctual::record {

hdr::histogram_params latency_params() noexcept;

class view_set {
 public:
  view_set();
  hdr::histogram& operator[](view v) noexcept { return views_[index(v)]; }
  const hdr::histogram& operator[](view v) const noexcept { return views_[index(v)]; }
  void add(const view_set& other) noexcept;
  void reset() noexcept;
  bool empty() const noexcept;

 private:
  std::array<hdr::histogram, view_count> views_;
};

}  // namespace punctual::record
