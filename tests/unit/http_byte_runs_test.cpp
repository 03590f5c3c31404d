// The parser's byte runs against their byte-wise definitions: every byte value at every position
// around the 16-byte blocks the vector paths take.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "http/byte_runs.hpp"
#include "http/text.hpp"

namespace punctual::http::runs {
namespace {

template <typename Pred>
std::size_t reference_run(const std::string& s, Pred is_in) {
  std::size_t j = 0;
  while (j < s.size() && is_in(s[j])) ++j;
  return j;
}

// A run of `filler` with byte `c` at `at`, for every byte value and every position of a
// 48-byte buffer, and every shorter length: what the run reports must be the byte-wise count.
template <typename Run, typename Pred>
void check_every_byte_everywhere(char filler, Run run, Pred is_in) {
  for (int c = 0; c < 256; ++c) {
    for (std::size_t at = 0; at < 48; ++at) {
      std::string s(48, filler);
      s[at] = static_cast<char>(c);
      for (std::size_t n = at; n <= s.size(); n += 7) {
        const std::string prefix = s.substr(0, n);
        ASSERT_EQ(run(prefix.data(), prefix.size()), reference_run(prefix, is_in))
            << "byte " << c << " at " << at << " of " << n;
      }
    }
  }
}

TEST(byte_runs, token_run_is_the_bytewise_token_count) {
  check_every_byte_everywhere('a', token_run, is_token_char);
  check_every_byte_everywhere('Z', token_run, is_token_char);
  check_every_byte_everywhere('-', token_run, is_token_char);
  check_every_byte_everywhere('~', token_run, is_token_char);  // a token byte the vectors defer
}

TEST(byte_runs, token_run_takes_whole_names) {
  const std::string head = "Content-Length: 5\r\n";
  EXPECT_EQ(token_run(head.data(), head.size()), 14u);
  const std::string odd = "X-Weird!#$%&'*+.^_`|~Name-0123456789: v";
  EXPECT_EQ(token_run(odd.data(), odd.size()), odd.find(':'));
}

TEST(byte_runs, field_run_is_the_bytewise_field_count) {
  check_every_byte_everywhere('v', field_run, is_field);
  check_every_byte_everywhere('\t', field_run, is_field);
}

}  // namespace
}  // namespace punctual::http::runs
