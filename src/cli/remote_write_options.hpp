// --remote-write URL and --remote-write-header 'Name: value' (run, search, each shard): checked
// before anything is sent (one line, exit 2), then the remote-write sink that the live metrics
// (cli/live_metrics.hpp) hand their snapshots to (metrics/remote_write.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "http/url.hpp"

namespace punctual::metrics {
class remote_write;
}  // namespace punctual::metrics

namespace punctual::cli {

class live_metrics;

struct remote_write_target {
  http::url url;
  std::string url_text;              // as the reports show it
  std::vector<std::string> headers;  // "Name: value", checked
};

// Nothing when `url` is empty. Throws usage_error for a URL that is not http://host[:port]/path
// (https is refused: the pusher speaks plain HTTP), for a malformed header, for a header the
// protocol sets itself, and for headers without a URL.
std::optional<remote_write_target> parse_remote_write(const std::string& url,
                                                      const std::vector<std::string>& headers);

// Starts the remote-write sink (its pusher thread), labelling every series with `run_id` and
// `shard`, and adds it to the live metrics, made without a scrape endpoint when there are none.
// Returns it, for close() once the run has ended. Nothing without --remote-write.
metrics::remote_write* attach_remote_write(const std::optional<remote_write_target>& target,
                                           const std::string& run_id, std::uint32_t shard,
                                           std::unique_ptr<live_metrics>& live);

}  // namespace punctual::cli
