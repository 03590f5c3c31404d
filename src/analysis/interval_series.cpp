#include "analysis/interval_series.hpp"

#include <algorithm>
#include <cmath>

namespace punctual::analysis {

bool same_percentile(double a, double b) noexcept {
  return std::fabs(a - b) <= 1e-9;
}

interval_series::interval_series(std::span<const double> extra_percentiles)
    : percentiles_(summary_percentiles.begin(), summary_percentiles.end()) {
  for (const double p : extra_percentiles) {
    if (!percentile_index(p)) percentiles_.push_back(p);
  }
  std::sort(percentiles_.begin(), percentiles_.end());
}

std::optional<std::size_t> interval_series::percentile_index(double percentile) const noexcept {
  for (std::size_t k = 0; k < percentiles_.size(); ++k) {
    if (same_percentile(percentiles_[k], percentile)) return k;
  }
  return std::nullopt;
}

void interval_series::add(const record::view_set& views) {
  const auto& response = views[record::view::response_time];
  const auto& service = views[record::view::service_time];
  interval_summary row;
  row.response_count = response.total_count();
  row.service_count = service.total_count();
  if (row.service_count > 0) {
    row.service_mean_ns = service.mean();
    row.service_p50_ns = service.value_at_percentile(50);
  }
  rows_.push_back(row);
  for (const double p : percentiles_) {
    values_.push_back(row.response_count > 0 ? response.value_at_percentile(p) : 0);
  }
}

std::vector<std::int64_t> interval_series::response_values(double percentile) const {
  std::vector<std::int64_t> out;
  const auto k = percentile_index(percentile);
  if (!k) return out;
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    if (rows_[i].response_count > 0) out.push_back(response_at(i, *k));
  }
  return out;
}

}  // namespace punctual::analysis
