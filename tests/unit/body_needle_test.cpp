#include "http/body_needle.hpp"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <string>

namespace {

using punctual::http::body_needle;

// Feeds `body` in pieces cut by `rng` and says whether the needle found its text.
bool found_in_pieces(const body_needle& n, const std::string& body, std::mt19937& rng) {
  std::uint32_t state = 0;
  std::size_t at = 0;
  while (at < body.size()) {
    const std::size_t piece = std::uniform_int_distribution<std::size_t>(1, 7)(rng);
    const std::size_t take = std::min(piece, body.size() - at);
    state = n.advance(state, body.data() + at, take);
    at += take;
  }
  return n.found(state);
}

TEST(body_needle, finds_what_find_finds_at_any_split) {
  // Small alphabets make borders ("abab" in "ababab...") common: the cases KMP exists for.
  std::mt19937 rng(12345);
  const std::string alphabet = "ab";
  const auto text = [&](std::size_t max) {
    std::string s(std::uniform_int_distribution<std::size_t>(1, max)(rng), 'a');
    for (auto& c : s) c = alphabet[std::uniform_int_distribution<std::size_t>(0, 1)(rng)];
    return s;
  };
  int found = 0;
  for (int i = 0; i < 3000; ++i) {
    const std::string needle = text(6);
    const std::string body = text(40);
    const body_needle n(needle);
    const bool want = body.find(needle) != std::string::npos;
    ASSERT_EQ(found_in_pieces(n, body, rng), want) << "'" << needle << "' in '" << body << "'";
    found += want;
  }
  EXPECT_GT(found, 500);  // both answers were tried often
  EXPECT_LT(found, 2500);
}

TEST(body_needle, stays_found_and_refuses_empty) {
  const body_needle n("ok");
  const std::string body = "ok then more";
  std::uint32_t state = n.advance(0, body.data(), 2);
  EXPECT_TRUE(n.found(state));
  state = n.advance(state, body.data() + 2, body.size() - 2);
  EXPECT_TRUE(n.found(state));
  EXPECT_FALSE(n.found(n.advance(0, "o", 1)));
  EXPECT_THROW(body_needle(""), std::invalid_argument);
}

}  // namespace
