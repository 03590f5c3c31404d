// Per-thread record of (arrival, answered) monotonic times, one entry per request.
// Recording takes no lock and allocates only when a chunk fills (one chunk is preallocated).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace punctual::server {

struct arrival_entry {
  std::int64_t arrival_mono_ns = 0;
  std::int64_t answered_mono_ns = 0;  // 0: never answered (the connection was lost first)
};

class arrival_recorder {
 public:
  static constexpr std::size_t chunk_entries = 64 * 1024;

  explicit arrival_recorder(bool enabled);

  bool enabled() const { return enabled_; }
  void record(std::chrono::nanoseconds arrival, std::chrono::nanoseconds answered) {
    if (!enabled_) return;
    if (used_ == chunk_entries) add_chunk();
    chunks_.back()[used_++] = {arrival.count(), answered.count()};
  }
  std::size_t size() const;
  void append_to(std::vector<arrival_entry>& out) const;

 private:
  void add_chunk();

  bool enabled_;
  std::vector<std::unique_ptr<arrival_entry[]>> chunks_;
  std::size_t used_ = 0;  // entries used in the last chunk
};

// Writes "# arrival_mono_ns answered_mono_ns" then one line per entry, sorted by arrival.
// Throws std::runtime_error when the file cannot be written.
void write_arrival_log(const std::string& path, std::vector<arrival_entry> entries);

}  // namespace punctual::server
