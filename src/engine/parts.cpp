#include "engine/parts.hpp"

#include <algorithm>
#include <utility>

#include "http/request_id_codec.hpp"
#include "net/tls.hpp"

namespace punctual::engine {
namespace {

// Room for the longest request the config holds with its id header: a request rendered per user
// may be longer, and its slot's room grows once for it.
std::size_t named_request_room(const run_config& config) {
  std::size_t longest = config.request.size();
  for (const auto& r : config.mix) longest = std::max(longest, r.bytes.size());
  return longest + config.request_id_header.size() + 2 + http::max_request_id_text + 2;
}

}  // namespace

run_parts system_parts(const run_config& config) {
  run_parts p;
  const net::clock& clock = net::system_clock();
  p.clock = &clock;
  p.transports = config.tls.enabled ? net::tls_transport_factory(config.tls, clock)
                                    : net::tcp_transport_factory();
  p.codecs = http::make_codec_factory(config.http != run::http_version::http2,
                                      config.http != run::http_version::http1, config.tls.enabled);
  if (!config.request_id_header.empty()) {
    p.codecs = http::make_request_id_codecs(std::move(p.codecs), config.request_id_header,
                                            named_request_room(config));
  }
  if (config.mix.empty()) {
    p.requests = std::make_unique<fixed_request>(config.request, config.head_request);
  } else {
    p.requests = std::make_unique<weighted_mix>(config.mix, config.seed,
                                                config.plan() ? config.plan()->replay : nullptr);
  }
  p.make_poller = [&clock] { return net::make_epoll_poller(clock); };
  return p;
}

}  // namespace punctual::engine
