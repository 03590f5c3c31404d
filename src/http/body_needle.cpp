#include "http/body_needle.hpp"

#include <stdexcept>

namespace punctual::http {

body_needle::body_needle(std::string text)
    : text_(std::move(text)), fallback_(text_.size() + 1, 0) {
  if (text_.empty()) throw std::invalid_argument("body_needle: empty text");
  // fallback_[k]: the length of the longest proper prefix of text_[0, k) that is also its suffix.
  std::uint32_t k = 0;
  for (std::size_t i = 1; i < text_.size(); ++i) {
    while (k > 0 && text_[i] != text_[k]) k = fallback_[k];
    if (text_[i] == text_[k]) ++k;
    fallback_[i + 1] = k;
  }
}

std::uint32_t body_needle::advance(std::uint32_t state, const char* p,
                                   std::size_t n) const noexcept {
  const auto size = static_cast<std::uint32_t>(text_.size());
  for (std::size_t i = 0; i < n && state < size; ++i) {
    while (state > 0 && p[i] != text_[state]) state = fallback_[state];
    if (p[i] == text_[state]) ++state;
  }
  return state;
}

}  // namespace punctual::http
