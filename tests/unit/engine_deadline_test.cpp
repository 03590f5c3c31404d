// The deadline rule end to end: an attempt's outcome follows its response's kernel receive stamp
// against the deadline, whatever order the worker noticed things in (src/engine/deadline.hpp).
//
// The stamps are placed by a scripted server in a child process. It freezes this process
// (SIGSTOP) once the requests have arrived, answers while every worker thread is stopped, waits
// until the deadlines have passed, then lets the process go on (SIGCONT). So the responses are
// stamped at a time the script chose, on the chosen side of the deadline, and read only after
// it, in whatever order the worker gets to its sockets and its deadline checks. The script
// notes when it really answered (a busy host wakes it late), and the tests compare the outcomes
// with that instant, so nothing here depends on how fast the machine is.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "engine/run.hpp"
#include "engine_test_config.hpp"

namespace punctual::engine {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;

constexpr const char* keep_alive_response = "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nhello\n";
// No length: the response ends where the server closes the connection.
constexpr const char* close_delimited_response = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nhello\n";

// What the child does with the first `batch` requests (times from the first one's arrival);
// requests read after the batch but before the parent goes on are answered when it goes on
// (after their deadlines: the parent may send a few more before the stop lands, more when the
// host is slow to wake the child); later requests are answered at once.
struct script {
  int connections = 1;
  int batch = 1;
  milliseconds answer_at{};
  milliseconds resume_at{};
  bool close_delimited = false;
};

// What the child really did, in memory it shares with the parent, on CLOCK_MONOTONIC in ns (0
// until then): when it read the batch's first request, and when it began and ended writing the
// batch's answers (and, close-delimited, their closes). Their receive stamps lie between the two.
struct script_record {
  std::atomic<std::int64_t> arrival_ns{0};
  std::atomic<std::int64_t> answer_from_ns{0};
  std::atomic<std::int64_t> answer_to_ns{0};
};

nanoseconds mono() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return nanoseconds{std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec};
}

void sleep_until(nanoseconds t) {
  for (nanoseconds now = mono(); now < t; now = mono()) {
    const auto d = (t - now).count();
    timespec ts{static_cast<time_t>(d / 1'000'000'000), static_cast<long>(d % 1'000'000'000)};
    nanosleep(&ts, nullptr);
  }
}

// The child's way out, whatever happened: the parent must never be left stopped.
[[noreturn]] void leave(pid_t parent, int code) {
  kill(parent, SIGCONT);
  _exit(code);
}

// The child's side. Plain blocking system calls; it never leaves the parent stopped (a write to
// a connection the parent has reset fails with EPIPE instead of killing it with SIGPIPE).
[[noreturn]] void serve_script(int listener, const script& s, pid_t parent, script_record& record) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  signal(SIGPIPE, SIG_IGN);
  std::vector<pollfd> conns;
  std::vector<std::string> pending;  // bytes of a request head not yet complete, per connection
  std::vector<int> batch;            // connections whose request is in the frozen batch
  std::vector<int> held;             // requests read after the batch, before the resume
  nanoseconds first_arrival{};
  bool frozen_done = false;
  const nanoseconds give_up = mono() + std::chrono::seconds(10);
  while (mono() < give_up) {
    while (static_cast<int>(conns.size()) < s.connections) {
      const int fd = accept(listener, nullptr, nullptr);
      if (fd < 0) leave(parent, 3);
      conns.push_back({fd, POLLIN, 0});
      pending.emplace_back();
    }
    if (poll(conns.data(), conns.size(), 100) <= 0) continue;
    int open = 0;
    for (std::size_t i = 0; i < conns.size(); ++i) {
      if (conns[i].fd < 0) continue;
      ++open;
      if (!(conns[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      const ssize_t n = read(conns[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(conns[i].fd);
        conns[i].fd = -1;
        continue;
      }
      pending[i].append(buf, static_cast<std::size_t>(n));
      for (auto end = pending[i].find("\r\n\r\n"); end != std::string::npos;
           end = pending[i].find("\r\n\r\n")) {
        pending[i].erase(0, end + 4);
        if (!frozen_done && static_cast<int>(batch.size()) < s.batch) {
          if (batch.empty()) first_arrival = mono();
          batch.push_back(static_cast<int>(i));
        } else if (!frozen_done) {
          held.push_back(static_cast<int>(i));
        } else {
          const char* r = keep_alive_response;
          if (write(conns[i].fd, r, strlen(r)) < 0) leave(parent, 4);
        }
      }
    }
    if (!frozen_done && static_cast<int>(batch.size()) == s.batch) {
      frozen_done = true;
      kill(parent, SIGSTOP);
      sleep_until(first_arrival + s.answer_at);
      record.arrival_ns.store(first_arrival.count());
      record.answer_from_ns.store(mono().count());
      for (const int i : batch) {
        const char* r = s.close_delimited ? close_delimited_response : keep_alive_response;
        if (write(conns[i].fd, r, strlen(r)) < 0) leave(parent, 4);
        if (s.close_delimited) shutdown(conns[i].fd, SHUT_WR);
      }
      record.answer_to_ns.store(mono().count());
      sleep_until(first_arrival + s.resume_at);
      kill(parent, SIGCONT);
      // Past their deadlines: the parent may already have closed their connections.
      for (const int i : held) {
        const ssize_t ignored = write(conns[i].fd, keep_alive_response, strlen(keep_alive_response));
        static_cast<void>(ignored);
      }
    }
    if (frozen_done && open == 0) leave(parent, 0);
  }
  leave(parent, 2);
}

class scripted_server {
 public:
  explicit scripted_server(const script& s) {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    EXPECT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&addr), len), 0);
    EXPECT_EQ(listen(listener_, 1024), 0);
    EXPECT_EQ(getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port_ = ntohs(addr.sin_port);
    void* shared = mmap(nullptr, sizeof(script_record), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) std::abort();  // no test can run without it
    record_ = new (shared) script_record;
    const pid_t parent = getpid();
    child_ = fork();
    if (child_ == 0) serve_script(listener_, s, parent, *record_);
    close(listener_);
  }
  ~scripted_server() {
    if (child_ > 0) {
      kill(child_, SIGKILL);
      waitpid(child_, nullptr, 0);
    }
    munmap(record_, sizeof(script_record));
  }
  scripted_server(const scripted_server&) = delete;
  scripted_server& operator=(const scripted_server&) = delete;
  std::uint16_t port() const { return port_; }
  nanoseconds arrival() const { return nanoseconds{record_->arrival_ns.load()}; }
  nanoseconds answer_from() const { return nanoseconds{record_->answer_from_ns.load()}; }
  nanoseconds answer_to() const { return nanoseconds{record_->answer_to_ns.load()}; }

 private:
  script_record* record_ = nullptr;
  int listener_ = -1;
  std::uint16_t port_ = 0;
  pid_t child_ = -1;
};

// A run and the script's record of it (script_record), from the schedule's start.
struct scripted_run {
  run_result result;
  nanoseconds arrival;
  nanoseconds answer_from;
  nanoseconds answer_to;
};

// `requests` sent in the first 100 ms on one thread, one per connection.
scripted_run run_against(const script& s, int requests, milliseconds timeout, precision_mode precision,
                         retry_policy retry = {}) {
  scripted_server srv(s);
  run_config config = test::loopback_get(srv.port());
  config.threads = 1;
  config.connections = static_cast<std::uint32_t>(s.connections);
  config.duration = milliseconds(100);
  config.timeout = timeout;
  config.connect_timeout = std::chrono::seconds(5);
  config.precision = precision;
  std::get<run::open_model>(config.model).retry = retry;
  schedule::plan p;
  p.rate_per_s = requests * 10.0;
  p.duration = config.duration;
  p.workers = 1;
  *config.plan() = p;
  load_run run(config, system_parts(config));
  run_result result = run.execute([](std::int64_t, const record::view_set&) {});
  const nanoseconds start = run.start_mapping().mono;
  return {std::move(result), srv.arrival() - start, srv.answer_from() - start, srv.answer_to() - start};
}

std::uint64_t outcome_of(const run_result& r, record::outcome o) {
  return r.measured.counts.outcomes[record::index(o)];
}

const hdr::histogram& view_of(const run_result& r, record::view v) { return r.measured.views[v]; }

void expect_denominator(const run_result& r, std::uint64_t planned) {
  const auto& c = r.measured.counts;
  EXPECT_EQ(c.planned, planned);
  EXPECT_EQ(c.outcome_total(), c.planned);
  EXPECT_EQ(static_cast<std::uint64_t>(view_of(r, record::view::response_time).total_count()),
            c.planned);
}

// The highest value a histogram bucket holding `t` reports for it.
std::int64_t highest_equivalent(const run_result& r, nanoseconds t) {
  return view_of(r, record::view::response_time).highest_equivalent_value(t.count());
}

// How long after the script's write the kernel may stamp its answer: on loopback the stamp is
// taken on the write's own path; this covers a softirq the host put off.
constexpr nanoseconds delivery_slack{milliseconds(2)};

// The frozen batch's request is judged by its answer's receive stamp against its deadline,
// never by when the worker read it. Its intended time lies between the schedule's start and its
// arrival at the script, so its true response time lies between (answer_from - arrival) and
// (answer_to + delivery_slack): ok, dated so, when even the latter is before the deadline (the
// script answers long before, unless the host woke it that late); a timeout when even the former
// is after it. Every other planned request times out.
void expect_first_judged_by_its_stamp(const scripted_run& run, milliseconds timeout) {
  const run_result& r = run.result;
  ASSERT_GT(run.answer_from.count(), 0) << "the script never answered";
  const nanoseconds least = run.answer_from - run.arrival;
  const nanoseconds most = run.answer_to + delivery_slack;
  const auto& ok_view = view_of(r, record::view::response_time_ok);
  const std::uint64_t ok = outcome_of(r, record::outcome::ok);
  const auto truth = "its true response time lies in [" + std::to_string(least.count()) + ", " +
                     std::to_string(most.count()) + "] ns";
  if (most < timeout) {
    EXPECT_EQ(ok, 1u) << truth;
    EXPECT_GE(ok_view.max(), least.count()) << truth;
    EXPECT_LE(ok_view.max(), ok_view.highest_equivalent_value(most.count())) << truth;
  } else if (least >= timeout) {
    EXPECT_EQ(ok, 0u) << truth;
  }  // Else its deadline fell inside what the script's own timing leaves open: either is right.
  EXPECT_EQ(outcome_of(r, record::outcome::timeout), r.measured.counts.planned - ok);
}

// Where the worker is when it is stopped decides what it does first when it goes on. `sparse`:
// one request, so the worker sleeps on its sockets until the deadline; the stop interrupts that
// wait, and the deadline check runs before the sockets are read. `dense`: 2000 req/s, so the
// worker sleeps on its timer alone until the next send (responses wait for that wake-up); the
// stop interrupts that sleep, and the sockets are read before the deadline check. The rule must
// give the same outcome both ways.
enum class density { sparse, dense };

struct deadline_case {
  precision_mode precision;
  density load;
};

class deadline_order : public testing::TestWithParam<deadline_case> {
 protected:
  // The first request is answered at `answer_at` after it arrived, with a 200 ms deadline. In the
  // dense case the 199 requests due while the process was stopped are got to only after their
  // deadlines: they time out without being sent.
  scripted_run first_answered_at(milliseconds answer_at) {
    const int requests = GetParam().load == density::sparse ? 1 : 200;
    return run_against({.connections = 4, .answer_at = answer_at, .resume_at = milliseconds(350)},
                       requests, timeout, GetParam().precision);
  }
  const milliseconds timeout{200};
};

// Answered 300 ms after arrival with a 200 ms deadline, and read only after both: a timeout at
// exactly 200 ms, not an ok of 300 ms.
TEST_P(deadline_order, a_response_stamped_after_its_deadline_is_a_timeout) {
  const auto r = first_answered_at(milliseconds(300)).result;
  const auto planned = r.measured.counts.planned;
  expect_denominator(r, GetParam().load == density::sparse ? 1 : 200);
  EXPECT_EQ(outcome_of(r, record::outcome::timeout), planned);
  EXPECT_EQ(view_of(r, record::view::response_time_ok).total_count(), 0);
  EXPECT_GE(view_of(r, record::view::response_time).max(), nanoseconds(timeout).count());
  EXPECT_LE(view_of(r, record::view::response_time).max(), highest_equivalent(r, timeout));
  EXPECT_EQ(r.measured.counts.censored, planned);
}

// Answered 50 ms after arrival, read only 350 ms after: ok, dated when it arrived.
TEST_P(deadline_order, a_response_stamped_before_its_deadline_but_read_after_is_ok) {
  const auto run = first_answered_at(milliseconds(50));
  expect_denominator(run.result, GetParam().load == density::sparse ? 1 : 200);
  expect_first_judged_by_its_stamp(run, timeout);
}

INSTANTIATE_TEST_SUITE_P(
    modes, deadline_order,
    testing::Values(deadline_case{precision_mode::fine, density::sparse},
                    deadline_case{precision_mode::fine, density::dense},
                    deadline_case{precision_mode::coarse, density::sparse},
                    deadline_case{precision_mode::coarse, density::dense}),
    [](const auto& info) {
      return std::string(info.param.precision == precision_mode::fine ? "fine" : "coarse") +
             (info.param.load == density::sparse ? "_sparse" : "_dense");
    });

class deadline_precision : public testing::TestWithParam<precision_mode> {};

// More ready sockets than one wait returns (256): those left unread when the deadline check
// runs were stamped in time, and are ok.
TEST_P(deadline_precision, responses_left_beyond_one_waits_events_are_ok) {
  const milliseconds timeout{500};
  const int n = 300;
  const auto run = run_against({.connections = n, .batch = n, .answer_at = milliseconds(150),
                                .resume_at = milliseconds(800)},
                               n, timeout, GetParam());
  const run_result& r = run.result;
  expect_denominator(r, n);
  EXPECT_LE(view_of(r, record::view::response_time_ok).max(), highest_equivalent(r, timeout));
  // Every answer was written long before the deadline, unless the host held the script past it.
  if (run.answer_to + delivery_slack >= timeout) return;
  EXPECT_EQ(outcome_of(r, record::outcome::ok), static_cast<std::uint64_t>(n));
  EXPECT_EQ(outcome_of(r, record::outcome::timeout), 0u);
}

INSTANTIATE_TEST_SUITE_P(modes, deadline_precision,
                         testing::Values(precision_mode::fine, precision_mode::coarse),
                         [](const auto& info) {
                           return info.param == precision_mode::fine ? std::string("fine")
                                                                     : std::string("coarse");
                         });

// A response ended by the server's close is dated by the stamp of the read that met the close.
TEST(deadline, a_close_delimited_response_follows_its_stamp) {
  const milliseconds timeout{200};
  const auto late = run_against({.answer_at = milliseconds(300), .resume_at = milliseconds(350),
                                 .close_delimited = true},
                                1, timeout, precision_mode::fine)
                        .result;
  expect_denominator(late, 1);
  EXPECT_EQ(outcome_of(late, record::outcome::timeout), 1u);
  EXPECT_LE(view_of(late, record::view::response_time).max(), highest_equivalent(late, timeout));

  const auto early = run_against({.answer_at = milliseconds(50), .resume_at = milliseconds(350),
                                  .close_delimited = true},
                                 1, timeout, precision_mode::fine);
  expect_denominator(early.result, 1);
  expect_first_judged_by_its_stamp(early, timeout);
}

// --attempt-timeout: an answer stamped after the attempt's deadline is that attempt timing out,
// so it is retried (and the retry, answered at once, is ok). The retry has its own 300 ms to be
// answered in: a busy host wakes the script late.
TEST(deadline, an_answer_after_the_attempt_deadline_is_retried) {
  retry_policy retry;
  retry.retries = 1;
  retry.on = 1U << record::index(record::retry_cause::timeout);
  retry.backoff_base = milliseconds(1);
  retry.backoff_cap = milliseconds(1);
  retry.attempt_timeout = milliseconds(300);
  const auto r = run_against({.answer_at = milliseconds(400), .resume_at = milliseconds(450)}, 1,
                             std::chrono::seconds(2), precision_mode::fine, retry)
                     .result;
  expect_denominator(r, 1);
  EXPECT_EQ(outcome_of(r, record::outcome::ok), 1u);
  EXPECT_EQ(r.measured.counts.attempts.retries, 1u);
  EXPECT_EQ(r.measured.counts.attempts.by_cause[record::index(record::retry_cause::timeout)], 1u);
}

}  // namespace
}  // namespace punctual::engine
