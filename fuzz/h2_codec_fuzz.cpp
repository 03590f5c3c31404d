// Feeds arbitrary server bytes into the client's HTTP/2 codec (the codec seam the engine uses),
// after it has begun a few requests, cut into pieces the input chooses. Whatever the server
// sends, the codec must report only slots it was given, end each request at most once (a
// response or a failure), report nothing for a request it was told to cancel, keep its output
// flowing, and leave no request unreported when the peer closes.
//
// Input layout: [flags] [n] [n piece sizes] [server bytes...]
//   flags bits 0-2: how many requests to begin (1..8); bit 3: request 0 is a POST with a body;
//   bit 4: cancel request 1 after the first piece; bit 5: the peer closes at the end.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_check.hpp"
#include "http/h2_codec.hpp"

namespace {

using namespace punctual::http;
using punctual::fuzz::check;

constexpr std::uint32_t slots = 8;
const std::string get = "GET /x HTTP/1.1\r\nHost: localhost\r\nUser-Agent: fuzz\r\n\r\n";
const std::string post =
    "POST /x HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nX-A: b\r\n\r\nhello";
const body_needle needle("ok");

struct tally final : codec_sink {
  std::vector<int> ended = std::vector<int>(slots, 0);
  std::vector<int> begun = std::vector<int>(slots, 0);
  std::vector<int> cancelled = std::vector<int>(slots, 0);
  bool broken = false;

  void seen(std::uint32_t slot) { check(slot < slots && begun[slot] && !cancelled[slot]); }
  void on_first_byte(std::uint32_t slot) override { seen(slot); }
  void on_response(std::uint32_t slot, const response_end& r, const stream_bytes& b) override {
    seen(slot);
    check(++ended[slot] == 1);
    check(r.status >= 200 && r.status <= 999);
    check(b.received >= 9);
  }
  void on_stream_failed(std::uint32_t slot, stream_failure, std::uint32_t,
                        const stream_bytes&) override {
    seen(slot);
    check(++ended[slot] == 1);
  }
  void on_protocol_error(parse_error e) override {
    check(e == parse_error::h2_protocol);
    broken = true;
  }
};

void drain(codec& c) {
  for (int i = 0; i < 1000; ++i) {
    const std::string_view out = c.output();
    if (out.empty()) return;
    c.wrote(out.size());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::uint8_t flags = data[0];
  const std::size_t pieces = std::min<std::size_t>(data[1], size - 2);
  std::vector<std::size_t> cuts(data + 2, data + 2 + pieces);
  const char* bytes = reinterpret_cast<const char*>(data + 2 + pieces);
  std::size_t left = size - 2 - pieces;

  h2_memory memory;
  auto codec = make_h2_codec({false, &memory}, slots);
  codec->connected();
  tally t;
  std::vector<std::string> keep(slots);
  const std::uint32_t n = (flags & 7) + 1;
  for (std::uint32_t i = 0; i < n; ++i) {
    const bool body = i == 0 && (flags & 8);
    check(codec->begin(i, {body ? post : get, false, &needle, i == 2 ? &keep[i] : nullptr}));
    t.begun[i] = 1;
  }
  drain(*codec);
  bool first = true;
  for (std::size_t k = 0; left > 0 && !t.broken; ++k) {
    const std::size_t piece =
        k < cuts.size() && cuts[k] ? std::min<std::size_t>(cuts[k], left) : left;
    const std::size_t used = codec->feed(bytes, piece, t);
    check(used <= piece);
    if (used < piece) break;
    bytes += piece;
    left -= piece;
    drain(*codec);
    if (first && (flags & 16) && n > 1 && !t.ended[1]) {
      codec->cancel(1);
      t.cancelled[1] = 1;
      drain(*codec);
    }
    first = false;
    check(codec->capacity() <= slots);
    check(keep[2].size() <= codec::max_kept_response);
  }
  if ((flags & 32) && !t.broken) {
    codec->finish_on_eof(t);
    for (std::uint32_t i = 0; i < n; ++i) check(t.ended[i] == 1 || t.cancelled[i]);
  }
  return 0;
}
