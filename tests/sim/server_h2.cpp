// The scripted server's HTTP/2: an nghttp2 server session per connection, fed what arrives
// and drained into the network whenever no stall holds its bytes.
#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <cstring>

#include "server.hpp"
#include "server_state.hpp"

namespace punctual::sim {

struct h2_callbacks {
  using state = scripted_server::conn_state;

  static int on_header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name,
                       std::size_t namelen, const std::uint8_t* value, std::size_t valuelen,
                       std::uint8_t, void* self) {
    if (frame->hd.type != NGHTTP2_HEADERS) return 0;
    const std::string_view n(reinterpret_cast<const char*>(name), namelen);
    const std::string_view v(reinterpret_cast<const char*>(value), valuelen);
    auto& stream = static_cast<state*>(self)->streams[frame->hd.stream_id];
    stream.head.append(n).append(": ").append(v).append("\r\n");
    if (n != "x-sim-id") return 0;
    std::uint64_t id = 0;
    for (std::size_t i = 0; i < valuelen && value[i] >= '0' && value[i] <= '9'; ++i)
      id = id * 10 + (value[i] - '0');
    stream.sim_id = id;
    return 0;
  }

  static int on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* self) {
    const bool ends_request =
        (frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) &&
        (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
    if (!ends_request) return 0;
    auto* s = static_cast<state*>(self);
    s->server->h2_request(*s, frame->hd.stream_id, s->streams[frame->hd.stream_id].sim_id);
    return 0;
  }

  static ssize_t read_body(nghttp2_session*, std::int32_t stream, std::uint8_t* buffer,
                           std::size_t length, std::uint32_t* flags, nghttp2_data_source*,
                           void* self) {
    auto* s = static_cast<state*>(self);
    auto& st = s->streams[stream];
    const std::size_t total = s->server->script_.body_bytes;
    const std::size_t n = std::min(length, total - st.body_sent);
    std::memset(buffer, 'x', n);
    st.body_sent += n;
    if (st.body_sent == total) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }
};

void scripted_server::h2_start(conn_state& s) {
  nghttp2_session_callbacks* cb = nullptr;
  nghttp2_session_callbacks_new(&cb);
  nghttp2_session_callbacks_set_on_header_callback(cb, h2_callbacks::on_header);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cb, h2_callbacks::on_frame_recv);
  nghttp2_session_server_new(&s.session, cb, &s);
  nghttp2_session_callbacks_del(cb);
  const nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, script_.max_streams},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 0}};
  nghttp2_submit_settings(s.session, NGHTTP2_FLAG_NONE, settings, script_.zero_window ? 2 : 1);
  h2_flush(s);
}

void scripted_server::h2_data(connection&, conn_state& s, std::string_view bytes) {
  const auto n = nghttp2_session_mem_recv(
      s.session, reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  if (n < 0) {  // the client broke the protocol: the connection ends
    s.gone = true;
    net_.server_reset(*s.conn);
    return;
  }
  h2_flush(s);
}

void scripted_server::h2_request(conn_state& s, std::int32_t stream, std::uint64_t sim_id) {
  served_request& r = record(sim_id, *s.conn);
  const std::size_t index = log_.size() - 1;
  s.streams[stream].log = index;
  r.head = std::move(s.streams[stream].head);
  ++s.requests;
  if (s.goaway_sent) {
    // Above the GOAWAY's last stream: nghttp2 still hands it over until the GOAWAY has been
    // written, but the client was told it is never processed, and sends it again.
    r.unprocessed = true;
    r.answer_at = world_.now();
    return;
  }
  r.what = draw_fate();
  switch (r.what) {  // HTTP/1.1's faults
    case fate::close_delimited:
    case fate::trickle:
    case fate::garbage:
    case fate::huge_headers:
    case fate::continue_:
    case fate::chunked:
    case fate::http10:
    case fate::close_after:
      r.what = fate::ok;
      break;
    default:
      break;
  }
  r.status = status_of(r.what);
  if (script_.goaway_after != 0 && s.requests == script_.goaway_after && !s.goaway_sent) {
    // This stream is the last one processed; the client sends the others again.
    s.goaway_sent = true;
    nghttp2_submit_goaway(s.session, NGHTTP2_FLAG_NONE, stream, NGHTTP2_NO_ERROR, nullptr, 0);
    if (script_.close_after_goaway) close_later(s, *script_.close_after_goaway);
  }
  if (r.what == fate::refused) {
    r.answer_at = world_.now();
    nghttp2_submit_rst_stream(s.session, NGHTTP2_FLAG_NONE, stream, NGHTTP2_REFUSED_STREAM);
    return h2_flush(s);
  }
  if (r.what == fate::never) return;
  const nanoseconds at = writable_at(world_.now() + script_.service.draw(world_));
  conn_state* state = &s;
  auto keep = s.conn->shared_from_this();
  world_.at(at, [this, state, keep, stream, index] { h2_answer(*state, stream, index); });
}

void scripted_server::h2_answer(conn_state& s, std::int32_t stream, std::size_t index) {
  served_request& r = log_[index];
  r.answer_at = world_.now();
  if (s.gone) return;
  if (r.what == fate::reset || r.what == fate::reset_after) {
    s.gone = true;
    return net_.server_reset(*s.conn);
  }
  if (r.what == fate::malformed) {
    // What the session would write first, then the frame that breaks the protocol; nothing
    // more is answered on this connection.
    h2_flush(s);
    net_.server_write(*s.conn, script_.malformed_frame);
    s.gone = true;
    if (script_.close_after_break) close_later(s, *script_.close_after_break);
    return;
  }
  if (r.what == fate::stream_reset) {
    nghttp2_submit_rst_stream(s.session, NGHTTP2_FLAG_NONE, stream, NGHTTP2_INTERNAL_ERROR);
    return h2_flush(s);
  }
  static const std::string statuses[] = {"200", "503", "429"};
  const std::string& status = statuses[r.status == 503 ? 1 : r.status == 429 ? 2 : 0];
  const std::string length = std::to_string(script_.body_bytes);
  const auto nv = [](std::string_view n, std::string_view v) {
    return nghttp2_nv{reinterpret_cast<std::uint8_t*>(const_cast<char*>(n.data())),
                      reinterpret_cast<std::uint8_t*>(const_cast<char*>(v.data())), n.size(),
                      v.size(), NGHTTP2_NV_FLAG_NONE};
  };
  const nghttp2_nv headers[] = {nv(":status", status), nv("content-length", length)};
  nghttp2_data_provider body{};
  body.read_callback = h2_callbacks::read_body;
  nghttp2_submit_response(s.session, stream, headers, 2, &body);
  h2_flush(s);
}

// Follows the frames the server writes, to know the offset just past each stream's answer: the
// frame that ends the stream (END_STREAM on HEADERS or DATA, or RST_STREAM).
void scripted_server::h2_track(conn_state& s, std::string_view out) {
  std::uint64_t at = s.h2_out;
  while (!out.empty()) {
    if (s.frame_left == 0 && s.frame_head.size() < 9) {
      const std::size_t n = std::min(out.size(), 9 - s.frame_head.size());
      s.frame_head.append(out.substr(0, n));
      out.remove_prefix(n);
      at += n;
      if (s.frame_head.size() < 9) return;
      const auto* h = reinterpret_cast<const unsigned char*>(s.frame_head.data());
      s.frame_left = (std::uint64_t{h[0]} << 16) | (std::uint64_t{h[1]} << 8) | h[2];
      if (s.frame_left == 0) frame_done(s, at);
      continue;
    }
    const std::size_t n =
        static_cast<std::size_t>(std::min<std::uint64_t>(out.size(), s.frame_left));
    out.remove_prefix(n);
    at += n;
    s.frame_left -= n;
    if (s.frame_left == 0) frame_done(s, at);
  }
}

void scripted_server::frame_done(conn_state& s, std::uint64_t end) {
  const auto* h = reinterpret_cast<const unsigned char*>(s.frame_head.data());
  const std::uint8_t type = h[3];
  const std::uint8_t flags = h[4];
  const auto stream =
      static_cast<std::int32_t>(((h[5] & 0x7fU) << 24) | (h[6] << 16) | (h[7] << 8) | h[8]);
  s.frame_head.clear();
  const bool ends =
      type == NGHTTP2_RST_STREAM ||
      ((type == NGHTTP2_HEADERS || type == NGHTTP2_DATA) && (flags & NGHTTP2_FLAG_END_STREAM) != 0);
  if (!ends) return;
  const auto it = s.streams.find(stream);
  if (it == s.streams.end() || it->second.log == ~std::size_t{0}) return;
  served_request& r = log_[it->second.log];
  r.end_offset = end;
  r.answered = type != NGHTTP2_RST_STREAM;
}

void scripted_server::close_later(conn_state& s, nanoseconds after) {
  auto keep = s.conn->shared_from_this();
  world_.at(world_.now() + after, [this, keep] {
    auto* st = static_cast<conn_state*>(keep->server_state);
    st->gone = true;
    net_.server_close(*keep);
  });
}

// Writes what the session has to send, unless a stall holds it (then at the stall's end).
void scripted_server::h2_flush(conn_state& s) {
  if (s.gone) return;
  const nanoseconds at = writable_at(world_.now());
  if (at > world_.now()) {
    if (s.flush_pending) return;
    s.flush_pending = true;
    conn_state* state = &s;
    auto keep = s.conn->shared_from_this();
    world_.at(at, [this, state, keep] {
      state->flush_pending = false;
      h2_flush(*state);
    });
    return;
  }
  for (;;) {
    const std::uint8_t* data = nullptr;
    const ssize_t n = nghttp2_session_mem_send(s.session, &data);
    if (n <= 0) break;
    const std::string_view out(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n));
    h2_track(s, out);
    s.h2_out += out.size();
    net_.server_write(*s.conn, out);
  }
}

}  // namespace punctual::sim
