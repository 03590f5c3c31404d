// Cost of parsing one response: the parser runs on every response, on the worker's hot path.
// The keep-alive case is byte for byte what the bench's nginx sends.
#include <benchmark/benchmark.h>

#include <string_view>

#include "http/response_parser.hpp"

namespace {

using punctual::http::parse_status;
using punctual::http::response_parser;

constexpr std::string_view nginx_keep_alive =
    "HTTP/1.1 200 OK\r\nServer: nginx\r\nDate: Sun, 29 Nov 2026 20:58:26 GMT\r\n"
    "Content-Type: text/plain\r\nContent-Length: 26\r\nConnection: keep-alive\r\n\r\n"
    "hello from punctual bench\n";

constexpr std::string_view chunked =
    "HTTP/1.1 200 OK\r\nServer: nginx\r\nDate: Sun, 29 Nov 2026 20:58:26 GMT\r\n"
    "Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n"
    "1a\r\nhello from punctual bench\n\r\n0\r\n\r\n";

void parse(benchmark::State& state, std::string_view response) {
  response_parser parser;
  for (auto _ : state) {
    parser.reset();
    const auto r = parser.feed(response.data(), response.size());
    if (r.status != parse_status::complete || r.consumed != response.size()) {
      state.SkipWithError("the response did not parse");
      break;
    }
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * response.size()));
}

void nginx_response(benchmark::State& state) {
  parse(state, nginx_keep_alive);
}
void chunked_response(benchmark::State& state) {
  parse(state, chunked);
}

BENCHMARK(nginx_response);
BENCHMARK(chunked_response);

}  // namespace
