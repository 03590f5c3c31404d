#include "search/procedure.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>

namespace punctual::search {

namespace {

// The recovery probe passes at twice the first step's median, but never below this: a few
// requests on an idle host can wake that late (the design's timing facts), and a probe must
// not wait on the host's noise.
constexpr nanoseconds probe_floor{1'000'000};
// A re-run for more samples is at most this many times the step's duration.
constexpr double max_stretch = 10;
// A step short of connections is run again with more at most this many times, while the
// completed rate keeps rising.
constexpr int max_connection_reruns = 3;
// Little's law's headroom when a step sizes -c: above the validity check's 1.5x, so that a step
// sized from a service time a little shorter than its own still passes the check.
constexpr double connection_headroom = 2;
// The service time the first step's -c is sized for, before anything was measured.
constexpr double first_service_guess_ns = 100e6;

bool generator_check(std::string_view name) {
  return name == "dropped" || name == "schedule_kept" || name == "start_lag" ||
         name.substr(0, 9) == "send_lag_";
}

bool connection_check(std::string_view name) {
  return name == "connection_cap" || name == "user_cap";
}

bool samples_check(std::string_view name) {
  return name.substr(0, 15) == "samples_beyond_";
}

// How much longer an undecided step must run for its bound to reach its threshold: the
// interval narrows as the square root of the samples.
double undecided_stretch(const step_facts& f) {
  double stretch = 2;
  for (const auto& s : f.slos) {
    if (s.pass_bound || !s.pass_point || !s.percentile) continue;
    const double room = s.threshold - s.point;
    const double width = s.bound - s.point;
    if (room > 0 && width > 0) stretch = std::max(stretch, (width / room) * (width / room));
  }
  return std::min(stretch, max_stretch);
}

// How much longer a step must run to have 10 samples (with a fifth more) beyond the highest
// percentile that had too few: 10 / (1 - p) samples at the step's rate.
double samples_stretch(const step_facts& f, const step_plan& plan) {
  double stretch = 2;
  for (const auto& name : f.failed_checks) {
    if (!samples_check(name)) continue;
    const double p = std::strtod(name.c_str() + 16, nullptr);  // "samples_beyond_p99.9"
    if (p <= 0 || p >= 100) continue;
    const double needed = 1.2 * 10 / (1 - p / 100);
    const double seconds = needed / plan.rate_per_s;
    stretch = std::max(stretch, seconds / std::chrono::duration<double>(plan.duration).count());
  }
  return std::min(stretch, max_stretch);
}

nanoseconds stretched(nanoseconds d, double by) {
  return nanoseconds{static_cast<std::int64_t>(std::ceil(static_cast<double>(d.count()) * by))};
}

// What a step finally counted as, or why none could run.
enum class counted { pass, fail, generator, connections, interrupted, out_of_steps, out_of_time };

class searcher {
 public:
  searcher(const settings& s, step_runner& r) : s_(s), r_(r) {}

  outcome go() {
    const counted end = grow();
    if (end == counted::fail) bisect();
    o_.total = r_.elapsed();
    return std::move(o_);
  }

 private:
  double round_rate(double rate) const {
    const double g = s_.granularity;
    return std::max(g, std::round(rate / g) * g);
  }

  counted grow() {
    double rate = round_rate(s_.to ? std::min(s_.from, *s_.to) : s_.from);
    for (;;) {
      const counted c = decide(rate, "grow");
      if (c != counted::pass) return stop_on(c);
      o_.sustained = rate;
      if (s_.to && rate >= *s_.to) {
        o_.why = limit::to;
        o_.stopped_by = "--to";
        return counted::pass;
      }
      rate = round_rate(s_.to ? std::min(rate * s_.factor, *s_.to) : rate * s_.factor);
    }
  }

  void bisect() {
    if (!o_.sustained) return;  // even --from failed
    while (*o_.failed - *o_.sustained > s_.resolution * *o_.sustained) {
      const double mid = round_rate((*o_.sustained + *o_.failed) / 2);
      if (mid <= *o_.sustained || mid >= *o_.failed) break;
      const counted c = decide(mid, "bisect");
      if (c == counted::pass) {
        o_.sustained = mid;
      } else if (stop_on(c) != counted::fail) {
        return;
      }
    }
    o_.why = limit::server;
    o_.stopped_by = "resolution";
  }

  // Records a failure at the top of the bracket, or what ended the search.
  counted stop_on(counted c) {
    switch (c) {
      case counted::fail:
        o_.why = limit::server;
        o_.stopped_by = "failed step";
        break;
      case counted::generator:
        o_.why = limit::generator;
        o_.stopped_by = "the generator's limit";
        break;
      case counted::connections:
        o_.why = limit::connections;
        o_.stopped_by = "--max-connections";
        break;
      case counted::interrupted:
        o_.why = limit::interrupted;
        o_.stopped_by = "interrupted";
        break;
      case counted::out_of_steps:
        o_.why = o_.failed ? limit::server : limit::steps;
        o_.stopped_by = "--max-steps";
        break;
      case counted::out_of_time:
        o_.why = o_.failed ? limit::server : limit::time;
        o_.stopped_by = "--max-time";
        break;
      case counted::pass:
        break;
    }
    return c;
  }

  std::uint32_t connections_for(double rate) const {
    if (s_.connections) return *s_.connections;
    if (o_.steps.empty()) return size_connections(s_, rate, first_service_guess_ns);
    // The previous step's service time, unless that step failed: a failing step's service time
    // holds the server's own queue, which a lower rate does not build. Then the last passing
    // step's.
    const step_record& last = o_.steps.back();
    if (last.counted == verdict::fail) {
      for (auto it = o_.steps.rbegin(); it != o_.steps.rend(); ++it) {
        if (it->counted == verdict::pass)
          return size_connections(s_, rate, sizing_service_ns(it->facts));
      }
    }
    return size_connections(s_, rate, sizing_service_ns(last.facts));
  }

  // Runs a step at `rate` under every re-run rule; the monotonic rule last.
  counted decide(double rate, const std::string& why) {
    const counted c = decide_once(rate, why);
    if (c != counted::fail || !o_.sustained || *o_.sustained <= rate) {
      if (c == counted::fail) o_.failed = o_.failed ? std::min(*o_.failed, rate) : rate;
      return c;
    }
    // A failure below a rate that passed: the service may not be monotonic. Once more.
    const counted again = decide_once(
        rate, "re-run: failed below " + rate_text(*o_.sustained) + " req/s, which passed");
    if (again == counted::pass) return again;
    if (again != counted::fail) return again;
    o_.unstable.push_back(rate_text(rate) + " req/s failed twice after " +
                          rate_text(*o_.sustained) + " req/s passed");
    // The lower rate wins: the answer lies below it.
    double best = 0;
    for (const auto& st : o_.steps) {
      if (st.counted == verdict::pass && st.plan.rate_per_s < rate)
        best = std::max(best, st.plan.rate_per_s);
    }
    o_.sustained = best > 0 ? std::optional<double>(best) : std::nullopt;
    o_.failed = rate;
    return counted::fail;
  }

  static std::string rate_text(double r) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", r);
    return text;
  }

  counted decide_once(double rate, const std::string& why) {
    step_plan plan{rate, connections_for(rate), s_.step_warmup, s_.step_duration, why};
    bool rerun_generator = false, rerun_samples = false, rerun_undecided = false;
    int connection_reruns = 0;
    double completed_before = 0;
    for (;;) {
      step_record* rec = run(plan);
      if (!rec) return budget_;
      const step_facts& f = rec->facts;
      switch (rec->first) {
        case verdict::pass:
          return finish(*rec, verdict::pass, counted::pass);
        case verdict::fail:
          return finish(*rec, verdict::fail, counted::fail);
        case verdict::interrupted:
          return finish(*rec, verdict::interrupted, counted::interrupted);
        case verdict::generator:
          if (!rerun_generator) {
            rerun_generator = true;
            rec->note = "invalid for the generator's own reasons: run once more";
            plan.why = "re-run: generator";
            continue;
          }
          o_.generator_check = generator_text(f);
          return finish(*rec, verdict::generator, counted::generator);
        case verdict::connections: {
          const std::uint32_t more = size_connections(s_, rate, sizing_service_ns(f));
          // More connections that brought no more answers: the server is the limit, its
          // service time grew with its queue (Little's law asks for ever more connections).
          if (connection_reruns > 0 && f.completed_per_s <= 1.05 * completed_before) {
            rec->note = "more connections did not raise the completed rate: the server's limit";
            return finish(*rec, verdict::fail, counted::fail);
          }
          if (connection_reruns < max_connection_reruns && !s_.connections &&
              more > plan.connections) {
            ++connection_reruns;
            completed_before = f.completed_per_s;
            rec->note = "too few connections: run again with -c " + std::to_string(more);
            plan.connections = more;
            plan.why = "re-run: connections";
            continue;
          }
          o_.generator_check = generator_text(f);
          return finish(*rec, verdict::connections, counted::connections);
        }
        case verdict::too_few_samples:
          if (!rerun_samples) {
            rerun_samples = true;
            plan.duration = stretched(plan.duration, samples_stretch(f, plan));
            rec->note = "too few samples: run again, longer";
            plan.why = "re-run: samples";
            continue;
          }
          rec->note = "still too few samples: counted as a failure";
          return finish(*rec, verdict::fail, counted::fail);
        case verdict::undecided:
          if (!rerun_undecided) {
            rerun_undecided = true;
            plan.duration = stretched(plan.duration, undecided_stretch(f));
            rec->note = "undecided (the point passes, the bound fails): run again, longer";
            plan.why = "re-run: undecided";
            continue;
          }
          rec->note = "undecided again: counted as a failure";
          return finish(*rec, verdict::fail, counted::fail);
      }
    }
  }

  counted finish(step_record& rec, verdict v, counted c) {
    rec.counted = v;
    return c;
  }

  static std::string generator_text(const step_facts& f) {
    std::string out;
    for (std::size_t i = 0; i < f.failed_checks.size(); ++i) {
      if (!generator_check(f.failed_checks[i]) && !connection_check(f.failed_checks[i])) continue;
      if (!out.empty()) out += "; ";
      out += f.failed_checks[i];
      if (i < f.check_notes.size() && !f.check_notes[i].empty()) out += ": " + f.check_notes[i];
    }
    return out;
  }

  // Cools down, then runs the step; null when the budget or an interruption stops it first.
  step_record* run(const step_plan& plan) {
    if (o_.steps.size() >= s_.max_steps) {
      budget_ = counted::out_of_steps;
      return nullptr;
    }
    if (r_.interrupted()) {
      budget_ = counted::interrupted;
      return nullptr;
    }
    step_record rec;
    rec.plan = plan;
    if (!o_.steps.empty()) cool_down(rec);
    if (r_.elapsed() + plan.warmup + plan.duration > s_.max_time) {
      budget_ = counted::out_of_time;
      return nullptr;
    }
    if (r_.interrupted()) {
      budget_ = counted::interrupted;
      return nullptr;
    }
    rec.facts = r_.run_step(plan);
    rec.first = classify(rec.facts);
    rec.counted = rec.first;
    if (o_.steps.empty()) {
      o_.recovery_threshold = std::max(
          probe_floor, nanoseconds{static_cast<std::int64_t>(2 * rec.facts.response_p50_ns)});
    }
    o_.steps.push_back(std::move(rec));
    return &o_.steps.back();
  }

  // Probes until a few requests at a low rate answer within the recovery threshold, for at
  // most --cooldown.
  void cool_down(step_record& rec) {
    const nanoseconds start = r_.elapsed();
    rec.recovered = false;
    while (!r_.interrupted()) {
      const probe_result p = r_.probe();
      if (p.answered && p.p50_ns <= static_cast<double>(o_.recovery_threshold.count())) {
        rec.recovered = true;
        break;
      }
      if (r_.elapsed() - start >= s_.cooldown) break;
    }
    rec.cooldown = r_.elapsed() - start;
  }

  const settings& s_;
  step_runner& r_;
  outcome o_;
  counted budget_ = counted::out_of_steps;
};

}  // namespace

std::string_view verdict_name(verdict v) noexcept {
  switch (v) {
    case verdict::pass:
      return "pass";
    case verdict::fail:
      return "fail";
    case verdict::undecided:
      return "undecided";
    case verdict::too_few_samples:
      return "too few samples";
    case verdict::generator:
      return "generator limit";
    case verdict::connections:
      return "connection limit";
    case verdict::interrupted:
      return "interrupted";
  }
  return "";
}

std::string_view limit_name(limit l) noexcept {
  switch (l) {
    case limit::server:
      return "server";
    case limit::generator:
      return "generator";
    case limit::connections:
      return "connections";
    case limit::to:
      return "to";
    case limit::time:
      return "time";
    case limit::steps:
      return "steps";
    case limit::interrupted:
      return "interrupted";
  }
  return "";
}

verdict classify(const step_facts& f) {
  if (f.interrupted) return verdict::interrupted;
  // The server failed even before any generator delay: the step failed, whatever else.
  for (const auto& s : f.slos) {
    if (s.service_time_fails) return verdict::fail;
  }
  if (!f.valid) {
    bool generator = false, connections = false, samples = false;
    for (const auto& name : f.failed_checks) {
      generator = generator || generator_check(name);
      connections = connections || connection_check(name);
      samples = samples || samples_check(name);
    }
    if (generator) return verdict::generator;
    if (connections) return verdict::connections;
    if (samples) return verdict::too_few_samples;
    return verdict::generator;  // any other gating check is about the generator too
  }
  bool bound_fails = false, point_fails = false;
  for (const auto& s : f.slos) {
    bound_fails = bound_fails || !s.pass_bound;
    point_fails = point_fails || !s.pass_point;
  }
  if (!bound_fails) return verdict::pass;
  return point_fails ? verdict::fail : verdict::undecided;
}

outcome run_search(const settings& s, step_runner& runner) {
  return searcher(s, runner).go();
}

// 4 too when no step was decided within the budget: no verdict, as for an invalid run.
int exit_code_of(const outcome& o) noexcept {
  switch (o.why) {
    case limit::interrupted:
      return 130;
    case limit::generator:
    case limit::connections:
      return 4;
    default:
      if (o.sustained) return 0;
      return o.failed ? 3 : 4;  // no step decided within the budget: no verdict
  }
}

double sizing_service_ns(const step_facts& f) noexcept {
  return std::max(f.mean_service_ns, f.p99_service_ns);
}

std::uint32_t size_connections(const settings& s, double rate, double mean_service_ns) noexcept {
  const double needed = std::ceil(connection_headroom * rate * mean_service_ns / 1e9);
  const double capped = std::min(needed, static_cast<double>(s.max_connections));
  return std::max(s.threads, static_cast<std::uint32_t>(std::max(capped, 1.0)));
}

}  // namespace punctual::search
