// How remote write reaches its endpoint: one HTTP/1.1 POST per request over a fresh connection
// (a push a second needs no pool), with a deadline and a cancel flag, so that a slow or dead
// endpoint holds up only the pusher's own thread, and that thread only until the run's end
// allows. Plain http only: the workers' TLS transport lives on their event loops.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "http/url.hpp"

namespace punctual::metrics {

struct post_result {
  int status = 0;     // the response's status; 0: no response (connect, timeout, reset, cancel)
  std::string error;  // one line when status is 0
};

// The seam the pusher sends through; tests give it a fake.
class push_transport {
 public:
  virtual ~push_transport() = default;
  // Sends `body` (already snappy-compressed). Returns by `deadline` or soon after `cancel` is set.
  virtual post_result post(const std::string& body, std::chrono::steady_clock::time_point deadline,
                           const std::atomic<bool>& cancel) = 0;
};

// `headers`: "Name: value", sent after the protocol's own (Content-Encoding: snappy,
// Content-Type: application/x-protobuf, X-Prometheus-Remote-Write-Version: 0.1.0).
std::unique_ptr<push_transport> http_push_transport(const http::url& target,
                                                    std::vector<std::string> headers);

// The request head the transport sends for a body of `length` bytes.
std::string push_request_head(const http::url& target, const std::vector<std::string>& headers,
                              std::size_t length);

// The status code of a response that starts with `head` ("HTTP/1.1 204 ..."), or 0.
int status_of(std::string_view head) noexcept;

}  // namespace punctual::metrics
