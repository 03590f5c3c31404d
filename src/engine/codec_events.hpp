// What one feed of bytes (or the peer's close) did to a connection's requests, in order: the
// codec reports into it, and the worker acts once the codec has returned (acting inside the
// codec's callbacks could send on the connection the codec is still reading).
#pragma once

#include <cstdint>
#include <vector>

#include "http/codec.hpp"

namespace punctual::engine {

struct codec_event {
  enum class kind : std::uint8_t { first_byte, response, failed, protocol_error };
  kind what = kind::first_byte;
  std::uint32_t slot = 0;  // within the connection
  http::response_end response;
  http::stream_failure failure = http::stream_failure::reset;
  std::uint32_t code = 0;  // failed: the stream's error code
  http::stream_bytes bytes;
  http::parse_error error = http::parse_error::none;
};

class codec_events final : public http::codec_sink {
 public:
  // Room for every event of a read on a full HTTP/2 connection, so a read allocates nothing.
  explicit codec_events(std::size_t room = 0) { list.reserve(room); }

  void on_first_byte(std::uint32_t slot) override { add(codec_event::kind::first_byte, slot); }
  void on_response(std::uint32_t slot, const http::response_end& response,
                   const http::stream_bytes& bytes) override {
    add(codec_event::kind::response, slot, bytes).response = response;
  }
  void on_stream_failed(std::uint32_t slot, http::stream_failure why, std::uint32_t code,
                        const http::stream_bytes& bytes) override {
    codec_event& e = add(codec_event::kind::failed, slot, bytes);
    e.failure = why;
    e.code = code;
  }
  void on_protocol_error(http::parse_error error) override {
    add(codec_event::kind::protocol_error, 0).error = error;
  }

  std::vector<codec_event> list;

 private:
  codec_event& add(codec_event::kind what, std::uint32_t slot,
                   const http::stream_bytes& bytes = {}) {
    codec_event& e = list.emplace_back();
    e.what = what;
    e.slot = slot;
    e.bytes = bytes;
    return e;
  }
};

}  // namespace punctual::engine
