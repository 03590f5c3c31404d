// Captures by JSON Pointer on arbitrary documents and pointers. Input: [n] [n bytes of pointer]
// [document]. No input may crash or hang it; a miss writes nothing; an answer is stable; and a
// value found as a string sits, encoded, inside the document.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "http/json_pointer.hpp"

using punctual::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::size_t n = data[0] % 32;
  if (size < 1 + n) return 0;
  const std::string_view pointer(reinterpret_cast<const char*>(data + 1), n);
  const std::string_view json(reinterpret_cast<const char*>(data + 1 + n), size - 1 - n);
  if (!punctual::http::valid_json_pointer(pointer)) return 0;
  std::string out = "untouched";
  const bool found = punctual::http::json_pointer_value(json, pointer, out);
  if (!found) {
    check(out == "untouched");
    return 0;
  }
  std::string again;
  check(punctual::http::json_pointer_value(json, pointer, again) && again == out);
  return 0;
}
