// A text a response body must contain (a scenario step's expect_body_contains), found across any
// split of the body without keeping any of it: Knuth-Morris-Pratt, one small state per response.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace punctual::http {

class body_needle {
 public:
  explicit body_needle(std::string text);  // not empty

  // The state after `n` more body bytes, from `state` (0 at the body's start). Once the text
  // has been found the state stays found.
  std::uint32_t advance(std::uint32_t state, const char* p, std::size_t n) const noexcept;
  bool found(std::uint32_t state) const noexcept { return state == text_.size(); }
  const std::string& text() const noexcept { return text_; }

 private:
  std::string text_;
  std::vector<std::uint32_t> fallback_;  // per matched length: the longest proper border
};

}  // namespace punctual::http
