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
  void add(const view_set& other) noexcept;
  void reset() noexcept;
  bool empty() const noexcept;

 private:
  std::array<hdr::histogram, view_count> views_;
  std::vector<hdr::histogram> named_;  // name_count() x named_view_count, by name
};

}  // namespace punctual::record
