// `punctual merge`: interval logs merged interval by interval into one.
#pragma once

#include <string>
#include <vector>

namespace punctual::cli {

struct merge_command_options {
  std::vector<std::string> inputs;
  std::string output;
  double unit_ratio = 0;  // 0: inferred from the inputs' max column
  double tolerance_ms = 1.0;
};

int merge_command(const merge_command_options& o);

}  // namespace punctual::cli
