#include "scenario/yaml_reader.hpp"

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace punctual::scenario {
namespace {

// Refuses anchors and aliases while the parser reads the text, before any node is built.
class alias_guard final : public YAML::EventHandler {
 public:
  explicit alias_guard(const yaml_reader& r) : reader_(r) {}
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t a) override { check(a, m); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { refuse(m); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t a,
                const std::string&) override {
    check(a, m);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t a,
                       YAML::EmitterStyle::value) override {
    check(a, m);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t a,
                  YAML::EmitterStyle::value) override {
    check(a, m);
  }
  void OnMapEnd() override {}

 private:
  void check(YAML::anchor_t anchor, const YAML::Mark& m) const {
    if (anchor != YAML::NullAnchor) refuse(m);
  }
  [[noreturn]] void refuse(const YAML::Mark& m) const {
    reader_.fail_at(m.line + 1, "yaml", "anchors and aliases are not supported");
  }
  const yaml_reader& reader_;
};

}  // namespace

YAML::Node yaml_reader::parse(std::string_view text) const {
  if (text.size() > max_file_bytes) {
    fail_at(1, "file", "larger than 1 MiB (" + std::to_string(text.size()) + " bytes)");
  }
  const std::string copy(text);
  try {
    {
      std::istringstream in(copy);
      YAML::Parser parser(in);
      alias_guard guard(*this);
      parser.HandleNextDocument(guard);
      if (parser.HandleNextDocument(guard)) fail_at(1, "yaml", "more than one document");
    }
    YAML::Node root = YAML::Load(copy);
    if (!root || root.IsNull()) fail_at(1, "file", "is empty");
    return root;
  } catch (const YAML::Exception& e) {
    fail_at(e.mark.line + 1, "yaml", e.msg);
  }
}

std::string yaml_reader::read_file() const {
  std::ifstream in(file_, std::ios::binary);
  if (!in) fail_at(0, "file", "cannot be read");
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_file_bytes) fail_at(1, "file", "larger than 1 MiB");
  }
  return text;
}

void yaml_reader::fail(const YAML::Node& at, std::string_view key, std::string_view what) const {
  fail_at(line_of(at), key, what);
}

// The message quotes the file's own text (keys, names, values), which may hold any byte: control
// bytes are written as \xNN so that the message stays one line.
void yaml_reader::fail_at(int line, std::string_view key, std::string_view what) const {
  std::string where = file_;
  if (line > 0) where += ":" + std::to_string(line);
  const std::string raw = where + ": " + std::string(key) + ": " + std::string(what);
  std::string message;
  for (const char c : raw) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7f) {
      message += c;
      continue;
    }
    static constexpr char hex[] = "0123456789abcdef";
    message += {'\\', 'x', hex[u >> 4], hex[u & 15]};
  }
  throw load_error(message);
}

void yaml_reader::expect_map(const YAML::Node& node, std::string_view key,
                             std::initializer_list<std::string_view> allowed) const {
  if (!node.IsMap()) fail(node, key, "expected a mapping of keys to values");
  for (const auto& kv : node) {
    if (!kv.first.IsScalar()) fail(kv.first, key, "keys must be plain names");
    const std::string name = kv.first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string known;
      for (const auto a : allowed) known += (known.empty() ? "" : ", ") + std::string(a);
      fail(kv.first, name, "unknown key (expected one of: " + known + ")");
    }
  }
}

void yaml_reader::expect_sequence(const YAML::Node& node, std::string_view key) const {
  if (!node.IsSequence()) fail(node, key, "expected a list");
}

std::string yaml_reader::text(const YAML::Node& node, std::string_view key) const {
  if (!node.IsScalar()) fail(node, key, "expected a text value");
  return node.Scalar();
}

double yaml_reader::number(const YAML::Node& node, std::string_view key) const {
  const std::string s = text(node, key);
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != s.size() || !std::isfinite(v)) {
    fail(node, key, "'" + s + "' is not a number");
  }
  return v;
}

bool yaml_reader::boolean(const YAML::Node& node, std::string_view key) const {
  const std::string s = text(node, key);
  if (s == "true") return true;
  if (s == "false") return false;
  fail(node, key, "'" + s + "' is not true or false");
}

bool valid_name(std::string_view name) noexcept {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

}  // namespace punctual::scenario
