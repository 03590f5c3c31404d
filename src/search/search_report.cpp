#include "search/search_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/text.hpp"

namespace punctual::search {

namespace {

using analysis::duration_text;

// 4200 -> "4,200"; rates below 100 keep one decimal when they have one.
std::string rate_text(double rate) {
  if (rate < 100 && std::round(rate) != rate) return fmt::format("{:.1f}", rate);
  std::string digits = std::to_string(std::llround(rate));
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
  return digits;
}

std::string unit_of(const context& ctx) {
  return ctx.hybrid ? "x" : " req/s";
}

std::string slo_name(const slo_figure& s) {
  const auto cut = s.text.find_first_of("<>=");
  return s.text.substr(0, cut);
}

// "p99 63ms [58ms..71ms]" or "errors 3.2%".
std::string figure_text(const slo_figure& s) {
  if (!s.percentile) {
    const bool count = s.text.find('%') == std::string::npos;
    return slo_name(s) + " " +
           (count ? analysis::number_text(s.point) : analysis::number_text(s.point) + "%");
  }
  return slo_name(s) + " " + duration_text(s.point) + " [" + duration_text(s.lo) + ".." +
         duration_text(s.bound) + "]";
}

std::string failures_text(const step_record& r) {
  std::string out;
  for (const auto& s : r.facts.slos) {
    if (s.pass_bound) continue;
    if (!out.empty()) out += ", ";
    const auto name = slo_name(s);
    out += figure_text(s).insert(name.size(), " at");
  }
  if (out.empty()) out = r.note.empty() ? std::string(verdict_name(r.counted)) : r.note;
  return out;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

const step_record* counted_step_at(const outcome& o, double rate) {
  for (auto it = o.steps.rbegin(); it != o.steps.rend(); ++it) {
    if (it->plan.rate_per_s == rate && it->counted == verdict::fail) return &*it;
  }
  return nullptr;
}

std::string limit_text(const outcome& o, const context& ctx) {
  const std::string unit = unit_of(ctx);
  const std::string at = o.steps.empty() ? "" : rate_text(o.steps.back().plan.rate_per_s) + unit;
  const std::string sofar = o.sustained ? "; sustained so far: " + rate_text(*o.sustained) + unit
                                        : "; no rate sustained before it";
  if (o.why == limit::generator) {
    return "the generator, not the server, is the limit at " + at + ": " + o.generator_check +
           ". Use more threads (-t), --precision coarse, or shards (--shard)" + sofar;
  }
  if (o.why == limit::connections) {
    return "the connection limit (--max-connections) is reached at " + at + ": " +
           o.generator_check + sofar;
  }
  return "interrupted after " + std::to_string(o.steps.size()) + " steps" + sofar;
}

}  // namespace

std::string answer_line(const outcome& o, const context& ctx) {
  const std::string unit = unit_of(ctx);
  const std::string slos = joined(ctx.slos);
  if (o.why == limit::generator || o.why == limit::connections || o.why == limit::interrupted)
    return limit_text(o, ctx);
  if (!o.sustained && !o.failed) {
    return "no step was decided before " + o.stopped_by + " ended the search (no rate " +
           "sustained, none failed)";
  }
  if (!o.sustained) {
    const step_record* r = o.failed ? counted_step_at(o, *o.failed) : nullptr;
    return "fails even at --from " + (o.failed ? rate_text(*o.failed) : std::string("?")) + unit +
           " under " + slos + (r ? " (" + failures_text(*r) + ")" : "");
  }
  std::string line = "sustains " + rate_text(*o.sustained) + unit + " under " + slos;
  if (o.failed) {
    const step_record* r = counted_step_at(o, *o.failed);
    line += " (bracket " + rate_text(*o.sustained) + ".." + rate_text(*o.failed) + "; " +
            rate_text(*o.failed) + " failed " + (r ? failures_text(*r) : "") + ")";
  } else if (o.why == limit::to) {
    line += " (the --to cap: no step failed up to it)";
  } else {
    line += " (at least: " + o.stopped_by + " ended the search before any step failed)";
  }
  if (ctx.hybrid) line += "; peak " + rate_text(*o.sustained * ctx.hybrid_peak_per_s) + " users/s";
  return line;
}

namespace {

std::vector<std::string> row_of(std::size_t i, const step_record& r, std::size_t slo_count) {
  const auto& f = r.facts;
  std::vector<std::string> row{std::to_string(i + 1),        r.plan.why,
                               rate_text(r.plan.rate_per_s), rate_text(f.sent_per_s),
                               rate_text(f.completed_per_s), std::to_string(r.plan.connections),
                               f.valid ? "yes" : "no"};
  for (std::size_t s = 0; s < slo_count; ++s)
    row.push_back(s < f.slos.size() ? figure_text(f.slos[s]) : "-");
  row.push_back(analysis::number_text(100 * f.error_share) + "%");
  row.push_back(std::string(verdict_name(r.counted)));
  row.push_back(r.cooldown.count() == 0 && r.recovered
                    ? "-"
                    : duration_text(r.cooldown) + (r.recovered ? "" : " (not recovered)"));
  return row;
}

void write_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(widths[c] - row[c].size() + 2, ' ');
    }
    out << line << '\n';
  }
}

}  // namespace

void write_text(std::ostream& out, const outcome& o, const context& ctx) {
  out << "search: the highest constant "
      << (ctx.hybrid ? "scale of the scenario's arrivals" : "arrival rate")
      << " at which every SLO passes on its " << ctx.bound << " bound\n";
  if (!ctx.added_slo.empty())
    out << "note: search added --slo '" << ctx.added_slo
        << "' (no SLO on the error share was given; a server that fails fast would otherwise "
           "sustain any rate)\n";
  out << "assumes: latency grows with the rate (a failure below a passing rate is re-run once)\n";
  std::size_t slo_count = 0;
  for (const auto& r : o.steps) slo_count = std::max(slo_count, r.facts.slos.size());
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head{
      "step", "why", ctx.hybrid ? "scale" : "offered/s", "sent/s", "completed/s", "conns", "valid"};
  for (std::size_t s = 0; s < slo_count && s < ctx.slos.size(); ++s)
    head.push_back(ctx.slos[s] + " [95%]");
  while (head.size() < 7 + slo_count) head.push_back("slo");
  head.insert(head.end(), {"errors", "verdict", "cooldown"});
  rows.push_back(head);
  for (std::size_t i = 0; i < o.steps.size(); ++i) rows.push_back(row_of(i, o.steps[i], slo_count));
  write_table(out, rows);
  for (std::size_t i = 0; i < o.steps.size(); ++i) {
    if (!o.steps[i].note.empty()) out << "step " << i + 1 << ": " << o.steps[i].note << '\n';
  }
  for (const auto& u : o.unstable) out << "unstable: " << u << " (the lower rate wins)\n";
  out << answer_line(o, ctx) << '\n';
  out << "took " << duration_text(o.total) << " over " << o.steps.size() << " steps (ended by "
      << o.stopped_by << ")\n";
}

namespace {

nlohmann::ordered_json optional_number(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json step_json(std::size_t i, const step_record& r) {
  const auto& f = r.facts;
  nlohmann::ordered_json slos = nlohmann::ordered_json::array();
  for (const auto& s : f.slos) {
    slos.push_back(
        {{"text", s.text},
         {"point", s.point},
         {"lo", s.lo},
         {"bound", s.bound},
         {"threshold", s.threshold},
         {"unit",
          s.percentile ? "ns" : (s.text.find('%') != std::string::npos ? "percent" : "count")},
         {"pass_point", s.pass_point},
         {"pass", s.pass_bound},
         {"service_time_fails", s.service_time_fails}});
  }
  return {
      {"index", i + 1},
      {"why", r.plan.why},
      {"rate_per_s", r.plan.rate_per_s},
      {"connections", r.plan.connections},
      {"warmup_ns", r.plan.warmup.count()},
      {"duration_ns", r.plan.duration.count()},
      {"cooldown_ns", r.cooldown.count()},
      {"recovered", r.recovered},
      {"verdict", verdict_name(r.first)},
      {"counted", verdict_name(r.counted)},
      {"note", r.note},
      {"valid", f.valid},
      {"failed_checks", f.failed_checks},
      {"rates_per_s",
       {{"planned", f.planned_per_s}, {"sent", f.sent_per_s}, {"completed", f.completed_per_s}}},
      {"error_share", f.error_share},
      {"slos", slos},
      {"report", f.report}};
}

}  // namespace

nlohmann::ordered_json to_json(const outcome& o, const context& ctx) {
  nlohmann::ordered_json steps = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < o.steps.size(); ++i) steps.push_back(step_json(i, o.steps[i]));
  nlohmann::ordered_json search{
      {"sustained_rate_per_s", optional_number(o.sustained)},
      {"bracket", {optional_number(o.sustained), optional_number(o.failed)}},
      {"limit", limit_name(o.why)},
      {"stopped_by", o.stopped_by},
      {"answer", answer_line(o, ctx)},
      {"slos", ctx.slos},
      {"added_slo", ctx.added_slo.empty() ? nlohmann::ordered_json(nullptr)
                                          : nlohmann::ordered_json(ctx.added_slo)},
      {"slo_bound", ctx.bound},
      {"assumption", "latency grows with the rate"},
      {"unstable", o.unstable},
      {"generator_check", o.generator_check.empty() ? nlohmann::ordered_json(nullptr)
                                                    : nlohmann::ordered_json(o.generator_check)},
      {"recovery_threshold_ns", o.recovery_threshold.count()},
      {"total_ns", o.total.count()},
      {"steps", steps}};
  if (ctx.hybrid) {
    search["scale"] = "factor";
    search["peak_users_per_s"] = o.sustained
                                     ? nlohmann::ordered_json(*o.sustained * ctx.hybrid_peak_per_s)
                                     : nlohmann::ordered_json(nullptr);
  }
  return {{"punctual", {{"version", "0.1.0"}}},
          {"schema_version", 1},
          {"command_line", ctx.command_line},
          {"target", ctx.target},
          {"search", search}};
}

}  // namespace punctual::search
