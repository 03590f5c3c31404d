// Where the request for each planned request comes from. The engine asks which request schedule
// index i is (its name, kept with the request through its retries) and writes the bytes of that
// name; a weighted mix of requests or a user's next step is another source, not a change to the
// worker.
#pragma once

#include <bitset>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "run/config.hpp"
#include "schedule/trace.hpp"
#include "schedule/weighted.hpp"

namespace punctual::engine {

// A request as it goes on the wire, and what its response must show. All of it stays valid
// for the whole run.
struct wire_request {
  std::string_view bytes;
  bool head = false;                                  // a HEAD request: its response has no body
  const std::bitset<600>* expected_status = nullptr;  // the statuses that are ok; null: the run's
  const http::body_needle* expect_body = nullptr;     // text the body must contain; null: none
};

class request_source {
 public:
  virtual ~request_source() = default;
  // The name (an index into the run's names; 0 when the run has none) of request `index`.
  virtual std::uint16_t name_of(std::uint64_t index) const noexcept = 0;
  virtual wire_request request(std::uint16_t name) const noexcept = 0;
};

// The same request every time.
class fixed_request final : public request_source {
 public:
  fixed_request(std::string bytes, bool head) : bytes_(std::move(bytes)), head_(head) {}
  std::uint16_t name_of(std::uint64_t) const noexcept override { return 0; }
  wire_request request(std::uint16_t) const noexcept override { return {bytes_, head_}; }

 private:
  std::string bytes_;
  bool head_;
};

// --requests: request i is the entry a keyed draw of (seed, request_mix, i) lands on, weighted.
// Entries of weight 0 are never drawn. With a replayed trace whose lines name requests
// (--schedule-in), entry i of the trace is the request its line names, and only lines that name
// none are drawn.
class weighted_mix final : public request_source {
 public:
  // Every name the trace uses must be an entry's (the CLI checks it first).
  weighted_mix(const std::vector<run::named_request>& entries, std::uint64_t seed,
               std::shared_ptr<const schedule::trace> trace = nullptr);
  std::uint16_t name_of(std::uint64_t index) const noexcept override;
  wire_request request(std::uint16_t name) const noexcept override {
    const run::named_request& e = entries_[name];
    return {e.bytes, e.head, e.expected_status.any() ? &e.expected_status : nullptr,
            e.expect_body.get()};
  }

 private:
  std::vector<run::named_request> entries_;
  schedule::weighted_choice choice_;
  std::uint64_t seed_;
  std::shared_ptr<const schedule::trace> trace_;
  std::vector<int> by_trace_name_;  // trace name id -> entry; -1: drawn
};

}  // namespace punctual::engine
