// Kernel receive stamps: a read made long after the data arrived still learns when it arrived.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "net/clock.hpp"
#include "net/socket.hpp"

namespace punctual::net {
namespace {

using std::chrono::milliseconds;

// A connected TCP pair over 127.0.0.1: `client` is the generator's side.
struct tcp_pair {
  int client = -1;
  int server = -1;
  tcp_pair() {
    const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    EXPECT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(listen(listener, 1), 0);
    EXPECT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len), 0);
    client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    EXPECT_EQ(connect(client, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    server = accept(listener, nullptr, nullptr);
    EXPECT_GE(server, 0);
    close(listener);
  }
  ~tcp_pair() {
    close(client);
    close(server);
  }
};

void send_text(int fd, const char* text) {
  ASSERT_EQ(write(fd, text, std::strlen(text)), static_cast<ssize_t>(std::strlen(text)));
}

// The first socket to ask for stamps turns stamping on for the whole stack through deferred
// work; packets that arrive before that work has run carry no stamp (the engine then falls
// back to the read time).
void enable_and_settle(int fd) {
  ASSERT_TRUE(enable_receive_timestamps(fd));
  std::this_thread::sleep_for(milliseconds(50));
}

// Reads what waits on `fd` (expecting `bytes` of it) and returns its receive stamp on the
// monotonic clock; `read_at` gets the time of the read.
nanoseconds read_arrival(int fd, std::size_t bytes, nanoseconds& read_at) {
  char buf[64];
  nanoseconds stamp{};
  const io_result r = read_stamped(fd, buf, sizeof buf, stamp);
  read_at = mono_now();
  EXPECT_EQ(r.status, io_status::done);
  EXPECT_EQ(r.bytes, bytes);
  EXPECT_GT(stamp.count(), 0);
  realtime_to_mono to_mono;
  to_mono.refresh(net::system_clock());
  return to_mono(stamp);
}

TEST(receive_stamps, a_late_read_gets_the_arrival_time) {
  tcp_pair p;
  enable_and_settle(p.client);
  const nanoseconds written = mono_now();
  send_text(p.server, "hello");
  std::this_thread::sleep_for(milliseconds(20));
  nanoseconds read_at{};
  const nanoseconds arrived = read_arrival(p.client, 5, read_at);
  // Arrived just after the write (loopback), ~20 ms before the read.
  EXPECT_GE(arrived, written - milliseconds(1));
  EXPECT_LE(arrived, written + milliseconds(5));
  EXPECT_GE(read_at - arrived, milliseconds(15));
}

TEST(receive_stamps, one_read_of_two_packets_gets_the_later_stamp) {
  tcp_pair p;
  enable_and_settle(p.client);
  send_text(p.server, "first ");
  std::this_thread::sleep_for(milliseconds(20));
  const nanoseconds second_written = mono_now();
  send_text(p.server, "second");
  std::this_thread::sleep_for(milliseconds(20));
  nanoseconds read_at{};
  const nanoseconds arrived = read_arrival(p.client, 12, read_at);
  EXPECT_GE(arrived, second_written - milliseconds(1));
  EXPECT_LE(arrived, second_written + milliseconds(5));
}

TEST(receive_stamps, none_without_the_option_and_none_on_eof) {
  tcp_pair p;
  send_text(p.server, "x");
  char buf[8];
  nanoseconds stamp{1};
  EXPECT_EQ(read_stamped(p.client, buf, sizeof buf, stamp).status, io_status::done);
  EXPECT_EQ(stamp.count(), 0);
  shutdown(p.server, SHUT_WR);
  stamp = nanoseconds{1};
  EXPECT_EQ(read_stamped(p.client, buf, sizeof buf, stamp).status, io_status::closed);
  EXPECT_EQ(stamp.count(), 0);
}

}  // namespace
}  // namespace punctual::net
