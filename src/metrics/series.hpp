// The live metrics' one exchange format: every series a run exports, at one instant. The scrape
// endpoint renders a snapshot as Prometheus text and remote write encodes the same snapshot as
// protobuf, so the two can never disagree about names, labels or values.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace punctual::metrics {

struct label {
  std::string name;
  std::string value;
  friend bool operator==(const label&, const label&) = default;
};

enum class metric_type { counter, gauge, histogram };

// One metric family: `# HELP` and `# TYPE` in the exposition, metadata in remote write.
struct family {
  std::string name;  // without the _bucket, _sum and _count suffixes of a histogram
  metric_type type = metric_type::counter;
  std::string help;
};

// One sample. `name` is the full series name, suffix included (`..._bucket`, `..._count`); its
// labels are the run's own (outcome, name, le, ...). Remote write adds `run_id` and `shard`.
struct sample {
  std::string name;
  std::vector<label> labels;
  double value = 0;
};

struct snapshot {
  std::chrono::system_clock::time_point taken;  // the wall-clock instant the values describe
  std::vector<family> families;
  std::vector<sample> samples;  // grouped by family, in the families' order
};

// Where snapshots go: called on the collector thread, once a second while the run lasts and
// once with the final values. An implementation must return at once (a slow scraper or a slow
// remote-write endpoint must never hold up the collector), so it copies what it keeps.
class sink {
 public:
  virtual ~sink() = default;
  virtual void publish(const snapshot& s) = 0;
  // The final values, after the last interval: equal to the JSON report's counts.
  virtual void finish(const snapshot& s) = 0;
};

}  // namespace punctual::metrics
