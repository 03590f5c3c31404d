#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli/atomic_file.hpp"
#include "cli/command.hpp"
#include "test_files.hpp"

namespace punctual::cli {
namespace {

namespace fs = std::filesystem;

std::size_t files_in(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), {}));
}

// The .hlog of a long run is written interval by interval: readers see no file until the end,
// then the whole of it, and only it.
TEST(atomic_file_writer, pieces_appear_whole_at_commit_and_nowhere_before) {
  const test::temp_dir dir;
  const fs::path folder = fs::path(dir.write("other", "")).parent_path();
  const std::string target = (folder / "out.hlog").string();
  atomic_file_writer w(target);
  w.write("first\n");
  w.write("second\n");
  EXPECT_FALSE(fs::exists(target));
  EXPECT_EQ(files_in(folder), 2u);  // "other" and the temporary
  w.commit();
  EXPECT_EQ(test::read_file(target), "first\nsecond\n");
  EXPECT_EQ(files_in(folder), 2u);  // "other" and out.hlog
}

// A run that fails (or a writer dropped for any reason) leaves no file and no temporary.
TEST(atomic_file_writer, an_uncommitted_writer_leaves_nothing) {
  const test::temp_dir dir;
  const fs::path folder = fs::path(dir.write("other", "")).parent_path();
  {
    atomic_file_writer w((folder / "out.hlog").string());
    w.write("lost\n");
  }
  EXPECT_EQ(files_in(folder), 1u);
}

TEST(atomic_file_writer, a_place_it_cannot_write_is_refused_at_once) {
  EXPECT_THROW(atomic_file_writer("/nonexistent/dir/x.hlog"), run_error);
}

}  // namespace
}  // namespace punctual::cli
