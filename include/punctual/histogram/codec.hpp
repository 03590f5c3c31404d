// V2 encoding (spec section 3): uncompressed, zlib-compressed and base64 forms.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "punctual/histogram/histogram.hpp"

namespace punctual::hdr {

enum class decode_error {
  none,
  truncated,
  bad_cookie,
  bad_leb128,
  bad_zlib,
  length_mismatch,
  slot_out_of_range,
  bad_run,
  negative_count,
  bad_parameters,
  bad_base64,
};

std::string_view to_string(decode_error error) noexcept;

struct decode_result {
  std::optional<histogram> value;
  decode_error error = decode_error::none;
  explicit operator bool() const noexcept { return error == decode_error::none; }
};

// Writers emit normalizingIndexOffset 0 and a conversion ratio of 1.0, as Java does.
std::vector<std::uint8_t> encode_uncompressed(const histogram& h);
std::vector<std::uint8_t> encode_compressed(const histogram& h, int zlib_level = 9);
std::string encode_compressed_base64(const histogram& h, int zlib_level = 9);

// Readers accept Java-, C- and JS-written payloads; they never throw on bad input.
decode_result decode_uncompressed(std::span<const std::uint8_t> bytes);
decode_result decode_compressed(std::span<const std::uint8_t> bytes);
decode_result decode_compressed_base64(std::string_view text);

std::string base64_encode(std::span<const std::uint8_t> bytes);
// Standard alphabet, padding required. Returns false on any malformed input.
bool base64_decode(std::string_view text, std::vector<std::uint8_t>& out);

}  // namespace punctual::hdr
