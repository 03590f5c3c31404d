// HTTP/2 as a codec, on libnghttp2 (framing, HPACK, flow control): each slot is a stream. The
// engine's requests arrive as HTTP/1.1 bytes and leave as HEADERS (and DATA) frames; responses
// complete on the frame that carries END_STREAM.
#include "http/h2_codec.hpp"

#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "http/h2_request.hpp"

namespace punctual::http {
namespace {

// Past this many bytes waiting for the socket, output() stops asking nghttp2 for more, so a
// large request body never sits whole in the buffer.
constexpr std::size_t output_budget = 64 * 1024;

struct stream_state {
  std::int32_t id = 0;  // 0: the slot carries no stream
  int status = 0;
  bool head = false;
  bool first_byte = false;
  bool headers_done = false;
  const body_needle* needle = nullptr;
  std::uint32_t needle_state = 0;
  std::string* keep = nullptr;
  std::string_view body;  // what is left of the request's body to send
  stream_bytes bytes;
};

class h2_codec final : public codec {
 public:
  h2_codec(const h2_options& options, std::uint32_t slots) : options_(options), streams_(slots) {
    if (nghttp2_session_callbacks_new(&callbacks_) != 0 || nghttp2_option_new(&option_) != 0) {
      throw std::runtime_error("cannot set up HTTP/2 (nghttp2 is out of memory)");
    }
    set_callbacks();
    // Until the server's SETTINGS say otherwise, assume it takes as many streams as we open.
    nghttp2_option_set_peer_max_concurrent_streams(option_, slots);
    // Closed streams are kept only for a priority tree nobody here uses.
    nghttp2_option_set_no_closed_streams(option_, 1);
    scratch_.reserve(4096);
    last_request_.reserve(4096);
    nv_.reserve(64);
    out_.reserve(output_budget + 16 * 1024);
  }

  ~h2_codec() override {
    drop_session();
    nghttp2_option_del(option_);
    nghttp2_session_callbacks_del(callbacks_);
  }

  void connected() override {
    drop_session();
    for (auto& s : streams_) s = stream_state{};
    out_.clear();
    out_at_ = 0;
    settled_ = goaway_ = broken_ = false;
    goaway_last_ = 0;
    nghttp2_mem* mem = options_.memory ? options_.memory->nghttp2() : nullptr;
    if (nghttp2_session_client_new3(&session_, callbacks_, this, option_, mem) != 0) {
      session_ = nullptr;
      broken_ = true;
      return update_capacity();
    }
    const nghttp2_settings_entry settings[] = {
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
        {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 0},  // the server may push nothing
    };
    nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings, std::size(settings));
    update_capacity();
  }

  bool begin(std::uint32_t slot, const outgoing_request& request) override {
    if (!session_ || broken_) return false;
    stream_state& s = streams_[slot];
    s = stream_state{};
    s.head = request.head;
    s.needle = request.needle;
    s.keep = request.keep;
    if (s.keep) s.keep->clear();
    // Most runs send one request, or a few, over and over: translate a request only when it
    // differs from the last one (the fields point into our copy of it, not into the caller's).
    if (request.bytes != last_request_) {
      last_request_.assign(request.bytes);
      const auto parsed = to_h2_headers(last_request_, options_.tls, scratch_, nv_);
      body_at_ = parsed ? last_request_.size() - parsed->body.size() : std::string::npos;
    }
    if (body_at_ == std::string::npos) return false;
    s.body = request.bytes.substr(body_at_);
    nghttp2_data_provider body{};
    body.source.ptr = &s;
    body.read_callback = read_body;
    const std::int32_t id = nghttp2_submit_request(
        session_, nullptr, nv_.data(), nv_.size(), s.body.empty() ? nullptr : &body,
        reinterpret_cast<void*>(static_cast<std::uintptr_t>(slot) + 1));
    if (id < 0) return false;
    s.id = id;
    if (id >= (1 << 30)) update_capacity();  // stream ids run out at 2^31
    return true;
  }

  std::string_view output() override {
    fill_output();
    return std::string_view(out_).substr(out_at_);
  }
  void wrote(std::size_t n) noexcept override { out_at_ += n; }
  bool counts_per_stream() const noexcept override { return true; }
  stream_bytes bytes_of(std::uint32_t slot) const noexcept override { return streams_[slot].bytes; }

  std::size_t feed(const char* data, std::size_t size, codec_sink& sink) override {
    if (!session_ || broken_) return 0;
    sink_ = &sink;
    const ssize_t n =
        nghttp2_session_mem_recv(session_, reinterpret_cast<const std::uint8_t*>(data), size);
    // What the bytes call for is framed now, while the sink listens: a stream nghttp2 resets
    // for a malformed response closes as its RST_STREAM is framed, and a connection error shows
    // as the GOAWAY it frames (on_frame_send).
    if (n >= 0) fill_output();
    sink_ = nullptr;
    if (n < 0) broken_ = true;
    update_capacity();
    if (broken_) {
      sink.on_protocol_error(parse_error::h2_protocol);
      return size;
    }
    return static_cast<std::size_t>(n);
  }

  void finish_on_eof(codec_sink& sink) override {
    for (std::uint32_t i = 0; i < streams_.size(); ++i) {
      stream_state& s = streams_[i];
      if (s.id == 0) continue;
      const bool unprocessed = goaway_ && s.id > goaway_last_;
      const stream_bytes bytes = s.bytes;
      detach(s);
      sink.on_stream_failed(i, unprocessed ? stream_failure::goaway : stream_failure::closed, 0,
                            bytes);
    }
    drop_session();
    update_capacity();
  }

  bool cancel(std::uint32_t slot) noexcept override {
    stream_state& s = streams_[slot];
    if (s.id != 0 && session_)
      nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, s.id, NGHTTP2_CANCEL);
    detach(s);
    return session_ && !broken_;
  }

  std::uint32_t capacity() const noexcept override { return capacity_; }
  bool settled() const noexcept override { return settled_ || broken_; }
  bool allows_deferred_reads() const noexcept override { return false; }
  std::string_view protocol() const noexcept override { return "h2"; }

 private:
  // Frames what nghttp2 has queued into out_, up to the budget; the bytes wait there for wrote().
  void fill_output() {
    if (out_at_ == out_.size()) {
      out_.clear();
      out_at_ = 0;
    }
    while (session_ && out_.size() < output_budget) {
      const std::uint8_t* data = nullptr;
      const ssize_t n = nghttp2_session_mem_send(session_, &data);
      if (n <= 0) {
        if (n < 0) broken_ = true;
        break;
      }
      out_.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n));
    }
    if (broken_) capacity_ = 0;
  }

  // The engine asks for the capacity whenever it places a request; it changes only with what
  // the session reads or sends, so it is worked out then.
  void update_capacity() noexcept {
    if (!session_ || broken_ || goaway_ || nghttp2_session_check_request_allowed(session_) == 0) {
      capacity_ = 0;
      return;
    }
    const std::uint32_t remote =
        nghttp2_session_get_remote_settings(session_, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
    capacity_ = std::min<std::uint32_t>(remote, static_cast<std::uint32_t>(streams_.size()));
  }

  void drop_session() noexcept {
    if (session_) nghttp2_session_del(session_);
    session_ = nullptr;
  }

  // The stream no longer belongs to its slot: nghttp2's later callbacks for it find nothing.
  void detach(stream_state& s) noexcept {
    if (s.id != 0 && session_) nghttp2_session_set_stream_user_data(session_, s.id, nullptr);
    s.id = 0;
  }

  std::int64_t slot_of(std::int32_t stream_id) const noexcept {
    if (stream_id <= 0 || !session_) return -1;
    const auto tag =
        reinterpret_cast<std::uintptr_t>(nghttp2_session_get_stream_user_data(session_, stream_id));
    if (tag == 0 || tag > streams_.size()) return -1;
    return static_cast<std::int64_t>(tag - 1);
  }
  stream_state* stream(std::int32_t stream_id) noexcept {
    const auto i = slot_of(stream_id);
    return i < 0 ? nullptr : &streams_[static_cast<std::size_t>(i)];
  }

  void keep(stream_state& s, std::string_view a, std::string_view b = {}, std::string_view c = {},
            std::string_view d = {}) {
    if (!s.keep) return;
    for (const auto part : {a, b, c, d}) {
      const std::size_t room = max_kept_response - std::min(max_kept_response, s.keep->size());
      s.keep->append(part.substr(0, std::min(room, part.size())));
    }
  }

  void set_callbacks() noexcept;

  static int on_begin_frame(nghttp2_session*, const nghttp2_frame_hd* hd, void* self) {
    auto& me = *static_cast<h2_codec*>(self);
    if (stream_state* s = me.stream(hd->stream_id)) s->bytes.received += hd->length + 9;
    return 0;
  }

  static int on_begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* self) {
    auto& me = *static_cast<h2_codec*>(self);
    const auto slot = me.slot_of(frame->hd.stream_id);
    if (slot < 0) return 0;
    stream_state& s = me.streams_[static_cast<std::size_t>(slot)];
    if (!s.first_byte) {
      s.first_byte = true;
      me.sink_->on_first_byte(static_cast<std::uint32_t>(slot));
    }
    return 0;
  }

  static int on_header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name,
                       std::size_t name_length, const std::uint8_t* value, std::size_t value_length,
                       std::uint8_t, void* self) {
    auto& me = *static_cast<h2_codec*>(self);
    stream_state* s = me.stream(frame->hd.stream_id);
    if (!s || s->headers_done) return 0;  // trailers are not kept
    const std::string_view n(reinterpret_cast<const char*>(name), name_length);
    const std::string_view v(reinterpret_cast<const char*>(value), value_length);
    if (n == ":status") {
      int status = 0;
      for (const char ch : v) status = status * 10 + (ch - '0');
      s->status = status;
      // A kept response reads as HTTP/1.1 text, which the captures and cookies understand.
      if (status >= 200 && s->keep) me.keep(*s, "HTTP/1.1 ", v, " \r\n");
    } else if (s->status >= 200 && s->keep) {
      me.keep(*s, n, ": ", v, "\r\n");
    }
    return 0;
  }

  static int on_data_chunk(nghttp2_session*, std::uint8_t, std::int32_t stream_id,
                           const std::uint8_t* data, std::size_t length, void* self) {
    auto& me = *static_cast<h2_codec*>(self);
    stream_state* s = me.stream(stream_id);
    if (!s) return 0;
    const char* p = reinterpret_cast<const char*>(data);
    if (s->needle) s->needle_state = s->needle->advance(s->needle_state, p, length);
    me.keep(*s, std::string_view(p, length));
    return 0;
  }

  static int on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* self) {
    auto& me = *static_cast<h2_codec*>(self);
    switch (frame->hd.type) {
      case NGHTTP2_SETTINGS:
        if (!(frame->hd.flags & NGHTTP2_FLAG_ACK)) me.settled_ = true;
        return 0;
      case NGHTTP2_GOAWAY:
        me.goaway_ = true;
        me.goaway_last_ = frame->goaway.last_stream_id;
        return 0;
      case NGHTTP2_HEADERS:
      case NGHTTP2_DATA:
        break;
      default:
        return 0;
    }
    const auto slot = me.slot_of(frame->hd.stream_id);
    if (slot < 0) return 0;
    stream_state& s = me.streams_[static_cast<std::size_t>(slot)];
    if (frame->hd.type == NGHTTP2_HEADERS && s.status >= 200 && !s.headers_done) {
      s.headers_done = true;
      me.keep(s, "\r\n");
    }
    if (!(frame->hd.flags & NGHTTP2_FLAG_END_STREAM) || s.status < 200) return 0;
    const response_end end{s.status, true, !s.needle || s.needle->found(s.needle_state)};
    const stream_bytes bytes = s.bytes;
    // The server may answer before the request's body is all sent: the stream is ours no more.
    const bool still_open = nghttp2_session_get_stream_local_close(me.session_, s.id) == 0;
    if (still_open)
      nghttp2_submit_rst_stream(me.session_, NGHTTP2_FLAG_NONE, s.id, NGHTTP2_NO_ERROR);
    me.detach(s);
    me.sink_->on_response(static_cast<std::uint32_t>(slot), end, bytes);
    return 0;
  }

  static int on_frame_send(nghttp2_session*, const nghttp2_frame* frame, void* self) {
    auto& me = *static_cast<h2_codec*>(self);
    if (frame->hd.type == NGHTTP2_GOAWAY && frame->goaway.error_code != NGHTTP2_NO_ERROR) {
      me.broken_ = true;  // we found the server's bytes broke the protocol
    }
    if (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) return 0;
    if (stream_state* s = me.stream(frame->hd.stream_id)) s->bytes.sent += frame->hd.length + 9;
    return 0;
  }

  static int on_stream_close(nghttp2_session*, std::int32_t stream_id, std::uint32_t code,
                             void* self) {
    auto& me = *static_cast<h2_codec*>(self);
    const auto slot = me.slot_of(stream_id);
    if (slot < 0) return 0;
    stream_state& s = me.streams_[static_cast<std::size_t>(slot)];
    const stream_bytes bytes = s.bytes;
    stream_failure why = stream_failure::reset;
    if (code == NGHTTP2_REFUSED_STREAM) {
      why = me.goaway_ && stream_id > me.goaway_last_ ? stream_failure::goaway
                                                      : stream_failure::refused;
    } else if (code == NGHTTP2_NO_ERROR) {
      why = stream_failure::closed;
    }
    me.detach(s);
    if (me.sink_) me.sink_->on_stream_failed(static_cast<std::uint32_t>(slot), why, code, bytes);
    return 0;
  }

  static ssize_t read_body(nghttp2_session*, std::int32_t stream_id, std::uint8_t* buffer,
                           std::size_t length, std::uint32_t* flags, nghttp2_data_source* source,
                           void*) {
    auto& s = *static_cast<stream_state*>(source->ptr);
    // The slot was given up (a timeout) and may carry another stream now.
    if (s.id != stream_id) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    const std::size_t n = std::min(length, s.body.size());
    std::memcpy(buffer, s.body.data(), n);
    s.body.remove_prefix(n);
    if (s.body.empty()) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }

  h2_options options_;
  nghttp2_session_callbacks* callbacks_ = nullptr;
  nghttp2_option* option_ = nullptr;
  nghttp2_session* session_ = nullptr;
  std::vector<stream_state> streams_;
  codec_sink* sink_ = nullptr;  // during feed()
  std::string out_;
  std::size_t out_at_ = 0;
  std::string scratch_;
  std::vector<nghttp2_nv> nv_;
  std::string last_request_;                 // the request nv_ was made from
  std::size_t body_at_ = std::string::npos;  // where its body starts; npos: not a request
  std::uint32_t capacity_ = 0;
  bool settled_ = false;
  bool goaway_ = false;
  bool broken_ = false;
  std::int32_t goaway_last_ = 0;
};

void h2_codec::set_callbacks() noexcept {
  nghttp2_session_callbacks_set_on_begin_frame_callback(callbacks_, on_begin_frame);
  nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks_, on_begin_headers);
  nghttp2_session_callbacks_set_on_header_callback(callbacks_, on_header);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks_, on_data_chunk);
  nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks_, on_frame_recv);
  nghttp2_session_callbacks_set_on_frame_send_callback(callbacks_, on_frame_send);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks_, on_stream_close);
}

}  // namespace

std::unique_ptr<codec> make_h2_codec(const h2_options& options, std::uint32_t slots) {
  return std::make_unique<h2_codec>(options, slots);
}

}  // namespace punctual::http
