// The parser is on the hot path: parsing a response must never touch the heap. Every global
// allocation in this process is counted, and the count must not move while responses are parsed.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

#include "http/response_parser.hpp"

namespace {
std::atomic<long> allocations{0};
}

// g++ 12 inlines these replacements into gtest's `new TestClass` and then misreads malloc/free
// pairs as mismatched; the pairing is right, so that one warning is silenced here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

void* operator new(std::size_t size) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc{};
}
void* operator new[](std::size_t size) {
  return operator new(size);
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size == 0 ? 1 : size);
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept {
  return operator new(size, tag);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}

namespace {

using punctual::http::parse_status;
using punctual::http::response_parser;

TEST(response_parser_alloc, counter_sees_allocations) {
  // Guards against a counter that silently counts nothing, which would make the test vacuous.
  const long before = allocations.load();
  // A direct call, not a new-expression, so the compiler may not elide it.
  void* volatile p = ::operator new(64);
  ::operator delete(p);
  EXPECT_GT(allocations.load(), before);
}

TEST(response_parser_alloc, ten_thousand_keep_alive_responses_allocate_nothing) {
  // Built before counting starts: one stream of pipelined responses, as a connection sees them.
  const std::string by_length =
      "HTTP/1.1 200 OK\r\nServer: test\r\nContent-Type: text/plain\r\nContent-Length: "
      "12\r\n\r\nhello world!";
  const std::string chunked =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n"
      "5;ext=1\r\nhello\r\n7\r\n world!\r\n0\r\nX-Trailer: t\r\n\r\n";
  std::string stream;
  for (int i = 0; i < 5000; ++i) stream += by_length + chunked;

  response_parser parser;
  const long before = allocations.load();
  int completed = 0;
  std::uint64_t body = 0;
  std::size_t offset = 0;
  const std::size_t piece = 7;  // odd feeds, so state crosses every kind of boundary
  while (offset < stream.size()) {
    const std::size_t n = std::min(piece, stream.size() - offset);
    const auto r = parser.feed(stream.data() + offset, n);
    offset += r.consumed;
    ASSERT_NE(r.status, parse_status::error);
    if (r.status == parse_status::complete) {
      ++completed;
      body += parser.body_bytes();
      if (!parser.keep_alive() || parser.status_code() != 200) break;
      parser.reset();
    }
  }
  const long after = allocations.load();
  EXPECT_EQ(completed, 10000);
  EXPECT_EQ(body, 10000u * 12u);
  EXPECT_EQ(after - before, 0) << "allocations while parsing";
}

}  // namespace
