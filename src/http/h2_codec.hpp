// HTTP/2 as a codec (src/http/codec.hpp), on libnghttp2: a connection's slots are its streams.
#pragma once

#include <cstdint>
#include <memory>

#include "http/codec.hpp"
#include "http/h2_memory.hpp"

namespace punctual::http {

struct h2_options {
  bool tls = false;             // the requests' :scheme: https over TLS, else http (h2c)
  h2_memory* memory = nullptr;  // where the session allocates (null: the system allocator)
};

// A codec for one connection that carries at most `slots` streams at once.
std::unique_ptr<codec> make_h2_codec(const h2_options& options, std::uint32_t slots);

}  // namespace punctual::http
