// Byte classes and runs of them for the response parser's fast paths. Internal to src/http.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "http/text.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace punctual::http::runs {

inline constexpr std::string_view version_literal = "HTTP/1.";

// Bytes allowed inside a reason phrase or field value: HTAB, SP, VCHAR and obs-text.
constexpr std::array<bool, 256> make_field_table() {
  std::array<bool, 256> table{};
  for (int c = 0x20; c < 256; ++c) table[c] = c != 0x7f;
  table['\t'] = true;
  return table;
}
inline constexpr std::array<bool, 256> field_table = make_field_table();

inline bool is_field(char c) noexcept {
  return field_table[static_cast<unsigned char>(c)];
}
inline bool is_token(char c) noexcept {
  return is_token_char(c);
}
inline bool is_digit(char c) noexcept {
  return c >= '0' && c <= '9';
}
inline bool is_space(char c) noexcept {
  return c == ' ' || c == '\t';
}
inline char to_lower(char c) noexcept {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
}

// The length of the leading run of field bytes. Values are most of a header section's bytes,
// so where SSE2 exists this checks 16 at a time: a byte is bad if it is below 0x20 and not
// HTAB, or is DEL.
inline std::size_t field_run(const char* p, std::size_t n) noexcept {
  std::size_t j = 0;
#if defined(__SSE2__)
  const __m128i below = _mm_set1_epi8(0x1f);
  const __m128i tab = _mm_set1_epi8('\t');
  const __m128i del = _mm_set1_epi8(0x7f);
  for (; j + 16 <= n; j += 16) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + j));
    const __m128i control = _mm_cmpeq_epi8(_mm_min_epu8(b, below), b);
    const __m128i bad =
        _mm_or_si128(_mm_andnot_si128(_mm_cmpeq_epi8(b, tab), control), _mm_cmpeq_epi8(b, del));
    if (const int mask = _mm_movemask_epi8(bad))
      return j + static_cast<std::size_t>(__builtin_ctz(mask));
  }
#endif
  while (j < n && is_field(p[j])) ++j;
  return j;
}

// The length of the leading run of token bytes. Every header name of every response comes
// through here: where SSE2 exists, 16 bytes at a time are checked for letters, digits and '-',
// which is nearly every name; at the first other byte the byte-wise loop takes over, so the
// rarer token bytes ("!#$%&'*+.^_`|~") cost nothing in the common case and stay exact.
inline std::size_t token_run(const char* p, std::size_t n) noexcept {
  std::size_t j = 0;
#if defined(__SSE2__)
  const __m128i case_bit = _mm_set1_epi8(0x20);
  const __m128i a = _mm_set1_epi8('a');
  const __m128i zero = _mm_set1_epi8('0');
  const __m128i dash = _mm_set1_epi8('-');
  const __m128i letters = _mm_set1_epi8(25);
  const __m128i digits = _mm_set1_epi8(9);
  for (; j + 16 <= n; j += 16) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + j));
    // Unsigned x <= limit as min(x, limit) == x; setting bit 5 lowercases exactly the letters
    // into 'a'..'z' (no other byte lands there).
    const __m128i from_a = _mm_sub_epi8(_mm_or_si128(b, case_bit), a);
    const __m128i from_0 = _mm_sub_epi8(b, zero);
    const __m128i alpha = _mm_cmpeq_epi8(_mm_min_epu8(from_a, letters), from_a);
    const __m128i digit = _mm_cmpeq_epi8(_mm_min_epu8(from_0, digits), from_0);
    const __m128i good = _mm_or_si128(_mm_or_si128(alpha, digit), _mm_cmpeq_epi8(b, dash));
    const int other = ~_mm_movemask_epi8(good) & 0xffff;
    if (other != 0) {
      j += static_cast<std::size_t>(__builtin_ctz(other));
      break;
    }
  }
#endif
  while (j < n && is_token(p[j])) ++j;
  return j;
}

// Equality of a header name or list token (token bytes only) with a lowercase literal of
// letters and '-': for token bytes, setting bit 5 lowercases a letter and maps nothing else
// onto one of those. Every header name of every response comes through here, hence words.
inline bool token_is(std::string_view name, std::string_view lowercase) noexcept {
  if (name.size() != lowercase.size()) return false;
  constexpr std::uint64_t lower = 0x2020202020202020;
  std::size_t k = 0;
  for (; k + 8 <= name.size(); k += 8) {
    std::uint64_t a = 0;
    std::uint64_t b = 0;
    std::memcpy(&a, name.data() + k, 8);
    std::memcpy(&b, lowercase.data() + k, 8);
    if ((a | lower) != b) return false;
  }
  for (; k < name.size(); ++k) {
    if ((name[k] | 0x20) != lowercase[k]) return false;
  }
  return true;
}

// The header names framing depends on; all others are "other".
enum class header_kind : std::uint8_t { other, content_length, transfer_encoding, connection };

inline header_kind kind_of(std::string_view name) noexcept {
  switch (name.size()) {
    case 10:
      return token_is(name, "connection") ? header_kind::connection : header_kind::other;
    case 14:
      return token_is(name, "content-length") ? header_kind::content_length : header_kind::other;
    case 17:
      return token_is(name, "transfer-encoding") ? header_kind::transfer_encoding
                                                 : header_kind::other;
    default:
      return header_kind::other;
  }
}

}  // namespace punctual::http::runs
