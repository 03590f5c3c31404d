// --requests FILE.yaml: a weighted list of named requests on the run's target. Each planned
// request of the open model draws one entry (docs/scenario.md).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "scenario/load_error.hpp"

namespace punctual::scenario {

// More names than this are refused: each name keeps its own latency views (docs/scenario.md).
inline constexpr std::size_t max_names = 200;

struct mix_entry {
  std::string name;
  std::string method = "GET";
  std::string target;                // a path ("/search?q=1") or a full URL on the run's origin
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
  double weight = 1;
  int line = 0;  // where the entry starts in its file, for errors found later
};

struct request_mix {
  std::string file;
  std::vector<mix_entry> entries;

  double total_weight() const noexcept;
};

// Parses a mix; `file` names it in errors and is where body_file paths are relative to.
// Throws load_error ("FILE:LINE: KEY: what") for anything it does not accept.
request_mix parse_request_mix(std::string_view text, const std::string& file);
request_mix load_request_mix(const std::string& file);

}  // namespace punctual::scenario
