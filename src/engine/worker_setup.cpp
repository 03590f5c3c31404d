// Setting connections up before the start: every connection opened and, over HTTP/2, settled
// (the server's SETTINGS in), so that the first requests do not pay for connecting.
#include <algorithm>
#include <span>

#include "engine/worker.hpp"

namespace punctual::engine {

std::uint32_t worker::open_connections(net::failure& first_error) {
  const nanoseconds begin = clock_.now();
  // When users open their own connections, one is opened here only to learn that the target
  // answers (and that its certificate verifies), then closed.
  const std::span<connection> opened = traits_.connections_ahead
                                           ? std::span<connection>(connections_)
                                           : std::span<connection>(connections_).first(1);
  for (auto& c : opened) start_connect(c, begin);
  const bool h2_only = multiplexed_ && !connections_.front().http1;
  const auto note = [&first_error, h2_only](net::failure f) {
    // A server that speaks no h2 may refuse the handshake outright rather than pick nothing.
    if (h2_only && f.text.find("no application protocol") != std::string::npos) {
      f.text = "the server did not agree to HTTP/2 (h2) by ALPN (" + f.text + "); try --http auto";
    }
    // A certificate that does not verify is the failure to tell: it will not go away.
    if (first_error.kind == net::failure_kind::none ||
        (f.kind == net::failure_kind::tls_verify && first_error.kind != f.kind)) {
      first_error = f;
    }
  };
  for (auto& c : opened) {
    if (c.state == conn_state::closed) note(c.transport->last_failure());
  }
  for (;;) {
    const nanoseconds now = clock_.now();
    std::uint32_t pending = 0;
    for (auto& c : opened) {
      // HTTP/2 is set up once the server's SETTINGS have come.
      const bool settling = c.state == conn_state::idle && !c.codec->settled();
      if (c.state != conn_state::connecting && !settling) continue;
      if (c.connect_started + config_.connect_timeout <= now) {
        close_connection(c, now, close_cause::failed);
        note({net::failure_kind::connect,
              settling ? "the server sent no HTTP/2 SETTINGS (is it an HTTP/2 server?)"
                       : "connect timed out"});
      } else {
        ++pending;
      }
    }
    if (pending == 0) break;
    for (const auto& ev : poller_->wait_for(std::chrono::milliseconds(10))) {
      connection& c = connections_[ev.data.u64];
      if (c.state == conn_state::idle) {
        // Only HTTP/2 waits for anything here. An HTTP/1.1 connection's bytes (TLS session
        // tickets) are read by its worker, as on any run: reading them here, on this thread,
        // made the worker's allocations depend on which connection finished its set-up first.
        if (!c.codec->settled()) settle_before_start(c, first_error);
        continue;
      }
      if (c.state != conn_state::connecting) continue;
      const net::setup_status st = c.transport->advance();
      if (st == net::setup_status::ready) {
        note_handshake(c.transport->tls(), clock_.now());
        if (!speak(c)) {
          note({net::failure_kind::tls_handshake,
                "the server did not agree to HTTP/2 (h2) by ALPN; try --http auto"});
          close_connection(c, clock_.now(), close_cause::failed);
          continue;
        }
        c.codec->connected();
        c.state = conn_state::idle;
        idle_.push_back(static_cast<std::uint32_t>(ev.data.u64));
        flush(c, clock_.now());  // HTTP/2's preface and SETTINGS
        // TLS may hold the server's SETTINGS already, with no readiness edge left to say so.
        if (!c.codec->settled()) settle_before_start(c, first_error);
      } else if (st == net::setup_status::failed) {
        note(c.transport->last_failure());
        close_connection(c, clock_.now(), close_cause::failed);
      }
    }
  }
  const auto ready = static_cast<std::uint32_t>(idle_.size());
  for (const auto& c : connections_) {
    if (c.state == conn_state::idle) count_protocol(c);
  }
  if (!traits_.connections_ahead) {
    for (auto& c : opened) {
      if (c.state != conn_state::closed) close_connection(c, clock_.now());
      c.transport->forget_session();  // the first user must not resume the check's session
    }
  }
  return ready;
}

// Reads what a connection set up before the start has received (HTTP/2: the server's SETTINGS)
// and answers it; no request is in flight yet.
void worker::settle_before_start(connection& c, net::failure& error) {
  // Over plain TCP, HTTP/2 is spoken with prior knowledge (h2c), which most HTTP/1.1 servers
  // answer with a 400 or a close: say what to try instead.
  const auto setting_up_failed = [&](const char* what) {
    if (error.kind != net::failure_kind::none) return;
    std::string text = what;
    if (!c.transport->tls().handshaken) {
      text +=
          ": the server does not speak HTTP/2 with prior knowledge (h2c); try --http 1.1, or "
          "--http auto over TLS";
    }
    error = {net::failure_kind::connect, text};
  };
  for (;;) {
    nanoseconds stamp{};
    const auto r = c.transport->read(read_buffer_.data(), read_buffer_.size(), stamp);
    if (r.status == net::io_status::would_block) break;
    if (r.status != net::io_status::done) {
      setting_up_failed("the server closed the connection while setting up");
      return close_connection(c, clock_.now(), close_cause::failed);
    }
    codec_events_.list.clear();
    c.codec->feed(read_buffer_.data(), r.bytes, codec_events_);
    if (!codec_events_.list.empty()) {  // nothing is in flight: only a broken protocol reports
      setting_up_failed("HTTP/2 protocol error while setting up");
      return close_connection(c, clock_.now(), close_cause::failed);
    }
  }
  flush(c, clock_.now());
}

}  // namespace punctual::engine
