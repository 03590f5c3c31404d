// Shared by the engine tests: a run configuration that GETs / from a server on 127.0.0.1.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "engine/config.hpp"
#include "http/request.hpp"

namespace punctual::test {

// 200-399 count as ok; threads, connections, duration and the rest are left at their defaults.
inline engine::run_config loopback_get(std::uint16_t port) {
  engine::run_config c;
  std::string error;
  EXPECT_TRUE(net::resolve("127.0.0.1", port, c.target, error)) << error;
  http::request_spec spec;
  spec.host = "127.0.0.1:" + std::to_string(port);
  c.request = http::encode_request(spec);
  for (int s = 200; s < 400; ++s) c.expected_status.set(static_cast<std::size_t>(s));
  return c;
}

}  // namespace punctual::test
