// Where the request for each planned request comes from. The engine asks for schedule index i
// (a retry asks again for its own i) and writes the bytes it gets; a weighted mix of requests or
// a user's next step is another source, not a change to the worker.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace punctual::engine {

// A request as it goes on the wire. The bytes stay valid for the whole run.
struct wire_request {
  std::string_view bytes;
  bool head = false;  // a HEAD request: its response has no body
};

class request_source {
 public:
  virtual ~request_source() = default;
  virtual wire_request request_for(std::uint64_t index) const noexcept = 0;
};

// The same request every time.
class fixed_request final : public request_source {
 public:
  fixed_request(std::string bytes, bool head) : bytes_(std::move(bytes)), head_(head) {}
  wire_request request_for(std::uint64_t) const noexcept override { return {bytes_, head_}; }

 private:
  std::string bytes_;
  bool head_;
};

}  // namespace punctual::engine
