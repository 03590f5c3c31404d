// The engine against the in-process test server: accounting, intervals and interruption.
// Checks counts, not timing (timing belongs to the truth tests and benchmarks); it also runs
// under TSan to check the workers and the collector for data races.
#include <gtest/gtest.h>

#include "engine/run.hpp"
#include "engine_test_config.hpp"
#include "http/request.hpp"
#include "platform/host_cpu.hpp"
#include "server/server.hpp"

namespace punctual::engine {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;

struct fixture {
  server::server srv{[] {
    server::server_config c;
    c.stall_at = {{milliseconds(400), milliseconds(200)}};
    return c;
  }()};
  run_config config;

  explicit fixture(model_kind model, nanoseconds duration) {
    config = test::loopback_get(srv.start());
    if (model == model_kind::closed) config.model = run::closed_model{milliseconds(5), {}};
    config.threads = 2;
    config.connections = 4;
    config.duration = duration;
  }

  schedule::plan plan(double rate) const {
    schedule::plan p;
    p.rate_per_s = rate;
    p.duration = config.duration;
    p.workers = config.threads;
    return p;
  }
};

std::int64_t sum_of(const std::vector<std::int64_t>& v) {
  std::int64_t s = 0;
  for (auto x : v) s += x;
  return s;
}

TEST(engine_run, open_model_accounts_every_planned_request) {
  fixture f(model_kind::open, milliseconds(1000));
  *f.config.plan() = f.plan(500);
  load_run run(f.config, system_parts(f.config));
  std::vector<std::int64_t> per_interval;
  std::int64_t expected_index = 0;
  const auto r = run.execute([&](std::int64_t index, const record::view_set& v) {
    EXPECT_EQ(index, expected_index++);  // intervals arrive in order, none skipped
    per_interval.push_back(v[record::view::response_time].total_count());
  });
  const auto& c = r.measured.counts;
  EXPECT_EQ(c.planned, 500u);
  EXPECT_EQ(c.outcome_total(), c.planned);
  EXPECT_EQ(c.outcomes[record::index(record::outcome::ok)], c.planned);
  EXPECT_FALSE(r.interrupted);
  // Every planned request gets a response time except a dropped one (it was never sent), so
  // both the totals and the intervals must hold exactly planned - dropped samples: a sample
  // lost or counted twice on its way through the intervals shows here.
  const auto with_response_time =
      static_cast<std::int64_t>(c.planned - c.outcomes[record::index(record::outcome::dropped)]);
  EXPECT_EQ(r.measured.views[record::view::response_time].total_count(), with_response_time);
  EXPECT_EQ(sum_of(per_interval), with_response_time);
  // Requests due in the 200 ms stall waited for it: the slowest waited most of it.
  EXPECT_GE(r.measured.views[record::view::response_time].max(),
            nanoseconds(milliseconds(150)).count());
}

TEST(engine_run, interruption_ends_the_window_and_marks_the_rest_unfinished) {
  fixture f(model_kind::open, milliseconds(5000));
  *f.config.plan() = f.plan(500);
  load_run run(f.config, system_parts(f.config));
  // 450 ms into the schedule, inside the stall: some requests are out. Timed from the schedule's
  // start on the collecting thread, not by a thread sleeping from the call: under TSan on a busy
  // host, that one fired before the run had planned anything.
  bool fired = false;
  run.set_poll_hook([&](const run_collector&, bool) {
    if (fired || run.clock().now() < run.start_mapping().mono + milliseconds(450)) return;
    fired = true;
    run.interrupt();
  });
  const auto r = run.execute([](std::int64_t, const record::view_set&) {});
  EXPECT_TRUE(fired);
  const auto& c = r.measured.counts;
  EXPECT_TRUE(r.interrupted);
  EXPECT_LT(r.window, milliseconds(1000));
  EXPECT_LT(c.planned, 500u);
  EXPECT_GT(c.planned, 0u);
  EXPECT_EQ(c.outcome_total(), c.planned);
  EXPECT_EQ(c.censored, c.outcomes[record::index(record::outcome::unfinished)] +
                            c.outcomes[record::index(record::outcome::timeout)]);
}

// --pin: worker k's thread is pinned to the k-th CPU the process may use, and its stats say so;
// without --pin no worker is pinned. (The integration test reads the threads' affinity itself.)
TEST(engine_run, pin_puts_worker_k_on_the_kth_allowed_cpu) {
  const std::vector<int> cpus = platform::allowed_cpus();
  if (cpus.size() < 2)
    GTEST_SKIP() << "--pin -t2 needs two CPUs; this process may use " << cpus.size();
  for (const bool pin : {true, false}) {
    fixture f(model_kind::open, milliseconds(200));  // before the server's stall
    *f.config.plan() = f.plan(100);
    f.config.pin = pin;
    load_run run(f.config, system_parts(f.config));
    const auto r = run.execute([](std::int64_t, const record::view_set&) {});
    ASSERT_EQ(r.workers.size(), 2u);
    for (std::size_t k = 0; k < 2; ++k) {
      if (pin) {
        EXPECT_EQ(r.workers[k].pinned_cpu, cpus[k]) << "worker " << k;
      } else {
        EXPECT_FALSE(r.workers[k].pinned_cpu.has_value()) << "worker " << k;
      }
    }
  }
}

// Runs a race of owners and claimers (the threshold 1 ms before each request is due) and checks
// that its 900 planned requests each went out once and ended once, the run's and each worker's.
run_result run_racing(load_run& run) {
  run.claims()->set_threshold(-nanoseconds(milliseconds(1)));
  auto r = run.execute([](std::int64_t, const record::view_set&) {});
  const auto& c = r.measured.counts;
  EXPECT_EQ(c.planned, 900u);
  EXPECT_EQ(c.outcome_total(), c.planned);
  EXPECT_EQ(c.attempts.first, c.planned);
  EXPECT_EQ(c.claimed_in, c.claimed_out);
  for (const auto& w : r.workers)
    EXPECT_EQ(w.planned + w.sent_for_others - w.claimed_away, w.outcomes);
  return r;
}

// Claims race: -t3, each worker takes the others' requests up to 1 ms before they are due, so
// owners and claimers race on nearly every request, on real threads (and under TSan). A double
// send would be a second outcome; a lost request, a missing one; each worker's claims add up.
TEST(engine_run, owners_and_claimers_racing_send_each_request_once) {
  for (int round = 0; round < 5; ++round) {
    fixture f(model_kind::open, milliseconds(300));
    f.config.threads = 3;
    f.config.connections = 6;
    *f.config.plan() = f.plan(3000);
    load_run run(f.config, system_parts(f.config));
    const auto r = run_racing(run);
    EXPECT_GT(r.measured.counts.claimed_in, 0u);
  }
}

// The same race on retries: half the answers are 503s, retried up to twice after at most 2 ms,
// and every worker may claim another's retry from 1 ms before it falls due. A retry sent twice
// would end twice (an outcome too many, or a retry of its own); a lost one, an outcome missing.
TEST(engine_run, owners_and_claimers_racing_on_retries_send_each_once) {
  for (int round = 0; round < 5; ++round) {
    server::server srv{[] {
      server::server_config c;
      c.faults = {{server::fault_kind::unavailable, 0.5}};
      return c;
    }()};
    run_config config = test::loopback_get(srv.start());
    config.threads = 3;
    config.connections = 6;
    config.duration = milliseconds(300);
    schedule::plan p;
    p.rate_per_s = 3000;
    p.duration = config.duration;
    p.workers = config.threads;
    run::open_model m{p, {}};
    m.retry.retries = 2;
    m.retry.on = 1U << record::index(record::retry_cause::status_5xx);
    m.retry.backoff_base = milliseconds(1);
    m.retry.backoff_cap = milliseconds(2);
    config.model = m;
    load_run run(config, system_parts(config));
    const auto r = run_racing(run);
    EXPECT_GT(r.measured.counts.attempts.retries, 0u);
  }
}

TEST(engine_run, closed_model_sends_only_when_answered) {
  fixture f(model_kind::closed, milliseconds(800));
  load_run run(f.config, system_parts(f.config));
  const auto r = run.execute([](std::int64_t, const record::view_set&) {});
  const auto& c = r.measured.counts;
  EXPECT_GT(c.planned, 0u);
  EXPECT_EQ(c.outcome_total(), c.planned);
  // 4 connections, each pausing 5 ms, and stalled for 200 ms: at most ~(800-200)/5 each.
  EXPECT_LE(c.planned, 4u * 130u);
  // Closed loop: nothing ever waits in the generator's queue.
  EXPECT_EQ(r.measured.views[record::view::queue_wait].max(), 0);
}

}  // namespace
}  // namespace punctual::engine
