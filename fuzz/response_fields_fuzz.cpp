// A capturing step's kept response on arbitrary bytes: looking up headers and de-chunking the
// body must never crash or read out of bounds, and a body it returns is never longer than the
// bytes it came from.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "http/response_fields.hpp"

using punctual::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view response(reinterpret_cast<const char*>(data), size);
  if (const auto v = punctual::http::response_header(response, "X-Token")) {
    check(v->data() >= response.data() &&
          v->data() + v->size() <= response.data() + response.size());
  }
  std::size_t cookies = 0;
  punctual::http::for_each_response_header(response, "set-cookie",
                                           [&](std::string_view) { ++cookies; });
  check(cookies <= size);
  std::string body;
  if (punctual::http::response_body(response, body)) check(body.size() <= size);
  return 0;
}
