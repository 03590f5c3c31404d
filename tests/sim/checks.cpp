#include "checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "engine/deadline.hpp"
#include "engine/retry.hpp"
#include "record/view_set.hpp"

namespace punctual::sim {
namespace {

using record::outcome;

std::string ns(nanoseconds t, nanoseconds origin) {
  return fmt::format("{}ns", (t - origin).count());
}

std::string who(const final_outcome& f) {
  return fmt::format("request {} (worker {}, user {}, step {}, attempt {})", f.t.index, f.worker,
                     f.t.user, f.t.step, f.t.attempt);
}

bool measured(const simulation& sim, const record::request_times& t) {
  return t.accounted_at() >= sim.result().measure_start;
}

// Per worker, claims (engine/claims.hpp) move outcomes between workers, never planned requests:
// planned + claimed_in - claimed_out == the sum of its outcomes; over the run, every request
// claimed in was claimed out.
void check_worker_sum(std::vector<std::string>& out, const std::string& what,
                      const record::counters& c) {
  const std::uint64_t sum = c.outcome_total();
  if (c.planned + c.claimed_in != sum + c.claimed_out) {
    out.push_back(
        fmt::format("{}: planned {} + claimed in {} - claimed out {} but outcomes add up to {}",
                    what, c.planned, c.claimed_in, c.claimed_out, sum));
  }
}

template <typename Counts>
void check_sum(std::vector<std::string>& out, const std::string& what, std::uint64_t planned,
               const Counts& outcomes) {
  std::uint64_t sum = 0;
  for (const auto n : outcomes) sum += n;
  if (sum != planned)
    out.push_back(fmt::format("{}: planned {} but outcomes add up to {}", what, planned, sum));
}

}  // namespace

// Attempts by kind, as the wire saw them go: a first attempt per request at most, retries by
// the policy, HTTP/2 resends of streams the server left unprocessed; and the total is their sum.
void check_attempts(std::vector<std::string>& out, const simulation& sim) {
  const record::attempt_counts& a = sim.result().measured.counts.attempts;
  record::attempt_counts seen;
  for (const auto& s : sim.sent()) {
    // Framed but never written (its connection failed first): no attempt went out.
    if (!measured(sim, s.t) || s.t.sent.count() == 0) continue;
    std::uint64_t& kind = s.t.resent ? seen.resent : s.t.attempt == 0 ? seen.first : seen.retries;
    ++kind;
  }
  const std::uint64_t planned = sim.result().measured.counts.planned;
  if (a.total != a.first + a.retries + a.resent || a.first > planned) {
    out.push_back(
        fmt::format("attempts: total {} is not first {} + retries {} + resent {} (planned {})",
                    a.total, a.first, a.retries, a.resent, planned));
  }
  if (seen.first != a.first || seen.retries != a.retries || seen.resent != a.resent) {
    out.push_back(fmt::format(
        "attempts: the wire saw first {}, retries {}, resent {}; the report counts {}, {}, {}",
        seen.first, seen.retries, seen.resent, a.first, a.retries, a.resent));
  }
}

// Never more connections than the schedule calls for: beyond the -c kept open, at most one per
// attempt the run made (a planned request's first, a retry, an HTTP/2 resend), whatever the
// server did to them.
void check_connections(std::vector<std::string>& out, const simulation& sim) {
  const run::result& r = sim.result();
  const std::uint64_t opened = sim.net().connections().size();
  const std::uint64_t attempts = r.measured.counts.planned + r.warmup.counts.planned +
                                 sim.retried().size() + r.measured.counts.h2_unprocessed +
                                 r.warmup.counts.h2_unprocessed;
  const std::uint64_t kept = sim.settings().config.connections;
  if (opened > kept + attempts) {
    out.push_back(
        fmt::format("{} connections opened for -c {} and {} attempts", opened, kept, attempts));
  }
  if (r.protocols().opened != opened) {
    out.push_back(fmt::format("the report counts {} connections opened, the network saw {}",
                              r.protocols().opened, opened));
  }
}

// The open and hybrid models: each request index (a hybrid user's, with its step) goes out as a
// first attempt at most once, and as each of its retries at most once, whichever worker sent it
// (a claim never doubles a send, nor runs a user twice).
void check_sent_once(std::vector<std::string>& out, const simulation& sim) {
  if (sim.settings().config.kind() == run::model_kind::closed) return;
  std::map<std::tuple<std::uint64_t, std::uint16_t, std::uint32_t>, std::uint32_t> sender;
  for (const auto& s : sim.sent()) {
    if (s.t.sent.count() == 0 || s.t.resent) continue;
    const auto [it, first] =
        sender.emplace(std::make_tuple(s.t.index, s.t.step, s.t.attempt), s.worker);
    if (!first) {
      out.push_back(
          fmt::format("request {} step {} attempt {}: sent by worker {}, then again by worker {}",
                      s.t.index, s.t.step, s.t.attempt, it->second, s.worker));
    }
  }
}

std::vector<std::string> check_accounting(const simulation& sim) {
  std::vector<std::string> out;
  const run::result& r = sim.result();
  const auto& config = sim.settings().config;
  check_sum(out, "the run", r.measured.counts.planned, r.measured.counts.outcomes);
  check_sum(out, "the warm-up", r.warmup.counts.planned, r.warmup.counts.outcomes);
  auto& workers = const_cast<simulation&>(sim).engine().workers();
  for (std::size_t w = 0; w < workers.size(); ++w) {
    check_worker_sum(out, fmt::format("worker {}", w), workers[w]->recorder().measured_counts());
    check_worker_sum(out, fmt::format("worker {}'s warm-up", w),
                     workers[w]->recorder().warmup().counts);
  }
  for (const auto* phase : {&r.measured.counts, &r.warmup.counts}) {
    if (phase->claimed_in != phase->claimed_out) {
      out.push_back(fmt::format("{} requests claimed in, {} claimed out", phase->claimed_in,
                                phase->claimed_out));
    }
  }
  check_sent_once(out, sim);
  for (std::size_t n = 0; n < r.by_name.size(); ++n) {
    const std::string what = n < config.mix.size() ? config.mix[n].name : fmt::format("name {}", n);
    check_sum(out, what, r.by_name[n].planned, r.by_name[n].outcomes);
  }
  // Every measured request ended once, and the counts say the same as the tap.
  std::map<std::tuple<std::uint32_t, std::uint64_t, std::uint32_t, std::uint16_t, std::int64_t>,
           int>
      ends;
  std::array<std::uint64_t, record::outcome_count> tapped{};
  for (const auto& f : sim.finals()) {
    if (!measured(sim, f.t)) continue;
    // A hybrid step waiting for its user slot has no user yet; its arrival and step name it.
    // An open model's request index and a hybrid user's are the run's: a claimed request or
    // user must not end twice either. A closed user's is its worker's.
    const std::uint32_t by = config.kind() == run::model_kind::closed ? f.worker : 0;
    const auto key =
        std::make_tuple(by, f.t.index, f.t.arrival.count() ? 0u : f.t.user, f.t.step,
                        f.t.arrival.count() ? f.t.arrival.count() : f.t.intended.count());
    if (++ends[key] == 2) out.push_back(who(f) + ": ended more than once");
    tapped[record::index(f.outcome)]++;
  }
  check_attempts(out, sim);
  check_connections(out, sim);
  for (std::size_t i = 0; i < record::outcome_count; ++i) {
    if (tapped[i] != r.measured.counts.outcomes[i]) {
      out.push_back(fmt::format("{}: the tap saw {}, the report counts {}",
                                record::outcome_names[i], tapped[i],
                                r.measured.counts.outcomes[i]));
    }
  }
  return out;
}

std::vector<std::string> check_requests(const simulation& sim) {
  std::vector<std::string> out;
  const auto& config = sim.settings().config;
  const engine::deadline_rule rule{config.timeout, config.retry().attempt_timeout};
  const nanoseconds origin = sim.result().start.mono;
  const auto& conns = sim.net().connections();
  for (const auto& f : sim.finals()) {
    const record::request_times& t = f.t;
    const nanoseconds deadline = rule.attempt(t);
    const nanoseconds chain = rule.chain(t);
    const std::string at = ns(f.at, origin);
    const sent_attempt* a = sim.attempt(f.sim_id);
    const served_request* s = a ? sim.server().find(f.sim_id) : nullptr;
    const connection* conn = a && a->connection ? conns[a->connection - 1].get() : nullptr;
    // When the read that took the answer's last byte was stamped, and when that byte arrived.
    nanoseconds stamp{};
    nanoseconds arrived{};
    if (s && conn && s->answered && s->end_offset > 0) {
      stamp = conn->read_stamp_of(s->end_offset - 1);
      arrived = conn->arrival_of(s->end_offset - 1);
    }
    const bool close_delimited = s && s->what == fate::close_delimited;
    switch (f.outcome) {
      case outcome::ok:
      case outcome::http_error: {
        if (!s || !s->answered) {
          out.push_back(who(f) + ": " +
                        std::string(record::outcome_names[record::index(f.outcome)]) + " at " + at +
                        " but the server never answered it");
          break;
        }
        if (f.at >= deadline)
          out.push_back(who(f) + ": answered at " + at + ", at or after its deadline " +
                        ns(deadline, origin));
        if (close_delimited) {
          // Ended by the server's close: dated by the read that met the close (docs/design.md).
          if (f.at < stamp)
            out.push_back(who(f) + ": close-delimited, completed at " + at +
                          " before its body's stamp " + ns(stamp, origin));
        } else if (f.at != stamp) {
          out.push_back(who(f) + ": completed at " + at +
                        ", but the read that took its last byte was stamped " + ns(stamp, origin));
        } else if (!config.tls.enabled && sim.settings().server.http2 == false &&
                   stamp != arrived && (!conn || stamp != conn->fin_arrived)) {
          // A FIN that found the answer unread stamps the read with its own arrival.
          out.push_back(who(f) + ": HTTP/1.1 completion " + at +
                        " is not its last byte's arrival " + ns(arrived, origin));
        }
        const bool expected = config.expected_status.test(static_cast<std::size_t>(s->status));
        if (expected != (f.outcome == outcome::ok) && config.kind() != run::model_kind::hybrid) {
          out.push_back(who(f) + fmt::format(": status {} but {}", s->status,
                                             record::outcome_names[record::index(f.outcome)]));
        }
        break;
      }
      case outcome::timeout: {
        if (f.at != chain && f.at != deadline) {
          out.push_back(who(f) + ": timed out at " + at + ", not at its deadline " +
                        ns(deadline, origin));
        }
        const nanoseconds came = sim.settings().server.http2 ? stamp : arrived;
        // A head too large is no answer but a failure, dated when the worker saw it
        // (docs/design.md, "Deadlines"): seen after the deadline, it is a timeout wherever its
        // bytes came.
        const bool failure = s && s->what == fate::huge_headers;
        if (s && s->answered && !close_delimited && !failure && came.count() != 0 &&
            came < deadline) {
          out.push_back(who(f) + ": a timeout, but its answer came at " + ns(came, origin) +
                        ", before its deadline " + ns(deadline, origin));
        }
        break;
      }
      case outcome::socket_error:
        if (f.at >= deadline)
          out.push_back(who(f) + ": a socket error at " + at + ", at or after its deadline " +
                        ns(deadline, origin));
        break;
      case outcome::unfinished: {
        const auto& control = const_cast<simulation&>(sim).engine().control();
        if (!control.interrupted.load())
          out.push_back(who(f) + ": unfinished in a run nobody interrupted");
        else if (f.at.count() != control.interrupted_at_ns.load())
          out.push_back(who(f) + ": unfinished at " + at + ", not at the interruption");
        break;
      }
      case outcome::dropped:
        if (config.max_queue == 0 && !(config.hybrid() && config.hybrid()->drop_on_overload)) {
          out.push_back(who(f) + ": dropped without --max-queue or on_overload: drop");
        }
        break;
      case outcome::skipped:
        if (!config.hybrid()) out.push_back(who(f) + ": skipped outside the hybrid model");
        break;
    }
    // A request that ended in one attempt: its response time is the sum of its parts.
    const bool answered = f.outcome == outcome::ok || f.outcome == outcome::http_error;
    if (answered && t.attempt == 0 && !t.resent) {
      const bool ordered = t.intended <= t.dispatched && t.dispatched <= t.assigned &&
                           t.assigned <= t.sent && t.sent <= f.at;
      const nanoseconds parts = (t.dispatched - t.intended) + (t.assigned - t.dispatched) +
                                (t.had_to_connect ? t.sent - t.assigned : nanoseconds{0}) +
                                (f.at - t.sent);
      if (!ordered || parts != f.at - t.intended) {
        out.push_back(who(f) + fmt::format(": response time {} ns is not send lag {} + queue wait "
                                           "{} + connect time {} + service time {}",
                                           (f.at - t.intended).count(),
                                           (t.dispatched - t.intended).count(),
                                           (t.assigned - t.dispatched).count(),
                                           t.had_to_connect ? (t.sent - t.assigned).count() : 0,
                                           (f.at - t.sent).count()));
      }
    }
  }
  // Each retry is due exactly its backoff after the failure it follows.
  std::map<std::tuple<std::uint32_t, std::uint64_t, std::uint32_t, std::uint16_t, std::int64_t,
                      std::uint32_t>,
           nanoseconds>
      due;
  for (const auto& s : sim.sent()) {
    if (s.t.attempt > 0)
      due[{s.worker, s.t.index, s.t.user, s.t.step, s.t.intended.count(), s.t.attempt}] = s.t.due;
  }
  for (const auto& r : sim.retried()) {
    const nanoseconds backoff = engine::backoff_delay(config.retry(), r.t.index, r.t.attempt + 1);
    const auto it =
        due.find({r.worker, r.t.index, r.t.user, r.t.step, r.t.intended.count(), r.t.attempt + 1});
    if (it != due.end() && it->second != r.at + backoff) {
      out.push_back(fmt::format(
          "request {}: retry {} due at {}, not its backoff {} ns after the failure at {}",
          r.t.index, r.t.attempt + 1, ns(it->second, origin), backoff.count(), ns(r.at, origin)));
    }
  }
  return out;
}

std::vector<std::string> check_histograms(const simulation& sim) {
  std::vector<std::string> out;
  hdr::histogram expected(record::latency_params());
  for (const auto& f : sim.finals()) {
    if (!measured(sim, f.t) || f.outcome == outcome::dropped || f.outcome == outcome::skipped)
      continue;
    expected.record((f.at - f.t.intended).count());
  }
  const hdr::histogram& got = sim.result().measured.views[record::view::response_time];
  if (got.total_count() != expected.total_count()) {
    out.push_back(fmt::format("response time: the report holds {} samples, the tap saw {}",
                              got.total_count(), expected.total_count()));
    return out;
  }
  for (std::int32_t i = 0; i < got.counts_length(); ++i) {
    if (got.count_at_index(i) != expected.count_at_index(i)) {
      out.push_back(fmt::format("response time: slot {} holds {}, the tap's values {}", i,
                                got.count_at_index(i), expected.count_at_index(i)));
      break;
    }
  }
  return out;
}

std::vector<std::string> check_run(const simulation& sim) {
  std::vector<std::string> out = check_accounting(sim);
  for (auto& p : check_requests(sim)) out.push_back(std::move(p));
  for (auto& p : check_histograms(sim)) out.push_back(std::move(p));
  return out;
}

std::string describe(const std::vector<std::string>& problems, std::size_t most) {
  std::string text;
  for (std::size_t i = 0; i < problems.size() && i < most; ++i) text += "\n  " + problems[i];
  if (problems.size() > most) text += fmt::format("\n  ... and {} more", problems.size() - most);
  return text;
}

}  // namespace punctual::sim
