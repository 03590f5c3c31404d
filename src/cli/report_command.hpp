// `punctual report`: one stream of an HdrHistogram interval log, summarised.
#pragma once

#include <string>

namespace punctual::cli {

struct report_options {
  std::string file;
  std::string tag;
  std::string hgrm_out;
  std::string json_out;
  double unit_ratio = 1e6;
};

int report_command(const report_options& o);

}  // namespace punctual::cli
