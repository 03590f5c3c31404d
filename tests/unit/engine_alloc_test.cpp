// GCC cannot see that the replaced operator new below uses malloc.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
// The steady-state request path allocates nothing: the worker threads of a run that sends 3x
// more requests make exactly as many allocations as a short run (their fixed set-up only).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/run.hpp"
#include "engine_test_config.hpp"
#include "http/request.hpp"
#include "net/tls.hpp"

namespace {

std::atomic<bool> counting{false};
std::atomic<long> worker_allocations{0};
std::thread::id main_thread;

void note_allocation() {
  if (counting.load(std::memory_order_relaxed) && std::this_thread::get_id() != main_thread) {
    worker_allocations.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace

// OpenSSL allocates with malloc, not operator new: the program routes its allocations through
// net::install_tls_allocator's cache; here that cache gets its memory from counting functions,
// installed before the library has allocated anything (at static initialisation).
namespace {
void* counted_malloc(std::size_t n) {
  note_allocation();
  return std::malloc(n);
}
void* counted_realloc(void* p, std::size_t n) {
  note_allocation();
  return std::realloc(p, n);
}
const bool openssl_counted =
    punctual::net::install_tls_allocator({counted_malloc, counted_realloc, std::free});
}  // namespace

void* operator new(std::size_t n) {
  note_allocation();
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}

namespace punctual {
namespace {

struct served {
  pid_t pid = -1;
  std::uint16_t port = 0;
  ~served() {
    if (pid > 0) {
      kill(pid, SIGTERM);
      waitpid(pid, nullptr, 0);
    }
  }
};

// Starts `punctual serve --port 0 --duration 30s ARGS...` as a child and reads the port it
// prints (after any other line, such as a TLS certificate's fingerprint).
void start_server(served& s, std::vector<const char*> args = {}) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::vector<const char*> argv{"punctual", "serve", "--port", "0", "--duration", "30s"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back(nullptr);
  s.pid = fork();
  if (s.pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    execv(PUNCTUAL_BINARY, const_cast<char* const*>(argv.data()));
    _exit(127);
  }
  close(fds[1]);
  FILE* in = fdopen(fds[0], "r");
  char line[256] = {};
  std::string text;
  while (std::fgets(line, sizeof line, in) != nullptr) {
    text = line;
    if (text.find("listening on") != std::string::npos) break;
  }
  ASSERT_NE(text.find("listening on"), std::string::npos) << text;
  s.port = static_cast<std::uint16_t>(std::stoi(text.substr(text.rfind(':') + 1)));
  std::fclose(in);
}

// Runs `c` at `rate_per_s` for `duration` (two workers) with the allocation counter on; the
// worker threads' allocations, and the measured counts, whose outcomes must add up to planned.
// `claim_ahead`: claims (engine/claims.hpp) take another worker's requests this long before
// they are due, so that the two workers race for nearly every one.
long counted_run(engine::run_config c, double rate_per_s, std::chrono::milliseconds duration,
                 record::counters& counts, std::optional<std::chrono::nanoseconds> claim_ahead = {},
                 std::uint64_t* claimed = nullptr) {
  c.threads = 2;
  c.duration = duration;
  schedule::plan p;
  p.rate_per_s = rate_per_s;
  p.duration = duration;
  p.workers = 2;
  *c.plan() = p;
  engine::load_run run(c, engine::system_parts(c));
  if (claim_ahead) run.claims()->set_threshold(-*claim_ahead);
  worker_allocations = 0;
  counting = true;
  const auto r = run.execute([](std::int64_t, const record::view_set&) {});
  counting = false;
  counts = r.measured.counts;
  if (claimed) *claimed = counts.claimed_in;
  EXPECT_EQ(counts.outcome_total(), counts.planned);
  return worker_allocations.load();
}

long worker_allocations_for(std::uint16_t port, std::chrono::milliseconds duration,
                            std::uint64_t& planned, bool retries = false, bool tls = false,
                            bool h2 = false, bool named = false) {
  engine::run_config c = test::loopback_get(port);
  if (named) c.request_id_header = "x-request-id";
  if (h2) {
    c.http = run::http_version::http2;
    c.max_streams = 16;
  }
  if (tls) {
    c.tls.enabled = true;
    c.tls.verify = false;
    c.tls.server_name = "localhost";
  }
  c.connections = 4;
  if (retries) {
    std::get<run::open_model>(c.model).retry.retries = 2;
    std::get<run::open_model>(c.model).retry.on = 1U
                                                  << record::index(record::retry_cause::status_5xx);
    std::get<run::open_model>(c.model).retry.backoff_base = std::chrono::milliseconds(1);
    std::get<run::open_model>(c.model).retry.backoff_cap = std::chrono::milliseconds(4);
  }
  record::counters counts;
  const long allocations = counted_run(c, 2000, duration, counts);
  planned = counts.planned;
  if (retries) {
    EXPECT_GT(counts.attempts.retries, planned / 10);  // the retry path ran
  } else {
    EXPECT_EQ(counts.outcomes[record::index(record::outcome::ok)], planned);
  }
  return allocations;
}

// The worker threads' allocations in a run of 500 ms and in one of 1500 ms (three times the
// requests): a path that allocates per request makes them differ.
struct short_and_long {
  long short_run = 0, long_run = 0;
  std::uint64_t short_planned = 0, long_planned = 0;
};

template <typename Run>
short_and_long run_short_and_long(Run run) {
  short_and_long r;
  r.short_run = run(std::chrono::milliseconds(500), r.short_planned);
  r.long_run = run(std::chrono::milliseconds(1500), r.long_planned);
  return r;
}

TEST(engine_alloc, request_path_allocates_nothing) {
  main_thread = std::this_thread::get_id();
  served s;
  start_server(s);
  ASSERT_GT(s.port, 0);
  const auto r = run_short_and_long(
      [&](auto d, std::uint64_t& planned) { return worker_allocations_for(s.port, d, planned); });
  EXPECT_EQ(r.short_planned, 1000u);
  EXPECT_EQ(r.long_planned, 3000u);
  EXPECT_EQ(r.long_run, r.short_run) << "the worker threads allocated per request";
}

// Claims: each worker takes the other's requests up to 1 ms before they are due, so nearly every
// request is raced for by its owner and a claimer; neither allocates for it.
TEST(engine_alloc, claim_path_allocates_nothing) {
  main_thread = std::this_thread::get_id();
  served s;
  start_server(s);
  ASSERT_GT(s.port, 0);
  std::uint64_t claimed = 0;
  const auto r = run_short_and_long([&](auto d, std::uint64_t& planned) {
    engine::run_config c = test::loopback_get(s.port);
    c.connections = 4;
    record::counters counts;
    const long allocations =
        counted_run(c, 2000, d, counts, std::chrono::milliseconds(1), &claimed);
    planned = counts.planned;
    EXPECT_EQ(counts.outcomes[record::index(record::outcome::ok)], planned);
    return allocations;
  });
  EXPECT_GT(claimed, r.long_planned / 10) << "the claim path hardly ran";
  EXPECT_EQ(r.long_planned, 3 * r.short_planned);
  EXPECT_EQ(r.long_run, r.short_run) << "the worker threads allocated per claim";
}

// The requests are named too (--request-id-header): each is written with its id into its
// slot's room, which keeps its capacity, and so are its retries.
TEST(engine_alloc, retry_path_allocates_nothing) {
  main_thread = std::this_thread::get_id();
  served s;
  start_server(s, {"--fault", "503:0.3"});
  ASSERT_GT(s.port, 0);
  const auto r = run_short_and_long([&](auto d, std::uint64_t& planned) {
    return worker_allocations_for(s.port, d, planned, true, false, false, true);
  });
  EXPECT_EQ(r.long_planned, 3 * r.short_planned);
  EXPECT_EQ(r.long_run, r.short_run) << "the worker threads allocated per retry or named request";
}

// Handshakes allocate (before the start, on the coordinating thread); requests over an open TLS
// connection do not, and neither do OpenSSL's own buffers once they exist. What a connection
// allocates once may still land on a worker thread: TLS 1.3's session tickets come after the
// handshake and are taken in by the first read (a copied session each), and a reconnect
// handshakes on the worker. Once, under ASan beside other tests, the long run counted 170
// against the short run's 102 (the cause was not caught). Such work comes with the 4
// connections, not with the requests: allocating per request would add at least one for each
// of the long run's 2,000 more. The margin sits far between the two.
TEST(engine_alloc, tls_request_path_allocates_nothing) {
  ASSERT_TRUE(openssl_counted) << "OpenSSL allocated before its allocations could be counted";
  main_thread = std::this_thread::get_id();
  served s;
  start_server(s, {"--tls-self-signed"});
  ASSERT_GT(s.port, 0);
  const auto r = run_short_and_long([&](auto d, std::uint64_t& planned) {
    return worker_allocations_for(s.port, d, planned, false, true);
  });
  EXPECT_EQ(r.short_planned, 1000u);
  EXPECT_EQ(r.long_planned, 3000u);
  EXPECT_LE(r.long_run, r.short_run + 200) << "the worker threads allocated per request over TLS";
}

// HTTP/2 (h2c): nghttp2's streams, header blocks and frame buffers come from the worker's
// block pool, and the codec's own buffers keep their room, so a stream allocates nothing. The
// pool grows to the most streams that were ever in flight at once, which differs between two
// runs by a few blocks, and by more under the sanitizers' slower code (81 once, under ASan
// beside other tests: a stall let streams pile up), never with the number of requests: a pool
// that did not reuse its blocks makes ~4 allocations per request here, ~8,000 more in the long
// run. The margin sits far between the two.
TEST(engine_alloc, h2_request_path_allocates_nothing) {
  main_thread = std::this_thread::get_id();
  served s;
  start_server(s, {"--http2"});
  ASSERT_GT(s.port, 0);
  const auto r = run_short_and_long([&](auto d, std::uint64_t& planned) {
    return worker_allocations_for(s.port, d, planned, false, false, true);
  });
  EXPECT_EQ(r.short_planned, 1000u);
  EXPECT_EQ(r.long_planned, 3000u);
  EXPECT_LE(r.long_run, r.short_run + 400)
      << "the worker threads allocated per request over HTTP/2";
}

// Mix entries of these names, each the run's own request with this weight.
void add_names(engine::run_config& c, std::initializer_list<const char*> names, double weight) {
  for (const char* name : names) {
    run::named_request r;
    r.name = name;
    r.bytes = c.request;
    r.weight = weight;
    r.expected_status = c.expected_status;
    c.mix.push_back(std::move(r));
  }
}

// The hybrid model: users arrive at 400/s and each runs two steps (1 ms think between), the
// second searching its body for a text. Arrivals, the session heap, the keyed draws and the
// body search allocate nothing per user once the run has started.
long hybrid_allocations_for(std::uint16_t port, std::chrono::milliseconds duration,
                            std::uint64_t& planned) {
  engine::run_config c = test::loopback_get(port);
  c.connections = 8;
  run::hybrid_model h;
  h.scenarios.push_back({"s", 1, {{0, {}, nullptr, {}, false}, {1, {}, nullptr, {}, false}}, 2});
  h.scenarios[0].steps[0].think.a = std::chrono::milliseconds(1);
  h.graceful_stop = std::chrono::seconds(2);
  add_names(c, {"s.one", "s.two", "s.session"}, 0);
  c.mix[1].expect_body = std::make_shared<const http::body_needle>("ok");
  c.mix[2].session = true;
  c.mix[2].bytes.clear();
  c.model = std::move(h);
  record::counters counts;
  const long allocations = counted_run(c, 400, duration, counts);
  planned = counts.planned;
  EXPECT_EQ(counts.outcomes[record::index(record::outcome::ok)], planned);
  EXPECT_EQ(counts.body_missing, 0u);
  return allocations;
}

TEST(engine_alloc, hybrid_session_path_allocates_nothing) {
  main_thread = std::this_thread::get_id();
  served s;
  start_server(s);
  ASSERT_GT(s.port, 0);
  const auto r = run_short_and_long(
      [&](auto d, std::uint64_t& planned) { return hybrid_allocations_for(s.port, d, planned); });
  EXPECT_EQ(r.short_planned, 400u);  // 200 users, two steps each
  EXPECT_EQ(r.long_planned, 1200u);
  EXPECT_EQ(r.long_run, r.short_run) << "the worker threads allocated per user or step";
}

// A mix of three names against a server that fails some requests with 503: each name counts
// its status codes and socket errors (the live metrics' per-name counters), and at every
// interval boundary (100 ms here) the worker copies all its counts into the set it hands the
// collector. Neither allocates: the long run has three times the requests and boundaries.
long named_allocations_for(std::uint16_t port, std::chrono::milliseconds duration,
                           std::uint64_t& planned) {
  engine::run_config c = test::loopback_get(port);
  c.connections = 4;
  c.interval = std::chrono::milliseconds(100);
  add_names(c, {"home", "search", "cart"}, 1);
  record::counters counts;
  const long allocations = counted_run(c, 2000, duration, counts);
  planned = counts.planned;
  EXPECT_GT(counts.status[503], planned / 10);  // more than one code per name
  return allocations;
}

TEST(engine_alloc, per_name_codes_and_live_counts_allocate_nothing) {
  main_thread = std::this_thread::get_id();
  served s;
  start_server(s, {"--fault", "503:0.3"});
  ASSERT_GT(s.port, 0);
  const auto r = run_short_and_long(
      [&](auto d, std::uint64_t& planned) { return named_allocations_for(s.port, d, planned); });
  EXPECT_EQ(r.long_planned, 3 * r.short_planned);
  EXPECT_EQ(r.long_run, r.short_run)
      << "the worker threads allocated per named request or per interval hand-over";
}

TEST(engine_alloc, the_counter_sees_worker_threads) {
  main_thread = std::this_thread::get_id();
  // The counter must see allocations made off the main thread, or it proves nothing.
  worker_allocations = 0;
  counting = true;
  std::thread([] {
    int* volatile p = new int(1);  // volatile: the pair may not be optimised away
    delete p;
  }).join();
  counting = false;
  EXPECT_EQ(worker_allocations.load(), 1);
}

}  // namespace
}  // namespace punctual
