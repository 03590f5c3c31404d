// What remote write did during a run, for the JSON report's `remote_write` object and the text
// report's note. Plain counts, so that the reports need nothing of the pusher.
#pragma once

#include <cstdint>
#include <string>

namespace punctual::metrics {

struct push_stats {
  std::string url;
  std::uint64_t snapshots = 0;        // handed to remote write, the final one included
  std::uint64_t requests = 0;         // requests the endpoint accepted (2xx)
  std::uint64_t samples = 0;          // samples in them
  std::uint64_t failed_attempts = 0;  // requests that got no 2xx (each retry counts once)
  std::uint64_t dropped = 0;          // snapshots never accepted: given up, refused or overflowed
  bool final_pushed = false;          // the final snapshot was accepted: stored counts = report's
  std::string last_error;             // the latest failure, one line (empty: none)
};

}  // namespace punctual::metrics
