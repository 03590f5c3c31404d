#include "random_setup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "http/request.hpp"
#include "schedule/prng.hpp"
#include "schedule/trace.hpp"

namespace punctual::sim {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

class dice {
 public:
  explicit dice(std::uint64_t seed) : r_(seed) {}
  double unit() { return r_.next_unit(); }
  bool chance(double p) { return unit() < p; }
  std::uint64_t below(std::uint64_t n) { return n ? r_.next() % n : 0; }
  // Uniform in [lo, hi].
  std::int64_t between(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(hi - lo + 1)));
  }
  // Log-uniform in [lo, hi]: small and large values alike.
  nanoseconds span(nanoseconds lo, nanoseconds hi) {
    const double l = std::log(static_cast<double>(lo.count()));
    const double h = std::log(static_cast<double>(hi.count()));
    return nanoseconds{static_cast<std::int64_t>(std::exp(l + unit() * (h - l)))};
  }

 private:
  schedule::xoshiro256ss r_;
};

std::string ms(nanoseconds d) {
  return fmt::format("{:.3g}ms", static_cast<double>(d.count()) / 1e6);
}

std::string request_bytes(const std::string& path) {
  http::request_spec spec;
  spec.host = "sim";
  spec.path_and_query = path;
  return http::encode_request(spec);
}

void base(engine::run_config& c) {
  c.target.text = "sim:80";
  c.target_url = "http://sim/";
  c.request = request_bytes("/");
  for (int code = 200; code < 400; ++code) c.expected_status.set(static_cast<std::size_t>(code));
}

schedule::plan draw_plan(dice& d, const engine::run_config& c, std::uint64_t requests,
                         std::string& text) {
  schedule::plan p;
  p.warmup = c.warmup;
  p.duration = c.duration;
  p.workers = c.threads;
  p.seed = c.seed;
  const double seconds = static_cast<double>((c.warmup + c.duration).count()) / 1e9;
  const double rate = static_cast<double>(requests) / seconds;
  p.arrival = d.chance(0.5) ? schedule::arrival_kind::poisson : schedule::arrival_kind::constant;
  const double kind = d.unit();
  if (kind < 0.15) {
    // Stages: up from a low rate and back.
    p.start_rate_per_s = rate * 0.2;
    const nanoseconds third = (c.warmup + c.duration) / 3;
    p.stages = {{third, rate * 1.5}, {third, rate * 1.5}, {third, rate * 0.3}};
    text += fmt::format("stages {:.0f}->{:.0f}->{:.0f}/s", rate * 0.2, rate * 1.5, rate * 0.3);
  } else if (kind < 0.25) {
    // A trace: offsets with bursts and gaps.
    std::string lines;
    std::int64_t at = 0;
    const std::int64_t end = (c.warmup + c.duration).count();
    const std::int64_t mean_gap = static_cast<std::int64_t>(1e9 / rate);
    while (at < end) {
      lines += std::to_string(at) + "\n";
      at += d.chance(0.1) ? 0 : d.between(0, 2 * mean_gap);
    }
    schedule::trace_error error;
    p.arrival = schedule::arrival_kind::trace;
    p.replay = schedule::parse_trace(lines, "drawn", error);
    text += fmt::format("trace ~{:.0f}/s", rate);
  } else {
    p.rate_per_s = rate;
    text += fmt::format(
        "{} {:.0f}/s", p.arrival == schedule::arrival_kind::poisson ? "poisson" : "constant", rate);
  }
  return p;
}

void draw_mix(dice& d, engine::run_config& c, std::string& text) {
  const auto n = d.between(2, 3);
  for (int i = 0; i < n; ++i) {
    run::named_request r;
    r.name = fmt::format("r{}", i);
    r.bytes = request_bytes("/" + r.name);
    r.weight = static_cast<double>(d.between(1, 5));
    c.mix.push_back(std::move(r));
  }
  text += fmt::format(", mix of {}", n);
}

run::retry_policy draw_retry(dice& d, const engine::run_config& c, std::string& text) {
  run::retry_policy r;
  r.seed = c.seed;
  if (!d.chance(0.3)) return r;
  r.retries = static_cast<std::uint32_t>(d.between(1, 3));
  r.on = (1U << record::retry_cause_count) - 1;
  r.backoff_base = d.span(milliseconds(1), milliseconds(20));
  r.backoff_cap = r.backoff_base * 4;
  if (d.chance(0.3)) r.budget = 0.2;
  if (d.chance(0.2)) r.attempt_timeout = c.timeout / 3;
  text += fmt::format(", retries {}{}{}", r.retries, r.budget >= 0 ? " budget 20%" : "",
                      r.attempt_timeout.count() ? " attempt-timeout " + ms(r.attempt_timeout) : "");
  return r;
}

void draw_hybrid(dice& d, engine::run_config& c, std::uint64_t users, std::string& text) {
  run::hybrid_model h;
  const auto scenarios = d.between(1, 2);
  for (int s = 0; s < scenarios; ++s) {
    run::hybrid_scenario sc{fmt::format("s{}", s), static_cast<double>(d.between(1, 3)), {}, 0};
    const auto steps = d.between(1, 3);
    for (int k = 0; k < steps; ++k) {
      run::named_request r;
      r.name = fmt::format("s{}.k{}", s, k);
      r.bytes = request_bytes("/" + r.name);
      r.weight = 0;
      r.expected_status = c.expected_status;
      run::hybrid_step st;
      st.name = static_cast<std::uint16_t>(c.mix.size());
      const double shape = d.unit();
      st.think.a = d.span(microseconds(100), milliseconds(20));
      if (shape < 0.3) {
        st.think.shape = schedule::think_time::kind::exponential;
      } else if (shape < 0.5) {
        st.think.shape = schedule::think_time::kind::uniform;
        st.think.b = st.think.a * 2;
      }
      sc.steps.push_back(st);
      c.mix.push_back(std::move(r));
    }
    h.scenarios.push_back(std::move(sc));
  }
  for (auto& sc : h.scenarios) {
    run::named_request r;
    r.name = sc.name + ".session";
    r.weight = 0;
    r.session = true;
    sc.session_name = static_cast<std::uint16_t>(c.mix.size());
    c.mix.push_back(std::move(r));
  }
  h.per_user = d.chance(0.5);
  if (h.per_user) {
    h.max_users = static_cast<std::uint32_t>(d.between(c.threads, 40));
    c.connections = std::max(h.max_users, c.threads);
  } else if (d.chance(0.3)) {
    h.max_users = static_cast<std::uint32_t>(d.between(c.threads, 20));
    h.drop_on_overload = d.chance(0.5);
  }
  h.continue_on_error = d.chance(0.5);
  h.graceful_stop = d.chance(0.5) ? nanoseconds{0} : d.span(milliseconds(10), milliseconds(500));
  h.cookies = false;
  std::string retry_text;
  h.retry = draw_retry(d, c, retry_text);
  std::string plan_text;
  h.plan = draw_plan(d, c, std::max<std::uint64_t>(1, users), plan_text);
  text += fmt::format(
      "hybrid {} scenario(s), users {}, {}{}{}{}", scenarios, plan_text,
      h.per_user ? "per_user" : "pool",
      h.max_users ? fmt::format(" max {}{}", h.max_users, h.drop_on_overload ? " drop" : "") : "",
      h.continue_on_error ? " continue" : " abort", retry_text);
  c.model = std::move(h);
}

void draw_server(dice& d, const engine::run_config& c, server_script& s, std::string& text) {
  s.http2 = c.http != run::http_version::http1;
  s.service.shape = static_cast<service_time::kind>(d.below(3));
  s.service.a = d.span(microseconds(20), milliseconds(10));
  s.service.b = s.service.a * 3;
  text += fmt::format(", service {}{}",
                      std::array{"", "exp ", "uniform "}[static_cast<int>(s.service.shape)],
                      ms(s.service.a));
  const auto stalls = d.chance(0.4) ? d.between(1, 2) : 0;
  for (int i = 0; i < stalls; ++i) {
    const nanoseconds from =
        nanoseconds{static_cast<std::int64_t>(d.unit() * static_cast<double>(c.duration.count()))};
    const nanoseconds length = d.span(milliseconds(5), milliseconds(400));
    s.stalls.push_back({from, from + length});
    text += fmt::format(", stall {}+{}", ms(from), ms(length));
  }
  if (d.chance(0.5)) {
    const std::vector<fate> h1{fate::status_503,      fate::status_429,   fate::reset,
                               fate::close_delimited, fate::trickle,      fate::never,
                               fate::garbage,         fate::huge_headers, fate::continue_,
                               fate::chunked,         fate::http10,       fate::close_after,
                               fate::reset_after};
    const std::vector<fate> h2{fate::status_503,   fate::status_429, fate::reset,    fate::refused,
                               fate::stream_reset, fate::never,      fate::malformed};
    const auto& fates = s.http2 ? h2 : h1;
    s.reset_after_bytes = static_cast<std::size_t>(d.between(1, 120));
    for (int i = 0; i < 2; ++i) {
      const fate f = fates[d.below(fates.size())];
      s.shares[static_cast<std::size_t>(f)] += d.unit() * 0.1;
      text += fmt::format(", fault {}", static_cast<int>(f));
    }
  }
  if (s.http2) {
    s.max_streams = static_cast<std::uint32_t>(d.between(1, 100));
    if (d.chance(0.2)) s.goaway_after = static_cast<std::uint32_t>(d.between(5, 200));
    if (d.chance(0.3)) s.close_after_goaway = d.span(milliseconds(1), milliseconds(200));
    if (d.chance(0.3)) s.close_after_break = d.span(milliseconds(1), milliseconds(200));
    s.zero_window = d.chance(0.1);
  }
  if (d.chance(0.1)) {
    s.refuse_share = 0.05;
    s.hang_share = 0.05;
    s.reset_share = 0.05;
    text += ", connects fail";
  }
  s.trickle_gap = d.span(microseconds(100), milliseconds(5));
}

}  // namespace

drawn_setup draw_setup(std::uint64_t seed) {
  dice d(seed);
  drawn_setup out;
  setup& s = out.s;
  s.seed = seed;
  engine::run_config& c = s.config;
  base(c);
  c.seed = seed;
  c.threads = static_cast<std::uint32_t>(d.between(1, 3));
  c.connections = static_cast<std::uint32_t>(d.between(c.threads, 6 * c.threads));
  c.precision = static_cast<run::precision_mode>(d.below(3));
  const double protocol = d.unit();
  c.http = protocol < 0.7 ? run::http_version::http1 : run::http_version::http2;
  c.max_streams =
      c.http == run::http_version::http1 ? 100 : static_cast<std::uint32_t>(d.between(1, 8));
  c.duration = d.span(milliseconds(100), milliseconds(2000));
  c.warmup = d.chance(0.2) ? d.span(milliseconds(10), milliseconds(200)) : nanoseconds{0};
  c.timeout = d.span(milliseconds(5), milliseconds(2000));
  c.connect_timeout = std::min(c.timeout, nanoseconds{milliseconds(500)});
  const bool small_queue = d.chance(0.15);
  const std::uint64_t requests = static_cast<std::uint64_t>(d.between(20, 2000));
  std::string text = fmt::format(
      "seed {}: -t{} -c{} {} {} -d {} timeout {}", seed, c.threads, c.connections,
      c.http == run::http_version::http1 ? "http1" : fmt::format("h2 x{}", c.max_streams),
      std::array{"fine", "spin", "coarse"}[static_cast<int>(c.precision)], ms(c.duration),
      ms(c.timeout));
  if (c.warmup.count()) text += ", warmup " + ms(c.warmup);
  const double model = d.unit();
  if (small_queue && model >= 0.6 && model < 0.8) {
    // The closed model has no queue of its own (the CLI refuses --max-queue).
  } else if (small_queue) {
    c.max_queue = static_cast<std::uint64_t>(d.between(1, 50));
    text += fmt::format(", max-queue {}", c.max_queue);
  }
  text += ", ";
  if (model < 0.6) {
    std::string plan_text;
    schedule::plan p = draw_plan(d, c, requests, plan_text);
    text += "open " + plan_text;
    if (d.chance(0.3) && p.arrival != schedule::arrival_kind::trace) draw_mix(d, c, text);
    run::retry_policy r = draw_retry(d, c, text);
    c.model = run::open_model{std::move(p), r};
  } else if (model < 0.8) {
    run::closed_model m;
    m.think = d.chance(0.5) ? nanoseconds{0} : d.span(microseconds(100), milliseconds(10));
    if (d.chance(0.3)) m.expected_interval = d.span(microseconds(500), milliseconds(10));
    c.max_streams = c.http == run::http_version::http1 ? 1 : c.max_streams;
    // Users x (service + think) bounds the requests: a short run keeps them few.
    c.duration = d.span(milliseconds(50), milliseconds(500));
    text += fmt::format("closed think {}", ms(m.think));
    c.model = m;
  } else {
    c.http = run::http_version::http1;  // a hybrid user carries one request at a time
    draw_hybrid(d, c, requests / 3, text);
  }
  draw_server(d, c, s.server, text);
  s.up.delay = s.down.delay = d.span(microseconds(10), milliseconds(2));
  s.up.random_splits = s.down.random_splits = d.chance(0.2);
  if (const auto* closed = c.closed()) {
    // Each user sends about once per service time, round trip and think time: a run of at
    // most ~2,000 requests keeps thousands of seeds within a minute (and under ASan).
    const std::uint64_t users = std::uint64_t{c.connections} * c.max_streams;
    const nanoseconds cycle = s.server.service.a + s.up.delay + s.down.delay + closed->think;
    c.duration = std::min(c.duration, std::max<nanoseconds>(milliseconds(5), cycle * 2000 / users));
  }
  text += ", -d " + ms(c.duration);
  if (d.chance(0.2)) {
    s.max_events = static_cast<std::size_t>(d.between(1, 4));
    text += fmt::format(", {} events a wait", s.max_events);
  }
  if (d.chance(0.2)) {
    for (std::uint32_t w = 0; w < c.threads; ++w) {
      const auto n = d.between(1, 3);
      for (int i = 0; i < n; ++i) {
        const nanoseconds from{static_cast<std::int64_t>(
            d.unit() * static_cast<double>((c.warmup + c.duration).count()))};
        s.pauses.push_back({w, from, d.span(microseconds(500), milliseconds(20))});
      }
    }
    text += ", pauses";
  }
  if (d.chance(0.1)) {
    s.interrupt_at = nanoseconds{
        static_cast<std::int64_t>(d.unit() * static_cast<double>((c.warmup + c.duration).count()))};
    text += ", interrupted at " + ms(*s.interrupt_at);
  }
  if (d.chance(0.3)) {
    // A write takes time, so a turn that sends several requests takes time too.
    s.up.write_cost = d.span(microseconds(1), microseconds(50));
    text += fmt::format(", writes cost {}us", s.up.write_cost.count() / 1000);
  }
  out.description = std::move(text);
  return out;
}

}  // namespace punctual::sim
