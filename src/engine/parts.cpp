#include "engine/parts.hpp"

#include "net/tls.hpp"

namespace punctual::engine {

run_parts system_parts(const run_config& config) {
  run_parts p;
  const net::clock& clock = net::system_clock();
  p.clock = &clock;
  p.transports = config.tls.enabled ? net::tls_transport_factory(config.tls, clock)
                                    : net::tcp_transport_factory();
  p.codecs = http::make_codec_factory(config.http != run::http_version::http2,
                                      config.http != run::http_version::http1, config.tls.enabled);
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
