// Shared by the tests that read the golden HdrHistogram files in tests/data/hdrhistogram.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace punctual::test {

inline const std::string golden_dir = std::string(PUNCTUAL_TEST_DATA) + "/hdrhistogram/";

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace punctual::test
