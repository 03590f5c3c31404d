#include "server/h2_connection.hpp"

#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "http/text.hpp"
#include "server/cpu_burn.hpp"

namespace punctual::server {

using std::chrono::nanoseconds;

namespace {

// nghttp2 encodes long runs of DATA in 16 KiB frames; past this many bytes waiting for the
// socket, produce() stops, so a large body never sits whole in the output buffer.
constexpr std::size_t h2_output_budget = 256 * 1024;

bool h2_due_later(const auto& a, const auto& b) {
  return a.due > b.due;
}

nghttp2_nv h2_header(std::string_view name, std::string_view value) {
  // The names and values live in static storage or in h2_shared, which outlives every
  // session: nghttp2 may keep them until the HEADERS frame is written.
  return {reinterpret_cast<std::uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<std::uint8_t*>(const_cast<char*>(value.data())), name.size(),
          value.size(), NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE};
}

}  // namespace

struct h2_callbacks {
  static int on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* self) {
    const bool ends_request =
        (frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) &&
        (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
    if (ends_request) static_cast<h2_connection*>(self)->on_request(frame->hd.stream_id);
    return 0;
  }

  // Only with an id header to log: the arrival log keeps its value.
  static int on_header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name,
                       std::size_t namelen, const std::uint8_t* value, std::size_t valuelen,
                       std::uint8_t, void* self) {
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
    auto* conn = static_cast<h2_connection*>(self);
    const std::string_view n(reinterpret_cast<const char*>(name), namelen);
    if (!http::iequals(n, conn->shared_.id_header())) return 0;
    conn->on_id(frame->hd.stream_id,
                std::string_view(reinterpret_cast<const char*>(value), valuelen));
    return 0;
  }

  static int on_stream_close(nghttp2_session* session, std::int32_t id, std::uint32_t, void* self) {
    auto* state = static_cast<h2_connection::stream_state*>(
        nghttp2_session_get_stream_user_data(session, id));
    if (!state) return 0;  // closed before its request was complete: it never arrived
    if (!state->queued) {  // only its tag came: it never arrived either
      static_cast<h2_connection*>(self)->release(state);
      return 0;
    }
    // An answered stream is done; one still waiting for its due time stays in the heap,
    // which records and frees it then.
    if (state->answered) {
      static_cast<h2_connection*>(self)->release(state);
    } else {
      state->closed = true;
    }
    return 0;
  }

  static ssize_t read_body(nghttp2_session*, std::int32_t, std::uint8_t* buffer, std::size_t length,
                           std::uint32_t* flags, nghttp2_data_source* source, void* self) {
    auto& state = *static_cast<h2_connection::stream_state*>(source->ptr);
    const std::string_view body = static_cast<h2_connection*>(self)->shared_.body();
    const std::size_t n = std::min(length, body.size() - state.sent);
    std::memcpy(buffer, body.data() + state.sent, n);
    state.sent += n;
    if (state.sent == body.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }
};

h2_shared::h2_shared(const server_config& config, const response_set& responses)
    : max_streams_(config.max_streams),
      // The HTTP/1.1 200 ends with the body: the same bytes, so both protocols answer alike.
      body_(responses.ok.substr(responses.ok.size() - config.body_size)),
      content_length_(std::to_string(config.body_size)),
      id_header_(config.arrival_log_id_header) {
  if (nghttp2_session_callbacks_new(&callbacks_) != 0) {
    throw std::runtime_error("cannot set up HTTP/2 (nghttp2 is out of memory)");
  }
  nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks_, h2_callbacks::on_frame_recv);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks_, h2_callbacks::on_stream_close);
  if (!id_header_.empty())
    nghttp2_session_callbacks_set_on_header_callback(callbacks_, h2_callbacks::on_header);
}

h2_shared::~h2_shared() {
  nghttp2_session_callbacks_del(callbacks_);
}

std::unique_ptr<h2_connection> h2_shared::make() const {
  nghttp2_session* session = nullptr;
  // The session's user data is the h2_connection, which is made after it: set it below.
  if (nghttp2_session_server_new(&session, callbacks_, nullptr) != 0) return nullptr;
  auto conn = std::make_unique<h2_connection>(*this, session);
  nghttp2_session_set_user_data(session, conn.get());
  const nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, max_streams_}};
  if (nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, settings, 1) != 0) return nullptr;
  return conn;
}

h2_connection::h2_connection(const h2_shared& shared, nghttp2_session* session)
    : shared_(shared), session_(session) {
  // Room for the usual concurrency up front (a --max-streams of millions is not reserved).
  due_.reserve(std::min<std::size_t>(shared.max_streams(), 256));
}

h2_connection::~h2_connection() {
  nghttp2_session_del(session_);
}

bool h2_connection::on_bytes(std::string_view data, nanoseconds arrival, answer_policy& policy) {
  arrival_ = arrival;
  policy_ = &policy;
  const ssize_t used = nghttp2_session_mem_recv(
      session_, reinterpret_cast<const std::uint8_t*>(data.data()), data.size());
  policy_ = nullptr;
  kick_ = true;
  if (used >= 0) return true;
  // Not HTTP/2 (a bad preface), a flood or no memory: say so with a GOAWAY, then close.
  nghttp2_session_terminate_session(session_, NGHTTP2_PROTOCOL_ERROR);
  return false;
}

// A stream's state, made when its first part (its id header, or its whole request) arrives.
h2_connection::stream_state& h2_connection::state_of(std::int32_t stream_id) {
  auto* state =
      static_cast<stream_state*>(nghttp2_session_get_stream_user_data(session_, stream_id));
  if (state) return *state;
  state = take_state();
  *state = stream_state{};
  state->id = stream_id;
  nghttp2_session_set_stream_user_data(session_, stream_id, state);
  return *state;
}

void h2_connection::on_id(std::int32_t stream_id, std::string_view value) {
  state_of(stream_id).tag.assign(value);
}

void h2_connection::on_request(std::int32_t stream_id) {
  stream_state* state = &state_of(stream_id);
  // A request can end only once; a second END_STREAM would be a protocol error nghttp2 has
  // already refused, but a stream must never be queued twice.
  if (state->queued) return;
  state->queued = true;
  burn_cpu(policy_->cpu_per_request);
  state->arrival = arrival_;
  const nanoseconds service = policy_->service.next();
  state->late = policy_->mark_late.count() > 0 && service >= policy_->mark_late;
  due_.push_back({arrival_ + service, state});
  std::push_heap(due_.begin(), due_.end(), h2_due_later<due_stream, due_stream>);
}

h2_connection::stream_state* h2_connection::take_state() {
  if (free_states_.empty()) return &states_.emplace_back();
  stream_state* state = free_states_.back();
  free_states_.pop_back();
  return state;
}

void h2_connection::release(stream_state* state) {
  free_states_.push_back(state);
}

std::optional<nanoseconds> h2_connection::next_wakeup() const {
  if (kick_) return arrival_;
  if (!due_.empty()) return due_.front().due;
  return std::nullopt;
}

void h2_connection::submit(stream_state& state) {
  static constexpr std::string_view ok_status = "200";
  static constexpr std::string_view late_status = "299";
  const nghttp2_nv headers[] = {
      h2_header(":status", state.late ? late_status : ok_status),
      h2_header("content-length", shared_.content_length()),
      h2_header("content-type", "text/plain"),
  };
  nghttp2_data_provider body{};
  body.source.ptr = &state;
  body.read_callback = h2_callbacks::read_body;
  const bool empty = shared_.body().empty();
  nghttp2_submit_response(session_, state.id, headers, std::size(headers), empty ? nullptr : &body);
}

bool h2_connection::produce(nanoseconds now, arrival_recorder& recorder, std::string& out,
                            std::size_t unsent) {
  kick_ = false;
  while (!due_.empty() && due_.front().due <= now) {
    std::pop_heap(due_.begin(), due_.end(), h2_due_later<due_stream, due_stream>);
    stream_state* state = due_.back().state;
    due_.pop_back();
    if (state->closed) {
      recorder.record(state->arrival, nanoseconds{0}, state->tag);
      release(state);
      continue;
    }
    recorder.record(state->arrival, now, state->tag);
    state->answered = true;
    submit(*state);
  }
  const std::size_t start = out.size();
  while (unsent + (out.size() - start) < h2_output_budget) {
    const std::uint8_t* data = nullptr;
    const ssize_t n = nghttp2_session_mem_send(session_, &data);
    if (n == 0) return false;
    if (n < 0) {  // out of memory or a callback failed: the session cannot go on
      broken_ = true;
      return false;
    }
    out.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n));
  }
  return nghttp2_session_want_write(session_) != 0;
}

void h2_connection::go_away() {
  nghttp2_session_terminate_session(session_, NGHTTP2_NO_ERROR);
}

bool h2_connection::idle() const {
  return due_.empty() && nghttp2_session_want_write(session_) == 0;
}

bool h2_connection::finished() const {
  return broken_ ||
         (nghttp2_session_want_read(session_) == 0 && nghttp2_session_want_write(session_) == 0);
}

void h2_connection::abandon(arrival_recorder& recorder) {
  for (const due_stream& d : due_) {
    recorder.record(d.state->arrival, nanoseconds{0}, d.state->tag);
  }
  due_.clear();
}

}  // namespace punctual::server
