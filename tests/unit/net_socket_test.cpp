// Sockets' helpers that need no peer: growing the descriptor table ahead of a run.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "net/socket.hpp"

namespace punctual::net {
namespace {

// The size of this process's descriptor table, as the kernel reports it.
long fd_table_size() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("FDSize:", 0) == 0) return std::stol(line.substr(7));
  }
  return -1;
}

long open_descriptors() {
  return std::distance(std::filesystem::directory_iterator("/proc/self/fd"),
                       std::filesystem::directory_iterator{});
}

// Raises the soft open-file limit to the hard one, as punctual's main does; returns it.
rlim_t raised_limit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return 0;
  lim.rlim_cur = lim.rlim_max;
  setrlimit(RLIMIT_NOFILE, &lim);
  getrlimit(RLIMIT_NOFILE, &lim);
  return lim.rlim_cur;
}

TEST(reserve_descriptors, grows_the_table_without_opening_anything) {
  const rlim_t limit = raised_limit();
  const long before = fd_table_size();
  ASSERT_GT(before, 0);
  const auto wanted = static_cast<long>(std::min<rlim_t>(limit, 4 * before));
  ASSERT_GT(wanted, before) << "the open-file limit leaves no room to grow the table";
  const long open_before = open_descriptors();
  reserve_descriptors(static_cast<std::uint32_t>(wanted));
  EXPECT_GE(fd_table_size(), wanted);
  EXPECT_EQ(open_descriptors(), open_before);
}

TEST(reserve_descriptors, leaves_a_descriptor_in_use_at_the_top_alone) {
  const rlim_t limit = raised_limit();
  const auto wanted = static_cast<long>(std::min<rlim_t>(limit, 4 * fd_table_size()));
  const int kept = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, static_cast<int>(wanted - 1));
  ASSERT_EQ(kept, wanted - 1);
  const long open_before = open_descriptors();
  reserve_descriptors(static_cast<std::uint32_t>(wanted));
  EXPECT_EQ(open_descriptors(), open_before);
  EXPECT_NE(fcntl(kept, F_GETFD), -1);
  close(kept);
}

TEST(reserve_descriptors, asks_no_more_than_the_limit_allows) {
  rlimit lim{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &lim), 0);
  const long open_before = open_descriptors();
  reserve_descriptors(0);
  reserve_descriptors(2);
  reserve_descriptors(static_cast<std::uint32_t>(std::min<rlim_t>(lim.rlim_cur, 1u << 30)) + 1);
  EXPECT_EQ(open_descriptors(), open_before);
  EXPECT_LE(fd_table_size(), static_cast<long>(std::max<rlim_t>(lim.rlim_cur, 64)) * 2);
}

}  // namespace
}  // namespace punctual::net
