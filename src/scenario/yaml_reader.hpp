// Reading punctual's YAML files (request mixes, scenarios) strictly: every problem is one line
// naming the file, the line and the key, and nothing a file says is ever ignored.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>

#include "scenario/load_error.hpp"

namespace punctual::scenario {

class yaml_reader {
 public:
  explicit yaml_reader(std::string file) : file_(std::move(file)) {}

  // Parses one YAML document. Anchors and aliases are refused (an alias bomb expands
  // exponentially in whatever walks it); so are an empty document and a text over
  // max_file_bytes.
  YAML::Node parse(std::string_view text) const;
  // The text of the file this reader is named after (refused over max_file_bytes).
  std::string read_file() const;

  // Runs `walk` over a parsed document: an exception yaml-cpp throws on the way (an invalid node,
  // a bad conversion) becomes this reader's one-line load_error instead of escaping.
  template <class F>
  auto guarded(F&& walk) const {
    try {
      return walk();
    } catch (const YAML::Exception& e) {
      fail_at(e.mark.line + 1, "yaml", e.msg);
    }
  }

  [[noreturn]] void fail(const YAML::Node& at, std::string_view key, std::string_view what) const;
  [[noreturn]] void fail_at(int line, std::string_view key, std::string_view what) const;

  // A mapping whose keys are all among `allowed`.
  void expect_map(const YAML::Node& node, std::string_view key,
                  std::initializer_list<std::string_view> allowed) const;
  void expect_sequence(const YAML::Node& node, std::string_view key) const;
  std::string text(const YAML::Node& node, std::string_view key) const;
  double number(const YAML::Node& node, std::string_view key) const;
  bool boolean(const YAML::Node& node, std::string_view key) const;

  static int line_of(const YAML::Node& node) { return node.Mark().line + 1; }
  const std::string& file() const noexcept { return file_; }

 private:
  std::string file_;
};

}  // namespace punctual::scenario
