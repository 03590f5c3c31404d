#include "metrics/registry.hpp"

#include <fmt/format.h>

#include <utility>

#include "record/outcome.hpp"
#include "run/describe.hpp"

namespace punctual::metrics {
namespace {

using record::outcome_count;
using record::outcome_names;

const family info_family{"punctual_info", metric_type::gauge,
                         "The run's identity and the settings a number needs beside it."};
const family planned_family{"punctual_planned_total", metric_type::counter,
                            "Requests planned in the measured window (sessions in the hybrid "
                            "model's steps), by intended time."};
const family sent_family{"punctual_sent_total", metric_type::counter,
                         "First attempts sent of the measured window's requests."};
const family requests_family{
    "punctual_requests_total", metric_type::counter,
    "The measured window's requests by final outcome and name, counted by intended time as the "
    "JSON report counts them."};
const family warmup_family{"punctual_warmup_requests_total", metric_type::counter,
                           "The warm-up's requests by final outcome (left out of the others)."};
const family responses_family{
    "punctual_http_responses_total", metric_type::counter,
    "Whole responses by status code and name; past 64 distinct codes of a name, code=\"other\"."};
const family socket_errors_family{"punctual_socket_errors_total", metric_type::counter,
                                  "Socket errors by reason and name."};
const family sessions_family{"punctual_sessions_total", metric_type::counter,
                             "The hybrid model's sessions by scenario and outcome."};
const family response_time_family{
    "punctual_response_time_seconds", metric_type::histogram,
    "Response time from the intended send time (corrected for coordinated omission)."};
const family service_time_family{"punctual_service_time_seconds", metric_type::histogram,
                                 "Service time, from the actual send to the response."};
const family send_lag_family{"punctual_send_lag_seconds", metric_type::histogram,
                             "How late the generator got to each request (its own lateness)."};
const family queue_wait_family{"punctual_queue_wait_seconds", metric_type::histogram,
                               "How long a due request waited for a free connection."};
const family session_time_family{"punctual_session_time_seconds", metric_type::histogram,
                                 "The hybrid model's session time, from arrival to its end."};
const family target_rate_family{
    "punctual_target_rate_per_second", metric_type::gauge,
    "The planned rate now, this shard's share (users per second in the hybrid model)."};
const family in_flight_family{"punctual_requests_in_flight", metric_type::gauge,
                              "Requests sent and not yet ended."};
const family queue_depth_family{"punctual_queue_depth", metric_type::gauge,
                                "The most requests that waited for a connection at once in the "
                                "last interval."};
const family active_users_family{"punctual_active_users", metric_type::gauge,
                                 "The hybrid model's sessions of the measured window in progress."};

std::string bound_text(double seconds) {
  return fmt::format("{}", seconds);
}

class builder {
 public:
  explicit builder(snapshot& s) : s_(s) {}
  void start(const family& f) { s_.families.push_back(f); }
  void add(const std::string& name, std::vector<label> labels, double value) {
    s_.samples.push_back({name, std::move(labels), value});
  }
  void add(const std::string& name, std::vector<label> labels, std::uint64_t value) {
    add(name, std::move(labels), static_cast<double>(value));
  }
  void histogram(const family& f, const std::vector<label>& labels, const bucket_counts& b) {
    const auto cumulative = b.cumulative();
    for (std::size_t i = 0; i <= bound_count; ++i) {
      std::vector<label> with_le = labels;
      with_le.push_back({"le", i < bound_count ? bound_text(latency_bounds[i]) : "+Inf"});
      add(f.name + "_bucket", std::move(with_le), cumulative[i]);
    }
    add(f.name + "_sum", labels, b.sum_seconds);
    add(f.name + "_count", labels, b.count);
  }
  void outcomes(const std::string& name, const std::vector<label>& labels,
                const std::array<std::uint64_t, outcome_count>& counts) {
    for (std::size_t o = 0; o < outcome_count; ++o) {
      std::vector<label> l{{"outcome", std::string(outcome_names[o])}};
      l.insert(l.end(), labels.begin(), labels.end());
      add(name, std::move(l), counts[o]);
    }
  }

 private:
  snapshot& s_;
};

std::string correction_name(const run::config& c) {
  if (c.kind() != run::model_kind::closed) return "intended-start";
  return c.expected_interval() ? "expected-interval" : "none";
}

std::vector<label> name_label(const std::string& name) {
  return {{"name", name}};
}

}  // namespace

std::optional<double> target_rate(const run::config& c, std::chrono::nanoseconds since_start) {
  const schedule::plan* p = c.plan();
  if (p == nullptr || p->arrival == schedule::arrival_kind::trace) return std::nullopt;
  const double share = 1.0 / static_cast<double>(p->shards == 0 ? 1 : p->shards);
  if (p->stages.empty()) return p->rate_per_s * share;
  double from = p->start_rate_per_s;
  std::chrono::nanoseconds t = since_start;
  for (const auto& s : p->stages) {
    if (t < s.length) {
      const double part =
          std::chrono::duration<double>(t) / std::chrono::duration<double>(s.length);
      return (from + (s.rate_per_s - from) * part) * share;
    }
    t -= s.length;
    from = s.rate_per_s;
  }
  return from * share;
}

registry::registry(const run::config& c) : config_(c) {
  if (c.mix.empty()) names_.emplace_back();
  for (std::size_t i = 0; i < c.mix.size(); ++i) {
    if (c.mix[i].session) continue;
    names_.emplace_back().name = i;
  }
  if (const auto* h = c.hybrid()) {
    for (const auto& sc : h->scenarios) sessions_.push_back({sc.name, sc.session_name, {}});
  }
}

void registry::add_interval(const record::view_set& v) {
  send_lag_.add(v[record::view::send_lag]);
  queue_wait_.add(v[record::view::queue_wait]);
  if (config_.mix.empty()) {
    names_[0].response_time.add(v[record::view::response_time]);
    names_[0].service_time.add(v[record::view::service_time]);
  } else {
    for (auto& n : names_) {
      if (n.name >= v.name_count()) continue;
      n.response_time.add(v.named(n.name, record::named_view::response_time));
      n.service_time.add(v.named(n.name, record::named_view::service_time));
    }
  }
  for (auto& s : sessions_) {
    if (s.name < v.name_count())
      s.session_time.add(v.named(s.name, record::named_view::response_time));
  }
}

snapshot registry::build(const record::live_counts& counts, const gauges& g,
                         std::chrono::system_clock::time_point taken) const {
  snapshot s;
  s.taken = taken;
  builder b(s);
  const run::config& c = config_;
  const bool mixed = !c.mix.empty();
  const auto name_of = [&](const named_histograms& n) { return mixed ? c.mix[n.name].name : ""; };
  const auto by_name = [&](const named_histograms& n) -> const record::name_counts* {
    return mixed && n.name < counts.by_name.size() ? &counts.by_name[n.name] : nullptr;
  };

  b.start(info_family);
  b.add(info_family.name,
        {{"run_id", c.run_id},
         {"model", run::name(c.kind())},
         {"arrival", c.plan() ? run::name(c.plan()->arrival) : "-"},
         {"correction", correction_name(c)},
         {"protocol", run::name(c.http)},
         {"workload_digest", c.workload.digest}},
        std::uint64_t{1});
  b.start(planned_family);
  b.add(planned_family.name, {}, counts.measured.planned);
  b.start(sent_family);
  b.add(sent_family.name, {}, counts.measured.attempts.first);

  b.start(requests_family);
  for (const auto& n : names_) {
    const auto* nc = by_name(n);
    b.outcomes(requests_family.name, name_label(name_of(n)),
               nc ? nc->outcomes : counts.measured.outcomes);
  }
  b.start(warmup_family);
  b.outcomes(warmup_family.name, {}, counts.warmup.outcomes);

  b.start(responses_family);
  for (const auto& n : names_) {
    const std::string name = name_of(n);
    const auto code = [&](std::string text, std::uint64_t v) {
      b.add(responses_family.name, {{"code", std::move(text)}, {"name", name}}, v);
    };
    if (const auto* nc = by_name(n)) {
      for (std::uint32_t i = 0; i < nc->statuses.used; ++i)
        code(std::to_string(nc->statuses.codes[i]), nc->statuses.counts[i]);
      if (nc->statuses.other > 0) code("other", nc->statuses.other);
    } else {
      for (std::size_t st = 0; st < counts.measured.status.size(); ++st) {
        if (counts.measured.status[st] > 0) code(std::to_string(st), counts.measured.status[st]);
      }
    }
  }
  b.start(socket_errors_family);
  for (const auto& n : names_) {
    const auto* nc = by_name(n);
    const auto& reasons = nc ? nc->socket_errors : counts.measured.socket_errors;
    for (std::size_t r = 0; r < record::socket_reason_count; ++r) {
      if (reasons[r] == 0) continue;
      b.add(socket_errors_family.name,
            {{"reason", std::string(record::socket_reason_names[r])}, {"name", name_of(n)}},
            reasons[r]);
    }
  }
  b.start(sessions_family);
  std::uint64_t active = 0;
  for (const auto& sc : sessions_) {
    if (sc.name >= counts.by_name.size()) continue;
    const auto& nc = counts.by_name[sc.name];
    b.outcomes(sessions_family.name, {{"scenario", sc.scenario}}, nc.outcomes);
    std::uint64_t ended = 0;
    for (const auto o : nc.outcomes) ended += o;
    active += nc.planned > ended ? nc.planned - ended : 0;
  }

  b.start(response_time_family);
  for (const auto& n : names_)
    b.histogram(response_time_family, name_label(name_of(n)), n.response_time);
  b.start(service_time_family);
  for (const auto& n : names_)
    b.histogram(service_time_family, name_label(name_of(n)), n.service_time);
  b.start(send_lag_family);
  b.histogram(send_lag_family, {}, send_lag_);
  b.start(queue_wait_family);
  b.histogram(queue_wait_family, {}, queue_wait_);
  b.start(session_time_family);
  for (const auto& sc : sessions_)
    b.histogram(session_time_family, {{"scenario", sc.scenario}}, sc.session_time);

  b.start(target_rate_family);
  if (const auto rate = target_rate(c, g.since_start)) b.add(target_rate_family.name, {}, *rate);
  b.start(in_flight_family);
  b.add(in_flight_family.name, {}, counts.in_flight);
  b.start(queue_depth_family);
  b.add(queue_depth_family.name, {}, g.queue_depth);
  b.start(active_users_family);
  if (c.hybrid()) b.add(active_users_family.name, {}, active);
  return s;
}

std::vector<family> registry::families() {
  return {info_family,          planned_family,      sent_family,          requests_family,
          warmup_family,        responses_family,    socket_errors_family, sessions_family,
          response_time_family, service_time_family, send_lag_family,      queue_wait_family,
          session_time_family,  target_rate_family,  in_flight_family,     queue_depth_family,
          active_users_family};
}

}  // namespace punctual::metrics
