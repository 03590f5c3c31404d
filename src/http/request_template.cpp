#include "http/request_template.hpp"

#include <algorithm>
#include <charconv>

#include "http/text.hpp"

namespace punctual::http {
namespace {

bool is_name_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

}  // namespace

std::string request_template::split(std::string_view text,
                                    const std::vector<std::string>& variables,
                                    std::vector<piece>& out, std::size_t& references) {
  std::size_t at = 0;
  while (at < text.size()) {
    const auto open = text.find("{{", at);
    if (open == std::string_view::npos) {
      out.push_back({std::string(text.substr(at)), -1});
      break;
    }
    if (open > at) out.push_back({std::string(text.substr(at, open - at)), -1});
    const auto close = text.find("}}", open + 2);
    if (close == std::string_view::npos)
      return "'" + std::string(text.substr(open, 20)) + "' is not closed by }}";
    const std::string_view name = trim_ows(text.substr(open + 2, close - open - 2));
    if (name.empty() || !std::all_of(name.begin(), name.end(), is_name_char)) {
      return "'{{" + std::string(text.substr(open + 2, close - open - 2)) + "}}' is not {{name}}";
    }
    const auto it = std::find(variables.begin(), variables.end(), name);
    if (it == variables.end()) {
      return "{{" + std::string(name) + "}} is not defined (neither a csv column nor a capture)";
    }
    out.push_back({{}, static_cast<int>(it - variables.begin())});
    ++references;
    at = close + 2;
  }
  return {};
}

std::variant<request_template, std::string> request_template::compile(
    std::string_view head, std::string_view body, bool implies_body,
    const std::vector<std::string>& variables) {
  request_template t;
  t.implies_body_ = implies_body;
  if (auto e = split(head, variables, t.head_, t.references_); !e.empty()) return e;
  if (auto e = split(body, variables, t.body_, t.references_); !e.empty()) return e;
  return t;
}

void request_template::render(const std::vector<std::string>& values, std::string& out) const {
  const auto text = [&](const piece& p) -> const std::string& {
    static const std::string none;
    return p.var < 0 ? p.literal
                     : (static_cast<std::size_t>(p.var) < values.size() ? values[p.var] : none);
  };
  out.clear();
  for (const auto& p : head_) out += text(p);
  std::size_t body_size = 0;
  for (const auto& p : body_) body_size += text(p).size();
  if (body_size > 0 || implies_body_) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof(digits), body_size).ptr;
    out.append("Content-Length: ").append(digits, end).append("\r\n");
  }
  out.append("\r\n");
  for (const auto& p : body_) out += text(p);
}

}  // namespace punctual::http
