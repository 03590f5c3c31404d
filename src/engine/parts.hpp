// What a run is made of besides its config: every part that meets the outside world (sockets,
// the clock, the wait) or decides what to send. The CLI builds the real ones (system_parts); the
// simulation (tests/sim) builds a virtual clock, an in-memory network and pollers that let
// virtual time pass, and runs the same engine on them.
#pragma once

#include <functional>
#include <memory>

#include "engine/config.hpp"
#include "engine/load_model.hpp"
#include "engine/request_source.hpp"
#include "engine/tap.hpp"
#include "http/codec_factory.hpp"
#include "net/clock.hpp"
#include "net/poller.hpp"
#include "net/transport.hpp"

namespace punctual::engine {

struct run_parts {
  std::unique_ptr<net::transport_factory> transports;
  std::unique_ptr<http::codec_factory> codecs;
  std::unique_ptr<request_source> requests;
  const net::clock* clock = nullptr;
  std::function<std::unique_ptr<net::poller>()> make_poller;  // one per worker
  request_tap* tap = nullptr;                                 // tests only
};

// Real sockets (TCP or TLS, as the target's scheme says), the codecs --http asks for, the
// request or mix the config holds, the kernel's clocks and an epoll poller per worker.
run_parts system_parts(const run_config& config);

// What one worker is made of: shared parts by reference, its own poller and load model.
struct worker_parts {
  net::transport_factory& transports;
  const http::codec_factory& codecs;
  const net::clock& clock;
  std::unique_ptr<net::poller> poller;
  std::unique_ptr<load_model> model;
  request_tap* tap = nullptr;
  claim_board* claims = nullptr;  // the shard's claim board, or null (claims.hpp)
};

}  // namespace punctual::engine
