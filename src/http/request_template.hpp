// A request that names per-user variables, {{name}}, in its path, headers or body (a scenario
// step's csv columns and captures, docs/scenario.md). Compiled once into literal pieces and
// references; rendered per request into a buffer the caller reuses, so that, once the buffer
// has grown to the largest request, rendering allocates nothing.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace punctual::http {

class request_template {
 public:
  // `head`: the encoded request up to its headers' end, without Content-Length and the blank line
  // (encode_request_head); `body` as given. `variables` are the names a reference may use. The
  // error names the first reference that is undefined or malformed.
  static std::variant<request_template, std::string> compile(
      std::string_view head, std::string_view body, bool implies_body,
      const std::vector<std::string>& variables);

  bool has_references() const noexcept { return references_ > 0; }
  // The request for these values (indexed like `variables`), replacing `out`'s contents.
  void render(const std::vector<std::string>& values, std::string& out) const;

 private:
  struct piece {
    std::string literal;  // var < 0
    int var = -1;         // an index into the variables
  };
  static std::string split(std::string_view text, const std::vector<std::string>& variables,
                           std::vector<piece>& out, std::size_t& references);

  std::vector<piece> head_;
  std::vector<piece> body_;
  bool implies_body_ = false;
  std::size_t references_ = 0;
};

// Whether `text` holds a "{{" (a template's mark); texts without one are sent as they are.
inline bool has_template_mark(std::string_view text) noexcept {
  return text.find("{{") != std::string_view::npos;
}

}  // namespace punctual::http
