// The immutable description of a run, built by the CLI from the options.
#pragma once

#include <bitset>
#include <chrono>
#include <cstdint>
#include <string>

#include "engine/retry.hpp"
#include "net/socket.hpp"

namespace punctual::engine {

using nanoseconds = std::chrono::nanoseconds;

enum class model_kind { open, closed };

// fine: sleep until each deadline. spin: sleep until shortly before it, then spin.
// coarse: send whatever is due once per millisecond (as wrk2 and h2load do).
enum class precision_mode { fine, spin, coarse };

struct run_config {
  net::address target;
  std::string request;  // the encoded request bytes, sent as-is each time
  bool head_request = false;
  bool keep_alive = true;

  model_kind model = model_kind::open;
  nanoseconds warmup{};
  nanoseconds duration{std::chrono::seconds(10)};
  nanoseconds think{};  // closed model only

  std::uint32_t connections = 10;
  std::uint32_t threads = 2;
  nanoseconds timeout{std::chrono::seconds(10)};
  nanoseconds connect_timeout{std::chrono::seconds(10)};
  std::uint64_t max_queue = 0;  // 0: unbounded (bounded in practice by the timeout)
  precision_mode precision = precision_mode::fine;
  std::bitset<600> expected_status;  // statuses that count as ok
  nanoseconds interval{std::chrono::seconds(1)};
  retry_policy retry;  // open model only
};

}  // namespace punctual::engine
