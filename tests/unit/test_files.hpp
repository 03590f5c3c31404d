// Shared by the tests that read the golden HdrHistogram files in tests/data/hdrhistogram.
#pragma once

#include <gtest/gtest.h>

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

// A golden file's text; an empty or missing file fails the test that reads it.
inline std::string read_text(const std::string& name) {
  const std::string text = read_file(golden_dir + name);
  EXPECT_FALSE(text.empty()) << name;
  return text;
}

}  // namespace punctual::test
