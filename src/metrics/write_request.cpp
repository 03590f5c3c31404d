#include "metrics/write_request.hpp"

#include <snappy.h>

#include <algorithm>
#include <set>
#include <unordered_map>
#include <utility>

#include "metrics/proto/remote.pb.h"

namespace punctual::metrics {
namespace {

using label_view = std::pair<std::string_view, std::string_view>;

prompb::MetricMetadata::MetricType type_of(metric_type t) noexcept {
  switch (t) {
    case metric_type::counter:
      return prompb::MetricMetadata::COUNTER;
    case metric_type::gauge:
      return prompb::MetricMetadata::GAUGE;
    case metric_type::histogram:
      return prompb::MetricMetadata::HISTOGRAM;
  }
  return prompb::MetricMetadata::UNKNOWN;
}

// A series' full label set, __name__ included, sorted by name.
std::vector<label_view> labels_of(const sample& s, const std::vector<label>& added) {
  std::vector<label_view> labels{{"__name__", s.name}};
  for (const auto& l : s.labels) labels.emplace_back(l.name, l.value);
  for (const auto& a : added) {
    const bool has = std::any_of(s.labels.begin(), s.labels.end(),
                                 [&](const label& l) { return l.name == a.name; });
    if (!has) labels.emplace_back(a.name, a.value);
  }
  std::sort(labels.begin(), labels.end());
  return labels;
}

// One text per label set: names and values cannot hold a NUL, so NUL-separated is unambiguous.
std::string key_of(const std::vector<label_view>& labels) {
  std::string key;
  for (const auto& [name, value] : labels) {
    key.append(name).push_back('\0');
    key.append(value).push_back('\0');
  }
  return key;
}

void add_metadata(prompb::WriteRequest& request, const std::vector<snapshot>& batch) {
  std::set<std::string_view> seen;
  for (const auto& s : batch) {
    for (const auto& f : s.families) {
      if (!seen.insert(f.name).second) continue;
      auto* m = request.add_metadata();
      m->set_type(type_of(f.type));
      m->set_metric_family_name(f.name);
      m->set_help(f.help);
    }
  }
}

}  // namespace

std::int64_t timestamp_ms(std::chrono::system_clock::time_point t) noexcept {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

std::string encode_write_request(const std::vector<snapshot>& batch,
                                 const std::vector<label>& added) {
  prompb::WriteRequest request;
  std::unordered_map<std::string, prompb::TimeSeries*> series;
  for (const auto& s : batch) {
    const std::int64_t at = timestamp_ms(s.taken);
    for (const auto& one : s.samples) {
      const auto labels = labels_of(one, added);
      auto& ts = series[key_of(labels)];
      if (ts == nullptr) {
        ts = request.add_timeseries();
        for (const auto& [name, value] : labels) {
          auto* l = ts->add_labels();
          l->set_name(std::string(name));
          l->set_value(std::string(value));
        }
      }
      auto* point = ts->add_samples();
      point->set_value(one.value);
      point->set_timestamp(at);
    }
  }
  add_metadata(request, batch);
  return request.SerializeAsString();
}

std::string snappy_compress(std::string_view raw) {
  std::string out;
  snappy::Compress(raw.data(), raw.size(), &out);
  return out;
}

bool snappy_uncompress(std::string_view compressed, std::string& raw) {
  return snappy::Uncompress(compressed.data(), compressed.size(), &raw);
}

}  // namespace punctual::metrics
