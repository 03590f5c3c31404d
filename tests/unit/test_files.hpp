// Files for the unit tests: the golden HdrHistogram files in tests/data/hdrhistogram, and folders
// for the files a test writes.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
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

// A folder of its own for files a test writes, removed at the end of the test.
class temp_dir {
 public:
  temp_dir()
      : path_(
            std::filesystem::temp_directory_path() /
            ("punctual-unit-test-" + std::to_string(::getpid()) + "-" + std::to_string(++made_))) {
    std::filesystem::create_directories(path_);
  }
  ~temp_dir() { std::filesystem::remove_all(path_); }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  std::string write(const std::string& name, const std::string& text) const {
    const auto file = path_ / name;
    std::ofstream(file, std::ios::binary) << text;
    return file.string();
  }

 private:
  static inline int made_ = 0;
  std::filesystem::path path_;
};

}  // namespace punctual::test
