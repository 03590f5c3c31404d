// --remote-write URL and --remote-write-header 'Name: value' (run, search, each shard): checked
// before anything is sent (one line, exit 2), then the remote-write sink a run hands its
// snapshots to (metrics/remote_write.hpp).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "http/url.hpp"
#include "run/config.hpp"

namespace punctual::metrics {
class remote_write;
}  // namespace punctual::metrics

namespace punctual::cli {

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

// The sink, its pusher started, labelling every series with the run's run_id and shard index.
std::unique_ptr<metrics::remote_write> start_remote_write(const remote_write_target& target,
                                                          const run::config& config);

}  // namespace punctual::cli
