// The one description of a run: what the CLI built from the options, what the engine runs and
// what every report names (the workload model, the rate and the correction policy among it).
// Immutable once built; options live as text only in src/cli/run_options.hpp.
#pragma once

#include <bitset>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "http/body_needle.hpp"
#include "http/request_template.hpp"
#include "net/socket.hpp"
#include "net/tls.hpp"
#include "record/outcome.hpp"
#include "run/workload_identity.hpp"
#include "schedule/plan.hpp"
#include "schedule/think.hpp"

namespace punctual::run {

using nanoseconds = std::chrono::nanoseconds;

enum class model_kind { open, closed, hybrid };

// fine: sleep until each deadline. spin: sleep until shortly before it, then spin.
// coarse: send whatever is due once per millisecond (as wrk2 and h2load do).
enum class precision_mode { fine, spin, coarse };

// --http: HTTP/1.1; HTTP/2 (h2 by ALPN over TLS, h2c with prior knowledge over TCP); or either,
// as the server chooses by ALPN (HTTP/1.1 without TLS).
enum class http_version { http1, http2, automatic };

// Where the worker count came from: -t (or a command that sets it itself, as the demo does), or
// -t's default, the CPUs the process may use (at least 2, at most 4).
enum class threads_source { flag, cpus_allowed };

// Which failed attempts are retried, after what backoff, and how many a budget allows
// (src/engine/retry.hpp applies it). A retried request stays one logical request: its response
// time runs from the first attempt's intended time, and --timeout covers the chain.
struct retry_policy {
  std::uint32_t retries = 0;  // retries after the first attempt; 0 turns the policy off
  std::uint32_t on = 0;       // a bit per record::retry_cause
  nanoseconds backoff_base{50'000'000};
  nanoseconds backoff_cap{2'000'000'000};
  double budget = -1;             // retries per first attempt; negative: no budget
  nanoseconds attempt_timeout{};  // 0: an attempt may use the whole chain's deadline
  std::uint64_t seed = 1;

  bool enabled() const noexcept { return retries > 0; }
  bool retries_on(record::retry_cause c) const noexcept { return (on >> record::index(c)) & 1U; }
};

// One entry of a --requests mix, encoded: each planned request draws an entry by its weight,
// keyed by (seed, request_mix, index) (schedule::keyed_unit).
struct named_request {
  std::string name;
  std::string bytes;
  bool head = false;
  double weight = 1;
  // The hybrid model: a step's own --expect-status (empty: the run's); a session name (a
  // scenario's SCENARIO.session) sends nothing and is reported apart, as `sessions`.
  std::bitset<600> expected_status;
  bool session = false;
  // A step's expect_body_contains: a response without this text in its body is an http_error.
  std::shared_ptr<const http::body_needle> expect_body;
};

// The open model: intended times come from an arrival process (the plan: constant, Poisson,
// stages or a replayed trace), whatever the server does.
struct open_model {
  schedule::plan plan;
  retry_policy retry;
};

// The closed model: each user sends its next request when its last one ended, plus think time.
// There is no schedule and no rate; a user is a slot (one per connection, or --max-streams of
// them on an HTTP/2 connection).
struct closed_model {
  nanoseconds think{};
  std::optional<nanoseconds> expected_interval;  // the reconstructed view (expected-interval)
};

// The hybrid model (--scenario, docs/scenario.md). Users arrive by the plan; user i draws a
// scenario by weight, keyed by (seed, scenario, i), and runs its steps in order, each intended at
// the previous one's completion plus its think time.
// A value a step takes from its response into one of the user's variables.
struct capture_rule {
  std::uint16_t variable = 0;  // an index into hybrid_model::variables
  bool from_header = false;
  std::string key;  // the header's name, or a JSON Pointer into the body
};

struct hybrid_step {
  std::uint16_t name = 0;  // its SCENARIO.STEP entry in config::mix
  schedule::think_time think;
  // Set when the step names variables ({{name}}): rendered per user instead of mix[name].bytes.
  std::shared_ptr<const http::request_template> request;
  std::vector<capture_rule> captures;
  bool own_cookie = false;  // the step sets a Cookie header itself: the jar's is not added
};

struct hybrid_scenario {
  std::string name;
  double weight = 1;
  std::vector<hybrid_step> steps;
  std::uint16_t session_name = 0;  // its SCENARIO.session entry in config::mix
};

struct hybrid_model {
  schedule::plan plan;  // the users' arrivals (the file's phases, as stages)
  retry_policy retry;
  std::string file;  // as reports name it
  std::vector<hybrid_scenario> scenarios;
  std::uint32_t max_users = 0;     // 0: unbounded
  bool drop_on_overload = false;   // false: an arrival waits for a user slot
  bool continue_on_error = false;  // false: a failed step ends its session
  nanoseconds graceful_stop{std::chrono::seconds(30)};
  // Per-user variables: the csv columns first (in their order), then the captures' names.
  std::vector<std::string> variables;
  // The csv feeder's rows (values of the first variables), shared by every worker; none: empty.
  std::shared_ptr<const std::vector<std::vector<std::string>>> csv_rows;
  bool csv_random = false;  // user i takes row i mod rows, or a row drawn by (seed, csv, i)
  bool cookies = true;      // a cookie jar per user (http/cookie_jar.hpp)
  bool per_user = false;    // a connection per user (config::connections = its user slots)
};

// The workload model and its own options, one of three (model_kind names them in this order).
using load_model = std::variant<open_model, closed_model, hybrid_model>;

struct config {
  std::vector<std::string> command_line;
  std::string target_url;        // as reports name it
  net::address target;           // where connections go (after --resolve)
  std::string resolved_address;  // what --resolve gave the target's host and port; empty: none
  net::tls_client_config tls;    // https:// targets; verification is on unless --insecure

  std::string request;  // the encoded request bytes, sent as-is each time (no mix)
  bool head_request = false;
  std::vector<named_request> mix;  // --requests: the open model's weighted mix; the hybrid model's
                                   // steps and sessions; empty: `request`
  std::string mix_file;            // where the mix came from, as reports name it
  std::uint64_t seed = 1;          // --seed: every keyed draw of the run
  bool keep_alive = true;
  http_version http = http_version::http1;
  std::uint32_t max_streams = 100;  // HTTP/2: streams per connection, within the server's SETTINGS
  // --request-id-header: each attempt names its planned request in this header (empty: none).
  std::string request_id_header;

  load_model model = open_model{};
  nanoseconds warmup{};
  nanoseconds duration{std::chrono::seconds(10)};

  std::uint32_t connections = 10;
  std::uint32_t threads = 2;
  threads_source threads_from = threads_source::flag;
  nanoseconds timeout{std::chrono::seconds(10)};
  nanoseconds connect_timeout{std::chrono::seconds(10)};
  std::uint64_t max_queue = 0;  // 0: unbounded (bounded in practice by the timeout)
  precision_mode precision = precision_mode::fine;
  // An awake worker sends another's request due past the steal threshold (engine/claims.hpp);
  // --no-claims turns that off, only to show what claims do.
  bool claims = true;
  // --pin: worker k runs on the k-th CPU the process may use (unpinned by default).
  bool pin = false;
  std::bitset<600> expected_status;  // statuses that count as ok
  nanoseconds interval{std::chrono::seconds(1)};

  // Distributed runs (docs/distributed.md). The slice of the schedule is in `plan` (shards,
  // shard_index); start_at puts the measured window's start at this wall-clock instant (Unix ns)
  // instead of just after the connections open; plan_sha256 names the global plan.
  std::optional<nanoseconds> start_at;
  std::string plan_sha256;
  // What the load is and how it is judged (run/workload_identity.hpp), and which run this
  // process is part of: the same on every shard of one run.
  workload_identity workload;
  std::string run_id;
  std::uint32_t shards() const noexcept { return plan() ? plan()->shards : 1; }
  std::uint32_t shard_index() const noexcept { return plan() ? plan()->shard_index : 0; }

  model_kind kind() const noexcept { return static_cast<model_kind>(model.index()); }
  const closed_model* closed() const noexcept { return std::get_if<closed_model>(&model); }
  const hybrid_model* hybrid() const noexcept { return std::get_if<hybrid_model>(&model); }
  hybrid_model* hybrid() noexcept { return std::get_if<hybrid_model>(&model); }
  // The schedule: the open model's requests, the hybrid model's users; none in the closed model.
  const schedule::plan* plan() const noexcept {
    if (const auto* o = std::get_if<open_model>(&model)) return &o->plan;
    if (const auto* h = hybrid()) return &h->plan;
    return nullptr;
  }
  schedule::plan* plan() noexcept {
    return const_cast<schedule::plan*>(static_cast<const config*>(this)->plan());
  }
  // The retry policy of the open and hybrid models; the closed model retries nothing.
  const retry_policy& retry() const noexcept {
    static const retry_policy none;
    if (const auto* o = std::get_if<open_model>(&model)) return o->retry;
    if (const auto* h = hybrid()) return h->retry;
    return none;
  }
  std::optional<nanoseconds> expected_interval() const noexcept {
    return closed() ? closed()->expected_interval : std::nullopt;
  }
  // How long after the window's end a request may still start: the hybrid model's graceful stop.
  nanoseconds graceful_stop() const noexcept {
    return hybrid() ? hybrid()->graceful_stop : nanoseconds{0};
  }
  // Requests a connection carries at once: --max-streams over HTTP/2 (in the closed model, its
  // users), except on a hybrid user's connection; one over HTTP/1.1.
  std::uint32_t slots_per_connection() const noexcept {
    if (http == http_version::http1 || hybrid()) return 1;
    return max_streams > 1 ? max_streams : 1;
  }

  // The names that latency and outcomes are reported by, in the mix's order; none without a mix.
  std::size_t name_count() const noexcept { return mix.size(); }

  // The planned rate of requests when it is one number: the open model without stages or a
  // trace (the hybrid model's plan is of users).
  std::optional<double> rate_per_s() const {
    const auto* open = std::get_if<open_model>(&model);
    if (!open || !open->plan.stages.empty() ||
        open->plan.arrival == schedule::arrival_kind::trace) {
      return std::nullopt;
    }
    return open->plan.rate_per_s;
  }
  // Whether the -c connections carry the planned load, so that -c is judged against it (in its
  // busiest second when there is no one rate): the open model, and the hybrid model when users
  // share them (connection: pool). A hybrid user's own connection carries its session alone,
  // which the max_users check judges.
  bool connections_carry_plan() const noexcept {
    return plan() != nullptr && !(hybrid() && hybrid()->per_user);
  }
  // True when the first-attempt sends follow one Poisson law: Poisson arrivals at a fixed rate
  // (stages change the rate mid-run). The hybrid model's plan is of users, and their later
  // steps send between arrivals. Only these send gaps are recorded and fitted.
  bool sends_fixed_poisson() const noexcept {
    const auto* open = std::get_if<open_model>(&model);
    return open && open->plan.fixed_poisson();
  }
};

}  // namespace punctual::run
