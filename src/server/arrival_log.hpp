// Per-thread record of (arrival, answered) monotonic times, one entry per request, and with
// --arrival-log-id-header the value of that request header, which names the request (punctual
// run --request-id-header sends its schedule index), so a test can join each arrival to the
// request it was. Recording takes no lock and allocates only when a chunk fills (one chunk is
// preallocated).
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace punctual::server {

// A request header's value as the log keeps it, in place: its first max_size bytes.
struct request_tag {
  static constexpr std::size_t max_size = 48;
  std::array<char, max_size> text{};
  std::uint8_t size = 0;

  void assign(std::string_view value) noexcept {
    size = static_cast<std::uint8_t>(std::min(value.size(), max_size));
    std::copy_n(value.data(), size, text.data());
  }
  std::string_view view() const noexcept { return {text.data(), size}; }
};

struct arrival_entry {
  std::int64_t arrival_mono_ns = 0;
  std::int64_t answered_mono_ns = 0;  // 0: never answered (the connection was lost first)
  request_tag tag;                    // the id header's value (empty: none, or not logged)
};

class arrival_recorder {
 public:
  static constexpr std::size_t chunk_entries = 64 * 1024;

  explicit arrival_recorder(bool enabled);

  bool enabled() const { return enabled_; }
  void record(std::chrono::nanoseconds arrival, std::chrono::nanoseconds answered,
              const request_tag& tag) {
    if (!enabled_) return;
    if (used_ == chunk_entries) add_chunk();
    chunks_.back()[used_++] = {arrival.count(), answered.count(), tag};
  }
  std::size_t size() const;
  void append_to(std::vector<arrival_entry>& out) const;

 private:
  void add_chunk();

  bool enabled_;
  std::vector<std::unique_ptr<arrival_entry[]>> chunks_;
  std::size_t used_ = 0;  // entries used in the last chunk
};

// Writes "# arrival_mono_ns answered_mono_ns" then one line per entry, sorted by arrival. With an
// `id_header`, its name ends the first line and each entry's tag is a third column: "-" when the
// request had none (or an empty one), else its bytes with '%', space, control and non-ASCII
// bytes written as %XX, so the column is one word. Throws std::runtime_error when the file
// cannot be written.
void write_arrival_log(const std::string& path, std::vector<arrival_entry> entries,
                       std::string_view id_header = {});

}  // namespace punctual::server
