// What the server's tests send and how they read the clock, defined once for their files.
#pragma once

#include <chrono>
#include <string>

namespace punctual::server::test_support {

inline const std::string get = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";

inline std::chrono::nanoseconds mono_now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::steady_clock::now().time_since_epoch());
}

}  // namespace punctual::server::test_support
