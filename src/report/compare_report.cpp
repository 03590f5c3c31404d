// The comparison itself: the workload check, the validity check, one row per figure and name,
// Holm's correction over the rows, and each row's verdict (docs/design.md, "Comparing two runs").
#include "report/compare_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

#include "analysis/text.hpp"
#include "punctual/histogram/codec.hpp"
#include "run/workload_identity.hpp"
#include "schedule/prng.hpp"

namespace punctual::report {
namespace {

using json = nlohmann::ordered_json;
using analysis::contrast;
using analysis::run_estimate;

constexpr double compared_percentiles[] = {50, 90, 99, 99.9};
constexpr std::string_view session_suffix = ".session";

const json& at(const json& doc, std::string_view key, const std::string& file) {
  const auto it = doc.find(std::string(key));
  if (it == doc.end())
    throw compare_refused(file + ": not a run report (no " + std::string(key) + ")");
  return *it;
}

std::vector<run::workload_field> fields_of(const json& workload) {
  std::vector<run::workload_field> out;
  for (const auto& [name, value] : workload["fields"].items())
    out.push_back({name, value.is_string() ? value.get<std::string>() : value.dump()});
  return out;
}

// The workload check: the same digest, or a refusal naming the first field that differs.
json workload_section(const compare_input& base, const compare_input& cand, bool allow_different) {
  const json& wb = at(base.doc, "workload", base.name);
  const json& wc = at(cand.doc, "workload", cand.name);
  const run::workload_identity ib{fields_of(wb), wb.value("digest", "")};
  const run::workload_identity ic{fields_of(wc), wc.value("digest", "")};
  const auto difference = run::workload_difference(ic, ib);
  if (difference && !allow_different) {
    throw compare_refused("the runs' workloads differ (candidate vs base): " + *difference +
                          " (--allow-different compares them anyway)");
  }
  json differed = json::array();
  for (const auto& f : ib.fields) {
    const auto it = std::find_if(ic.fields.begin(), ic.fields.end(),
                                 [&](const auto& g) { return g.name == f.name; });
    const std::string other = it == ic.fields.end() ? "none" : it->value;
    if (other != f.value)
      differed.push_back({{"field", f.name}, {"base", f.value}, {"candidate", other}});
  }
  json varied = json::array();
  for (const char* key : {"seed", "duration_ns", "warmup_ns", "threads", "connections"}) {
    if (wb.value(key, json()) != wc.value(key, json()))
      varied.push_back(
          {{"field", key}, {"base", wb.value(key, json())}, {"candidate", wc.value(key, json())}});
  }
  return {{"same", !difference.has_value()},
          {"digest_base", ib.digest},
          {"digest_candidate", ic.digest},
          {"differences", differed},
          {"varied", varied}};
}

// A run as the comparison names it: its file, id, validity (the gating checks that failed).
json run_section(const compare_input& in) {
  json reasons = json::array();
  const json& validity = at(in.doc, "validity", in.name);
  for (const auto& check : validity["checks"]) {
    if (check.value("level", "") == "gating" && !check.value("pass", true)) {
      const std::string note = check.value("note", "");
      reasons.push_back(check.value("name", "") + (note.empty() ? "" : ": " + note));
    }
  }
  const json& schedule = at(in.doc, "schedule", in.name);
  return {{"file", in.name},
          {"run_id", in.doc.value("run_id", "")},
          {"valid", validity.value("valid", false)},
          {"invalid_reasons", reasons},
          {"interrupted", in.doc.value("interrupted", false)},
          {"window_ns", schedule.value("window_ns", std::int64_t{0})},
          {"intervals", in.streams.contains("") ? in.streams.at("").intervals() : 0}};
}

// Row seeds: fixed, so that a comparison is the same every time it is made.
std::uint64_t seed_for(std::size_t row, int side) {
  std::uint64_t state = 0x636f6d7061726500ULL + row * 2 + static_cast<std::uint64_t>(side);
  return schedule::splitmix64(state);
}

struct row {
  std::string name;    // "" for the whole run
  std::string metric;  // p50 ... errors
  run_estimate base;
  run_estimate cand;
  std::string note;
  bool censored = false;  // a percentile at or above the share of timeouts: a lower bound
};

// A name's tag in the .hlog (run_command's write_interval) and its entry in the report.
std::string tag_of_name(const json& doc, const std::string& name) {
  if (name.ends_with(session_suffix) && doc.contains("sessions"))
    return "session_time." + name.substr(0, name.size() - session_suffix.size());
  return "response_time." + name;
}

const json* entry_of_name(const json& doc, const std::string& name) {
  if (doc.contains("by_name") && doc["by_name"].contains(name)) return &doc["by_name"][name];
  if (name.ends_with(session_suffix) && doc.contains("sessions")) {
    const std::string scenario = name.substr(0, name.size() - session_suffix.size());
    if (doc["sessions"].contains(scenario)) return &doc["sessions"][scenario];
  }
  return nullptr;
}

std::vector<std::string> compared_names(const json& doc) {
  std::vector<std::string> names;
  if (doc.contains("histograms") && doc["histograms"].contains("names")) {
    for (const auto& [name, views] : doc["histograms"]["names"].items()) names.push_back(name);
  }
  return names;
}

bool censored_at(const json& view, double percentile) {
  const double count = view.value("count", 0.0);
  const double censored = view.value("censored", 0.0);
  return count > 0 && censored > 0 && percentile >= 100.0 * (1.0 - censored / count) - 1e-9;
}

const analysis::interval_stream& stream_of(const compare_input& in, const std::string& tag) {
  static const analysis::interval_stream none;
  const auto it = in.streams.find(tag);
  return it == in.streams.end() ? none : it->second;
}

void add_percentile_rows(const compare_input& b, const compare_input& c, const std::string& name,
                         const std::string& tag, const json* view_b, const json* view_c,
                         std::vector<row>& rows) {
  const auto eb = analysis::bootstrap_percentiles(stream_of(b, tag), compared_percentiles,
                                                  seed_for(rows.size(), 0));
  const auto ec = analysis::bootstrap_percentiles(stream_of(c, tag), compared_percentiles,
                                                  seed_for(rows.size(), 1));
  for (std::size_t k = 0; k < std::size(compared_percentiles); ++k) {
    row r{name, "p" + analysis::percentile_label(compared_percentiles[k]), eb[k], ec[k], {}, false};
    r.censored = (view_b && censored_at(*view_b, compared_percentiles[k])) ||
                 (view_c && censored_at(*view_c, compared_percentiles[k]));
    if (!r.base.usable() || !r.cand.usable())
      r.note = fmt::format("too few intervals in the .hlog to judge (at least {} each)",
                           analysis::compare_min_intervals);
    rows.push_back(std::move(r));
  }
}

struct error_counts {
  std::int64_t errors = 0;
  std::int64_t judged = 0;  // answered or failed: ok + errors
};

error_counts errors_of(const json& outcomes) {
  const auto n = [&](const char* k) { return outcomes.value(k, std::int64_t{0}); };
  const std::int64_t errors = n("http_error") + n("socket_error") + n("timeout");
  return {errors, errors + n("ok")};
}

// The whole run's error share, bootstrapped over the timeline's seconds; its point is the
// outcomes' share (accounted by intended time, as every report counts them).
run_estimate run_error_share(const compare_input& in, std::uint64_t seed) {
  std::vector<std::pair<std::int64_t, std::int64_t>> seconds;
  for (const auto& s : in.doc["series"]["per_second"]) {
    const std::int64_t e =
        s.value("errors", std::int64_t{0}) + s.value("timeouts", std::int64_t{0});
    seconds.emplace_back(e, e + s.value("ok", std::int64_t{0}));
  }
  run_estimate r = analysis::bootstrap_share(seconds, seed);
  const error_counts whole = errors_of(in.doc["outcomes"]);
  if (whole.judged > 0)
    r.point = static_cast<double>(whole.errors) / static_cast<double>(whole.judged);
  return r;
}

// The smoothed binomial variance of a share (half an error added, so that none is not certainty).
double binomial_variance(const error_counts& n) {
  const double p = (static_cast<double>(n.errors) + 0.5) / (static_cast<double>(n.judged) + 1.0);
  return p * (1 - p) / (static_cast<double>(n.judged) + 1.0);
}

// A name's error share: the timeline has no per-name seconds, so its variance is the binomial
// one times the whole run's design effect (how much the run's seconds inflate its own share's
// variance over the binomial), never less than the binomial.
run_estimate name_error_share(const json* entry, const compare_input& in,
                              const run_estimate& whole) {
  run_estimate r;
  if (!entry) return r;
  const error_counts n = errors_of((*entry)["outcomes"]);
  const error_counts all = errors_of(in.doc["outcomes"]);
  r.point = n.judged > 0 ? static_cast<double>(n.errors) / static_cast<double>(n.judged) : 0.0;
  const double effect =
      whole.usable() ? std::max(1.0, whole.variance / binomial_variance(all)) : 1.0;
  r.variance = binomial_variance(n) * effect;
  r.blocks = whole.blocks;
  return r;
}

std::vector<row> build_rows(const compare_input& b, const compare_input& c,
                            const std::string& view) {
  std::vector<row> rows;
  const std::string tag = view == "response_time" ? "" : view;
  add_percentile_rows(b, c, "", tag, &b.doc["latency"][view], &c.doc["latency"][view], rows);
  const run_estimate wb = run_error_share(b, seed_for(rows.size(), 0));
  const run_estimate wc = run_error_share(c, seed_for(rows.size(), 1));
  rows.push_back({"", "errors", wb, wc, {}, false});
  if (!wb.usable() || !wc.usable()) rows.back().note = "too few seconds in the timeline to judge";
  if (view != "response_time") return rows;  // the .hlog keeps names' response time alone
  const auto names_c = compared_names(c.doc);
  for (const auto& name : compared_names(b.doc)) {
    if (std::find(names_c.begin(), names_c.end(), name) == names_c.end()) continue;
    const json* eb = entry_of_name(b.doc, name);
    const json* ec = entry_of_name(c.doc, name);
    const std::string key = name.ends_with(session_suffix) ? "session_time" : "response_time";
    add_percentile_rows(b, c, name, tag_of_name(b.doc, name), eb ? &(*eb)[key] : nullptr,
                        ec ? &(*ec)[key] : nullptr, rows);
    rows.push_back(
        {name, "errors", name_error_share(eb, b, wb), name_error_share(ec, c, wc), {}, false});
  }
  return rows;
}

// The contrast whose sign says whether a row crossed its threshold on one side: candidate −
// (1 ± r) × base for a relative threshold, candidate − base ∓ a for an absolute one.
std::optional<contrast> crossing(const row& r, const compare_threshold& t, int side) {
  if (t.relative) return analysis::contrast_of(r.base, r.cand, 1.0 + side * t.value, 0.0);
  return analysis::contrast_of(r.base, r.cand, 1.0, side * t.value);
}

json threshold_json(const compare_threshold& t, bool share) {
  if (t.relative) return {{"relative", t.value}};
  return {{share ? "absolute_share" : "absolute_ns", t.value}};
}

std::string settle_note(double factor, std::int64_t window_ns) {
  if (!std::isfinite(factor))
    return "the difference sits exactly at the threshold: no run length settles it";
  return fmt::format(
      "runs of about {} each would settle it",
      analysis::duration_text(std::ceil(factor * 1.1) * static_cast<double>(window_ns)));
}

json rows_json(const std::vector<row>& rows, const compare_settings& s, bool judged,
               std::int64_t window_ns) {
  std::vector<std::optional<contrast>> up;
  std::vector<std::optional<contrast>> down;
  std::vector<double> p_up;
  std::vector<double> p_down;
  for (const auto& r : rows) {
    const auto& t = s.thresholds.find(r.metric)->second;
    up.push_back(crossing(r, t, +1));
    down.push_back(crossing(r, t, -1));
    p_up.push_back(up.back() ? up.back()->p_above_zero() : 1.0);
    p_down.push_back(down.back() ? down.back()->p_below_zero() : 1.0);
  }
  const auto adj_up = analysis::holm_adjust(p_up);
  const auto adj_down = analysis::holm_adjust(p_down);
  json out = json::array();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const row& r = rows[i];
    const bool share = r.metric == "errors";
    const auto& t = s.thresholds.find(r.metric)->second;
    const auto diff = analysis::contrast_of(r.base, r.cand);
    std::string verdict = "inconclusive";
    json settle = nullptr;
    std::string note = r.note;
    if (!judged) {
      verdict = "not judged";
    } else if (adj_up[i] <= analysis::compare_alpha) {
      verdict = "regression";
    } else if (adj_down[i] <= analysis::compare_alpha) {
      verdict = "improvement";
    } else if (up[i] && down[i] && up[i]->hi < 0 && down[i]->lo > 0) {
      verdict = "no significant change";
    } else if (up[i] && down[i]) {
      // The side the point lies on decides what a longer run would show.
      const double factor = up[i]->point > 0 ? up[i]->settle_factor()
                            : down[i]->point < 0
                                ? down[i]->settle_factor()
                                : std::max(up[i]->settle_factor(), down[i]->settle_factor());
      if (std::isfinite(factor))
        settle = static_cast<std::int64_t>(std::ceil(factor * 1.1) * window_ns);
      note = settle_note(factor, window_ns);
    }
    const double difference = r.cand.point - r.base.point;
    json j{{"name", r.name},
           {"metric", r.metric},
           {"unit", share ? "share" : "ns"},
           {"base", r.base.point},
           {"candidate", r.cand.point},
           {"difference", difference},
           {"relative_difference", r.base.point > 0 ? json(difference / r.base.point) : json()},
           {"ci95", diff ? json::array({diff->lo, diff->hi}) : json()},
           {"threshold", threshold_json(t, share)},
           {"threshold_value", t.relative ? t.value * r.base.point : t.value},
           {"p_regression", p_up[i]},
           {"p_regression_holm", adj_up[i]},
           {"p_improvement_holm", adj_down[i]},
           {"verdict", verdict},
           {"lower_bound", r.censored},
           {"settle_window_ns", settle},
           {"note", note}};
    out.push_back(std::move(j));
  }
  return out;
}

json spectrum_of(const compare_input& in, const std::string& view) {
  static constexpr double points[] = {0,    25,   50,    75,    90,     95, 99,
                                      99.5, 99.9, 99.95, 99.99, 99.999, 100};
  json out = json::array();
  const json& views = in.doc["histograms"]["views"];
  if (!views.contains(view)) return out;
  auto decoded = hdr::decode_compressed_base64(views[view].get<std::string>());
  if (!decoded)
    throw compare_refused(in.name + ": histograms.views." + view + " cannot be decoded");
  const hdr::histogram& h = *decoded.value;
  for (const double p : points) {
    if (h.total_count() == 0) break;
    out.push_back({p, h.value_at_percentile(p)});
  }
  return out;
}

json verdict_json(const json& rows, const json& runs, const compare_settings& s, int& exit_code) {
  int regressions = 0;
  int improvements = 0;
  int inconclusive = 0;
  std::vector<std::string> regressed;
  for (const auto& r : rows) {
    const std::string v = r["verdict"];
    const std::string label =
        (r["name"].get<std::string>().empty() ? "" : r["name"].get<std::string>() + " ") +
        r["metric"].get<std::string>();
    if (v == "regression") {
      ++regressions;
      regressed.push_back(label);
    }
    improvements += v == "improvement";
    inconclusive += v == "inconclusive";
  }
  std::vector<std::string> invalid;
  for (const auto& run : runs) {
    if (!run["valid"].get<bool>()) invalid.push_back(run["file"].get<std::string>());
  }
  std::string result;
  std::string line;
  if (!invalid.empty()) {
    result = "invalid";
    exit_code = 4;
    line = fmt::format("no verdict: {} INVALID (a regression is never called from an invalid run)",
                       fmt::join(invalid, " and "));
  } else if (regressions > 0) {
    result = "regression";
    exit_code = 3;
    line = fmt::format("REGRESSION in {} of {} rows: {}", regressions, rows.size(),
                       fmt::join(regressed, ", "));
  } else if (inconclusive > 0) {
    result = "inconclusive";
    exit_code = s.inconclusive_fails ? 3 : 0;
    line = fmt::format("no regression found, but {} of {} rows are inconclusive{}", inconclusive,
                       rows.size(), s.inconclusive_fails ? " (--inconclusive fail)" : "");
  } else {
    result = "no regression";
    exit_code = 0;
    line =
        fmt::format("no regression: {} rows within their thresholds{}", rows.size() - improvements,
                    improvements ? fmt::format(", {} improved", improvements) : "");
  }
  return {{"result", result},
          {"line", line},
          {"exit_code", exit_code},
          {"regressions", regressions},
          {"improvements", improvements},
          {"inconclusive", inconclusive}};
}

double parse_number(std::string_view text, const std::string& entry) {
  double v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size() || !(v >= 0) || !std::isfinite(v))
    throw compare_refused("--max-regression: '" + entry +
                          "': expected a number, e.g. p99:+10% or p50:+2ms");
  return v;
}

compare_threshold parse_threshold(std::string_view text, bool errors, const std::string& entry) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.ends_with("%")) {
    const double v = parse_number(text.substr(0, text.size() - 1), entry) / 100.0;
    return errors ? compare_threshold{false, v} : compare_threshold{true, v};
  }
  if (errors)
    throw compare_refused("--max-regression: '" + entry +
                          "': errors take percentage points, e.g. errors:+0.5%");
  static constexpr std::pair<std::string_view, double> units[] = {
      {"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
  for (const auto& [unit, scale] : units) {
    if (text.ends_with(unit))
      return {false, parse_number(text.substr(0, text.size() - unit.size()), entry) * scale};
  }
  throw compare_refused("--max-regression: '" + entry +
                        "': expected a % or a duration (ns, us, ms, s)");
}

}  // namespace

void compare_input::add_interval(const hdr::interval_log& header, const hdr::log_interval& iv) {
  if (!(iv.length_seconds > 0)) return;
  const double offset =
      (iv.start_unix_seconds - header.start_time_unix_seconds) / iv.length_seconds;
  if (!(std::fabs(offset) < 1e9)) return;
  streams[iv.tag].add(std::llround(offset), iv.value);
}

std::map<std::string, compare_threshold, std::less<>> default_thresholds() {
  std::map<std::string, compare_threshold, std::less<>> t;
  for (const auto metric : compare_metrics) t[std::string(metric)] = {true, 0.05};
  t["errors"] = {false, 0.005};
  return t;
}

std::map<std::string, compare_threshold, std::less<>> parse_max_regression(std::string_view text) {
  auto t = default_thresholds();
  for (bool more = !text.empty(); more;) {
    const auto comma = text.find(',');
    const std::string entry(text.substr(0, comma));
    more = comma != std::string_view::npos;
    if (more) text.remove_prefix(comma + 1);
    const auto colon = entry.find(':');
    const std::string key = entry.substr(0, colon);
    if (colon == std::string::npos || !t.contains(key)) {
      throw compare_refused(
          "--max-regression: '" + entry +
          "': expected FIGURE:THRESHOLD with FIGURE one of p50, p90, p99, p99.9, errors");
    }
    t[key] = parse_threshold(std::string_view(entry).substr(colon + 1), key == "errors", entry);
  }
  return t;
}

comparison compare_runs(const compare_input& base, const compare_input& candidate,
                        const compare_settings& s) {
  if (s.view != "response_time" && s.view != "service_time")
    throw compare_refused("--view: expected response_time or service_time, not '" + s.view + "'");
  json workload = workload_section(base, candidate, s.allow_different);
  for (const auto* in : {&base, &candidate}) {
    at(in->doc, "series", in->name);
    at(in->doc, "outcomes", in->name);
    if (!stream_of(*in, s.view == "response_time" ? "" : s.view).intervals())
      throw compare_refused(in->name + ": its interval log has no " + s.view + " intervals");
  }
  json runs = json::array({run_section(base), run_section(candidate)});
  const bool judged = runs[0]["valid"].get<bool>() && runs[1]["valid"].get<bool>();
  const std::int64_t window =
      std::max(runs[0]["window_ns"].get<std::int64_t>(), runs[1]["window_ns"].get<std::int64_t>());
  const json rows = rows_json(build_rows(base, candidate, s.view), s, judged, window);
  json thresholds = json::object();
  for (const auto& [metric, t] : s.thresholds)
    thresholds[metric] = threshold_json(t, metric == "errors");
  comparison out;
  json verdict = verdict_json(rows, runs, s, out.exit_code);
  out.doc = {{"schema_version", 1},
             {"punctual", {{"version", "0.1.0"}}},
             {"kind", "compare"},
             {"command_line", s.command_line},
             {"base", runs[0]},
             {"candidate", runs[1]},
             {"workload", workload},
             {"method",
              {{"name", "circular block bootstrap over per-interval histograms"},
               {"view", s.view},
               {"confidence", analysis::compare_confidence},
               {"family_wise_alpha", analysis::compare_alpha},
               {"correction", "holm"},
               {"resamples", analysis::compare_resamples}}},
             {"thresholds", thresholds},
             {"rows", rows},
             {"spectra",
              {{"base", spectrum_of(base, s.view)}, {"candidate", spectrum_of(candidate, s.view)}}},
             {"verdict", verdict}};
  return out;
}

}  // namespace punctual::report
