// The one quoting function and the one token-character check that the request builder, the URL
// parser, the response parser and the test server's request reader all share.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <string_view>

#include "http/text.hpp"

namespace {

using punctual::http::is_token_char;
using punctual::http::quoted;

// RFC 9110 section 5.6.2 defines tokens the other way round from the code: any VCHAR
// (0x21-0x7e) that is not one of the delimiters DQUOTE and "(),/:;<=>?@[\]{}".
bool rfc9110_tchar(int byte) {
  if (byte < 0x21 || byte > 0x7e) return false;
  return std::string_view{"\"(),/:;<=>?@[\\]{}"}.find(static_cast<char>(byte)) ==
         std::string_view::npos;
}

TEST(http_text, token_chars_are_exactly_rfc9110s) {
  int accepted = 0;
  for (int byte = 0; byte < 256; ++byte) {
    EXPECT_EQ(is_token_char(static_cast<char>(byte)), rfc9110_tchar(byte)) << "byte " << byte;
    accepted += is_token_char(static_cast<char>(byte));
  }
  EXPECT_EQ(accepted, 26 + 26 + 10 + 15);  // ALPHA, DIGIT and the 15 listed symbols
}

TEST(http_text, quoted_keeps_printable_ascii) {
  EXPECT_EQ(quoted(""), "''");
  EXPECT_EQ(quoted("GET /a?b=c d"), "'GET /a?b=c d'");
  EXPECT_EQ(quoted(" ~"), "' ~'");  // 0x20 and 0x7e, the ends of the printable range
}

TEST(http_text, quoted_escapes_control_del_and_non_ascii_bytes) {
  EXPECT_EQ(quoted("a\r\nb"), "'a\\x0d\\x0ab'");
  EXPECT_EQ(quoted(std::string_view{"\0", 1}), "'\\x00'");
  EXPECT_EQ(quoted("\x1f"), "'\\x1f'");
  EXPECT_EQ(quoted("\x7f"), "'\\x7f'");
  EXPECT_EQ(quoted("\x80"), "'\\x80'");
  EXPECT_EQ(quoted("caf\xc3\xa9"), "'caf\\xc3\\xa9'");
  EXPECT_EQ(quoted("\xff"), "'\\xff'");
}

TEST(http_text, quoted_output_is_always_one_printable_ascii_line) {
  for (int byte = 0; byte < 256; ++byte) {
    const std::string out = punctual::http::quoted(std::string(1, static_cast<char>(byte)));
    for (const char c : out) {
      const auto u = static_cast<unsigned char>(c);
      ASSERT_TRUE(u >= 0x20 && u < 0x7f) << "byte " << byte << " gave " << static_cast<int>(u);
    }
    const bool printable = byte >= 0x20 && byte < 0x7f;
    char escaped[8];
    std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned>(byte));
    EXPECT_EQ(
        out,
        "'" + (printable ? std::string(1, static_cast<char>(byte)) : std::string(escaped)) + "'")
        << "byte " << byte;
  }
}

}  // namespace
