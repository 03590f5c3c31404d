// Makes each connection's codecs, as the run's --http asks: HTTP/1.1, HTTP/2, or both (the
// server chooses by ALPN at each set-up). A part of the engine's like the transport factory, so
// a test can put codecs of its own in their place.
#pragma once

#include <cstdint>
#include <memory>

#include "http/codec.hpp"
#include "http/h2_memory.hpp"

namespace punctual::http {

// The codecs one connection may speak; either may be missing, not both.
struct codec_set {
  std::unique_ptr<codec> http1;
  std::unique_ptr<codec> h2;
};

class codec_factory {
 public:
  virtual ~codec_factory() = default;
  // `streams`: the requests an HTTP/2 connection carries at once. `memory`: where its HTTP/2
  // session allocates (the worker's pool).
  virtual codec_set make(std::uint32_t streams, h2_memory& memory) const = 0;
};

// `tls`: HTTP/2 requests say :scheme https.
std::unique_ptr<codec_factory> make_codec_factory(bool http1, bool h2, bool tls);

}  // namespace punctual::http
