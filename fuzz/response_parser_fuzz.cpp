// Feeds arbitrary bytes as a stream of pipelined responses twice: once whole, once cut at split
// points chosen by the input's first bytes. Both runs must see exactly the same responses, and
// every result must respect the parser's contract; anything else aborts.
//
// Input layout: [flags] [n] [n split sizes] [payload...]
//   flags bit 0: the first response answers a HEAD request; bit 1: the peer closes at the end;
//   bit 2: every response's body is searched for "ok" (expect_body_contains), and the three
//   feedings must agree on whether each body held it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fuzz_check.hpp"
#include "http/response_parser.hpp"

namespace {

using punctual::http::parse_error;
using punctual::http::parse_status;
using punctual::http::response_parser;

struct event {
  parse_status status;
  parse_error error;
  int code;
  bool keep_alive;
  std::uint64_t body;
  bool body_found;
  std::size_t end_offset;  // stream offset just after the response (or the error)

  bool operator==(const event&) const = default;
};

using punctual::fuzz::check;

const punctual::http::body_needle needle("ok");

std::vector<event> run(const std::uint8_t* data, std::size_t size,
                       const std::vector<std::size_t>& pieces, bool head, bool eof, bool search) {
  response_parser parser;
  const punctual::http::body_needle* n = search ? &needle : nullptr;
  parser.reset(head, n);
  std::vector<event> events;
  std::size_t offset = 0;
  std::size_t piece_index = 0;
  bool open = true;
  while (open && offset < size) {
    const std::size_t piece = pieces.empty() ? size : pieces[piece_index++ % pieces.size()];
    const std::size_t end = std::min(size, offset + piece);
    while (open && offset < end) {
      const auto* chunk = reinterpret_cast<const char*>(data + offset);
      const auto r = parser.feed(chunk, end - offset);
      check(r.consumed <= end - offset);
      offset += r.consumed;
      if (r.status == parse_status::need_more) {
        check(offset == end);
        check(parser.started());
        continue;
      }
      events.push_back({r.status, parser.error(), parser.status_code(), parser.keep_alive(),
                        parser.body_bytes(), parser.body_found(), offset});
      check((r.status == parse_status::error) == (parser.error() != parse_error::none));
      if (r.status == parse_status::complete) {
        check(parser.status_code() >= 100 && parser.status_code() <= 599);
        // A finished parser consumes nothing more until reset.
        check(parser.feed(chunk, 1).consumed == 0);
      }
      if (r.status == parse_status::error || !parser.keep_alive())
        open = false;
      else
        parser.reset(false, n);
    }
  }
  if (open && eof) {
    const parse_status s = parser.finish_on_eof();
    events.push_back({s, parser.error(), parser.status_code(), parser.keep_alive(),
                      parser.body_bytes(), parser.body_found(), offset});
  }
  return events;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::uint8_t flags = data[0];
  const std::size_t n = data[1] % 16;
  if (size < 2 + n) return 0;
  std::vector<std::size_t> pieces;
  for (std::size_t i = 0; i < n; ++i) pieces.push_back(1 + data[2 + i] % 64);
  const std::uint8_t* payload = data + 2 + n;
  const std::size_t payload_size = size - 2 - n;
  const bool head = flags & 1;
  const bool eof = flags & 2;
  const bool search = flags & 4;

  const auto whole = run(payload, payload_size, {}, head, eof, search);
  const auto split = run(payload, payload_size, pieces, head, eof, search);
  const auto bytewise = run(payload, payload_size, {1}, head, eof, search);
  check(whole == split);
  check(whole == bytewise);
  return 0;
}
