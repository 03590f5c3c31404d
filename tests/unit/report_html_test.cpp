// The HTML report, rendered from stored JSON reports with the series, histograms and worst
// second added here as the JSON writer writes them.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "punctual/histogram/codec.hpp"
#include "punctual/histogram/iteration.hpp"
#include "record/view_set.hpp"
#include "report/html_report.hpp"
#include "report/html_sections.hpp"

namespace punctual::report {
namespace {

using json = nlohmann::ordered_json;

json load_report(const std::string& name) {
  std::ifstream in(std::string(PUNCTUAL_TEST_DATA) + "/reports/" + name);
  EXPECT_TRUE(in) << name;
  return json::parse(in);
}

// A long-tailed latency distribution: mostly 50-150 µs, a few stalls up to ~1 s.
hdr::histogram tailed_histogram(std::int64_t base_ns, int samples) {
  hdr::histogram h(record::latency_params());
  for (int i = 0; i < samples; ++i) {
    const std::int64_t jitter = (i * 7919) % 100'000;
    h.record(i % 500 == 0 ? base_ns * 1000 + jitter * 50 : base_ns + jitter);
  }
  return h;
}

json series_rows(int rows) {
  json per_second = json::array();
  for (int i = 0; i < rows; ++i) {
    const std::int64_t wobble = (i * 104'729) % 900'000;
    per_second.push_back({{"second", i},
                          {"offset_s", i},
                          {"unix_s", 1764550000.0 + i},
                          {"planned", 1000},
                          {"sent", 1000 - i % 3},
                          {"attempts", 1000 + i % 7},
                          {"completed", 998},
                          {"ok", 990},
                          {"errors", 8},
                          {"timeouts", 2},
                          {"dropped", 0},
                          {"queue_depth_max", 3},
                          {"response_time",
                           {{"count", 1000},
                            {"p50_ns", 80'000 + wobble},
                            {"p99_ns", 900'000 + wobble},
                            {"max_ns", 4'000'000 + 3 * wobble}}},
                          {"service_time",
                           {{"count", 998},
                            {"p50_ns", 70'000 + wobble},
                            {"p99_ns", 300'000 + wobble},
                            {"max_ns", 1'000'000 + wobble}}},
                          {"send_lag_p99_ns", 12'345 + wobble / 10},
                          {"queue_wait_p99_ns", wobble / 100}});
  }
  return per_second;
}

// The parts of open-constant.json the tests below assert on, pinned: the stored reports are
// regenerated from real runs, and their figures change with each.
void pin_figures(json& r) {
  r["target"] = "http://127.0.0.1:37541/";
  r["command_line"] = {"punctual", "run",    "-t1",    "-c2",      "-d1s",
                       "-R200",    "--json", "x.json", r["target"]};
  r["model"]["schedule"] = "constant arrivals, 200 req/s";
  r["schedule"]["planned"] = 200;
  for (auto& [name, n] : r["outcomes"].items()) n = name == "ok" ? 200 : 0;
  r["validity"] = {{"valid", false},
                   {"checks",
                    {{{"name", "send_lag_p99"},
                      {"figure", 3827711.0},
                      {"relation", "<="},
                      {"threshold", 1e6},
                      {"unit", "ns"},
                      {"level", "gating"},
                      {"pass", false},
                      {"note", "the generator fell behind"}}}}};
  r["latency"]["response_time"]["percentiles_ci_ns"]["99"] = {202880, 3952639};
  r["tls"] = nullptr;
}

// open-constant.json with the fields the JSON writer adds: `rows` seconds of series.
json full_report(int rows = 10) {
  json r = load_report("open-constant.json");
  pin_figures(r);
  r["series"] = {{"interval_ns", 1'000'000'000}, {"per_second", series_rows(rows)}};
  r["histograms"] = {
      {"encoding", "HdrHistogram V2, compressed, base64 (as in .hlog)"},
      {"views",
       {{"response_time", hdr::encode_compressed_base64(tailed_histogram(80'000, 20'000))},
        {"service_time", hdr::encode_compressed_base64(tailed_histogram(60'000, 20'000))}}}};
  const std::int64_t start = r["schedule"]["start_mono_ns"].get<std::int64_t>() + 3'000'000'000;
  r["worst_interval"] = {
      {"second", 3},
      {"intended_start_mono_ns", start},
      {"intended_end_mono_ns", start + 1'000'000'000},
      {"intended_start_unix_ns", 1'796'051'834'879'773'370},
      {"intended_end_unix_ns", 1'796'051'835'879'773'370},
      {"planned", 1000},
      {"sent", 1000},
      {"completed", 990},
      {"response_time", {{"p50_ns", 81'000}, {"p99_ns", 2'500'000}, {"max_ns", 9'000'000}}},
      {"components_p99_ns",
       {{"send_lag", 10'000}, {"queue_wait", 0}, {"connect_time", 0}, {"service_time", 2'400'000}}},
      {"cause", "server"},
      {"cause_component", "service_time"},
      {"samples_lost", 0}};
  return r;
}

std::string html_of(const json& report) {
  std::ostringstream out;
  write_html(out, report);
  return out.str();
}

bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

// The <svg> element with this id.
std::string svg_by_id(const std::string& html, const std::string& id) {
  const auto at = html.find("<svg id=\"" + id + "\"");
  if (at == std::string::npos) return {};
  return html.substr(at, html.find("</svg>", at) - at);
}

// The number of points the path of `series` draws (each an M or L command).
std::size_t drawn_points(const std::string& svg, const std::string& series) {
  const auto at = svg.find("data-series=\"" + series + "\"");
  if (at == std::string::npos) return 0;
  const auto d = svg.find(" d=\"", at) + 4;
  const std::string path = svg.substr(d, svg.find('"', d) - d);
  return static_cast<std::size_t>(std::count(path.begin(), path.end(), 'M') +
                                  std::count(path.begin(), path.end(), 'L'));
}

// The x of each point the path of `series` draws, in order.
std::vector<double> drawn_xs(const std::string& svg, const std::string& series) {
  std::vector<double> xs;
  const auto at = svg.find("data-series=\"" + series + "\"");
  if (at == std::string::npos) return xs;
  const auto d = svg.find(" d=\"", at) + 4;
  std::istringstream path(svg.substr(d, svg.find('"', d) - d));
  char command = 0;
  double x = 0, y = 0;
  while (path >> command >> x >> y) xs.push_back(x);
  return xs;
}

// A number attribute of the first element that starts with `element`.
double attribute_of(const std::string& svg, const std::string& element, const std::string& name) {
  const auto at = svg.find(element);
  if (at == std::string::npos) return -1;
  const auto v = svg.find(" " + name + "=\"", at) + name.size() + 3;
  return std::stod(svg.substr(v, svg.find('"', v) - v));
}

// A report read back may hold any number: instants beyond what 64-bit nanoseconds hold (the
// year 2262) are no time of a run, and were an overflowing cast (report_json_fuzz).
TEST(html_report, instants_past_what_int64_holds_are_no_time) {
  EXPECT_EQ(punctual::report::html_utc(1e19), "-");
  EXPECT_EQ(punctual::report::html_utc(-5), "-");
  EXPECT_EQ(punctual::report::html_utc(1.7e18), "2023-11-14 22:13:20.000 UTC");
}

TEST(html_report, spectrum_points_are_the_percentile_iteration) {
  const hdr::histogram h = tailed_histogram(80'000, 20'000);
  const auto steps = hdr::percentile_steps(h, 5);
  const auto points = spectrum_points(h);
  ASSERT_EQ(points.size(), steps.size());
  ASSERT_GT(points.size(), 20u);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(points[i].x, steps[i].percentile_level_iterated_to) << i;
    EXPECT_EQ(points[i].y, static_cast<double>(steps[i].value_iterated_to)) << i;
  }
  const std::string spectrum = svg_by_id(html_of(full_report()), "spectrum");
  ASSERT_FALSE(spectrum.empty());
  EXPECT_EQ(drawn_points(spectrum, "response time"), steps.size());
  EXPECT_EQ(drawn_points(spectrum, "service time"),
            hdr::percentile_steps(tailed_histogram(60'000, 20'000), 5).size());
}

TEST(html_report, page_is_self_contained) {
  const json report = full_report();
  const std::string html = html_of(report);
  ASSERT_TRUE(html.starts_with("<!DOCTYPE html>"));
  for (const char* banned : {"<script", "<link", "src=", "href=", "url(", "@import", "<img"}) {
    EXPECT_FALSE(has(html, banned)) << banned;
  }
  // The target may be shown as text; nothing else may name a URL.
  std::string rest = html;
  const std::string target = report["target"].get<std::string>();
  for (auto at = rest.find(target); at != std::string::npos; at = rest.find(target)) {
    rest.erase(at, target.size());
  }
  EXPECT_TRUE(has(html, target));
  EXPECT_FALSE(has(rest, "http://"));
  EXPECT_FALSE(has(rest, "https://"));
}

TEST(html_report, command_line_is_escaped) {
  json report = full_report();
  report["command_line"].push_back("<script>alert(1)</script>");
  report["target"] = "http://x/<b>";
  const std::string html = html_of(report);
  EXPECT_FALSE(has(html, "<script>alert(1)"));
  EXPECT_FALSE(has(html, "x/<b>"));
  EXPECT_TRUE(has(html, "&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_TRUE(has(html, "http://x/&lt;b&gt;"));
}

TEST(html_report, charts_and_series_are_named) {
  const std::string html = html_of(full_report());
  for (const char* id : {"spectrum", "latency-over-time", "load-over-time", "send-lag-over-time"}) {
    EXPECT_FALSE(svg_by_id(html, id).empty()) << id;
  }
  const std::string latency = svg_by_id(html, "latency-over-time");
  for (const char* s : {"response p50", "response p99", "response max", "service p50",
                        "service p99", "service max"}) {
    EXPECT_EQ(drawn_points(latency, s), 10u) << s;
  }
  const std::string load = svg_by_id(html, "load-over-time");
  for (const char* s : {"planned", "sent", "completed", "errors", "timeouts"}) {
    EXPECT_EQ(drawn_points(load, s), 10u) << s;
  }
  EXPECT_EQ(drawn_points(svg_by_id(html, "send-lag-over-time"), "send lag p99"), 10u);
}

TEST(html_report, header_outcomes_and_verdicts) {
  const std::string html = html_of(full_report());
  EXPECT_TRUE(has(html, "planned 200 = sum of outcomes 200"));
  EXPECT_TRUE(has(html, "intended-start"));
  EXPECT_TRUE(has(html, "constant arrivals, 200 req/s"));
  EXPECT_TRUE(has(html, "INVALID"));  // open-constant.json failed its send-lag checks
  EXPECT_TRUE(has(html, "send_lag_p99"));
  EXPECT_TRUE(has(html, "95% confidence"));
  EXPECT_TRUE(has(html, "203µs .. 3.95ms"));  // the p99 interval
  EXPECT_FALSE(has(html, "certificate verification was OFF"));
}

TEST(html_report, outcomes_that_do_not_add_up_are_flagged) {
  json report = full_report();
  report["outcomes"]["timeout"] = 5;
  const std::string html = html_of(report);
  EXPECT_TRUE(has(html, "planned 200 &#8800; sum of outcomes 205"));
}

TEST(html_report, worst_second_is_banded_and_explained) {
  const std::string html = html_of(full_report());
  const std::string latency = svg_by_id(html, "latency-over-time");
  ASSERT_TRUE(has(latency, "<rect class=\"band\""));
  EXPECT_TRUE(has(latency, "worst second (3)"));
  EXPECT_TRUE(has(html, "<b>server</b> (service time was the largest part at p99)"));
  EXPECT_TRUE(has(html, "2026-11-30 "));  // the intended range in wall clock
}

TEST(html_report, rows_over_time_are_drawn_at_their_middle) {
  // Row i covers [i, i + 1) s; the worst second (3) is banded over [3, 4), so row 3's point is
  // drawn at the band's middle and each row one band width after the one before.
  const std::string html = html_of(full_report());
  for (const char* id : {"latency-over-time", "load-over-time", "send-lag-over-time"}) {
    const std::string svg = svg_by_id(html, id);
    const std::string series = id == std::string("load-over-time")      ? "planned"
                               : id == std::string("latency-over-time") ? "response p99"
                                                                        : "send lag p99";
    const std::vector<double> xs = drawn_xs(svg, series);
    ASSERT_EQ(xs.size(), 10u) << id;
    const double step = xs[1] - xs[0];
    EXPECT_GT(step, 50) << id;  // ten rows across a plot of ~830 units
    for (std::size_t i = 1; i < xs.size(); ++i) EXPECT_NEAR(xs[i] - xs[i - 1], step, 0.2) << id;
    if (std::string(id) == "latency-over-time") {
      const double band_x = attribute_of(svg, "<rect class=\"band\"", "x");
      const double band_width = attribute_of(svg, "<rect class=\"band\"", "width");
      EXPECT_NEAR(band_width, step, 0.2);
      EXPECT_NEAR(xs[3], band_x + band_width / 2, 0.2);
    }
  }
  // The attempts chart's rows too, on the same x axis.
  json report = full_report();
  report["retry_policy"] = {{"retries", 2}};
  const std::vector<double> attempts =
      drawn_xs(svg_by_id(html_of(report), "attempts-over-time"), "attempts");
  const std::vector<double> latency =
      drawn_xs(svg_by_id(html, "latency-over-time"), "response p99");
  ASSERT_EQ(attempts.size(), 10u);
  for (std::size_t i = 0; i < attempts.size(); ++i) EXPECT_NEAR(attempts[i], latency[i], 0.2) << i;
}

TEST(html_report, the_page_reads_verdict_then_charts_then_tables) {
  const std::string html = html_of(full_report());
  const char* in_order[] = {"id=\"workload\"",
                            "id=\"verdict\"",
                            "id=\"outcomes\"",
                            "<svg id=\"spectrum\"",
                            "<svg id=\"latency-over-time\"",
                            "<h3>The worst second</h3>",
                            "<svg id=\"load-over-time\"",
                            "<svg id=\"send-lag-over-time\"",
                            "id=\"validity\"",
                            "id=\"slo\"",
                            "95% confidence",
                            "id=\"latency\""};
  std::size_t last = 0;
  for (const char* part : in_order) {
    const auto at = html.find(part);
    ASSERT_NE(at, std::string::npos) << part;
    EXPECT_GT(at, last) << part;
    last = at;
  }
  // The command line closes the workload's grid.
  const auto workload = html.substr(html.find("id=\"workload\""));
  EXPECT_NE(workload.find("command line</dt>"), std::string::npos);
  EXPECT_EQ(workload.find("</dl>"), workload.find("</code></dd></dl>") + 12);
}

TEST(html_report, the_verdict_names_what_failed) {
  json report = full_report();
  report["slo"] = {{"basis", "response_time"},
                   {"results",
                    {{{"expression", "p99<=200ms"}, {"figure", 343e6}, {"pass", false}},
                     {{"expression", "p50<=1ms"}, {"figure", 81e3}, {"pass", true}}}}};
  std::string html = html_of(report);
  std::string verdict = html.substr(html.find("id=\"verdict\""));
  verdict = verdict.substr(0, verdict.find("</p>"));
  EXPECT_TRUE(has(html, "class=\"verdict bad\""));
  EXPECT_TRUE(has(verdict, "<b>INVALID</b>: gating check send_lag_p99 failed")) << verdict;
  EXPECT_TRUE(has(verdict, "SLO p99&lt;=200ms <span class=\"fail\">")) << verdict;
  EXPECT_TRUE(has(verdict, "at 343ms")) << verdict;
  EXPECT_TRUE(has(verdict, "SLO p50&lt;=1ms <span class=\"pass\">")) << verdict;
  EXPECT_TRUE(has(verdict,
                  "The worst second (3) had p99 2.5ms; cause: <b>server</b> (service "
                  "time was its largest part)"))
      << verdict;
  // Valid, every SLO met: green.
  report["validity"]["valid"] = true;
  report["validity"]["checks"][0]["pass"] = true;
  report["slo"]["results"][0]["pass"] = true;
  html = html_of(report);
  EXPECT_TRUE(has(html, "class=\"verdict\" id=\"verdict\"><b>Valid</b>"));
}

TEST(html_report, insecure_tls_is_loud) {
  json report = load_report("tls.json");  // run with --insecure
  report["tls"]["version"] = "TLSv1.3";
  const std::string html = html_of(report);
  EXPECT_TRUE(has(html, "certificate verification was OFF (--insecure)"));
  EXPECT_TRUE(has(html, "TLSv1.3"));
}

TEST(html_report, the_protocol_spoken_is_a_fact) {
  json report = load_report("tls.json");
  report["protocol"] = {
      {"name", "h2"},
      {"requested", "auto"},
      {"connections", {{"h2", 9}, {"http/1.1", 1}}},
      {"h2", {{"max_streams", 64}, {"unprocessed", 0}, {"rst_codes", json::object()}}}};
  EXPECT_TRUE(has(html_of(report),
                  "h2 (--http auto): 9 connections h2, 1 http/1.1; up to 64 streams each"));
  report["protocol"] = {
      {"name", "http/1.1"}, {"requested", "1.1"}, {"connections", {{"h2", 0}, {"http/1.1", 4}}}};
  const std::string html = html_of(report);
  EXPECT_TRUE(has(html, "http/1.1 (--http 1.1)"));
  EXPECT_FALSE(has(html, "streams each"));
}

TEST(html_report, a_report_without_series_or_histograms_still_renders) {
  json report = load_report("open-constant.json");
  for (const char* key : {"series", "histograms", "worst_interval"}) report.erase(key);
  const std::string html = html_of(report);
  EXPECT_TRUE(has(html, "this report has no series"));
  EXPECT_TRUE(has(html, "this report has no histograms"));
  // The spectrum falls back to the minimum and the seven summary percentiles.
  EXPECT_EQ(drawn_points(svg_by_id(html, "spectrum"), "response time"), 8u);
  EXPECT_TRUE(html.ends_with("</body></html>\n"));
}

TEST(html_report, a_document_that_is_no_run_report_is_refused) {
  EXPECT_THROW(html_of(json{{"hello", 1}}), std::runtime_error);
  EXPECT_THROW(html_of(json::array()), std::runtime_error);
  EXPECT_NO_THROW(html_of(json{{"schema_version", 1}, {"outcomes", json::object()}}));
}

TEST(html_report, mistyped_optional_parts_are_tolerated) {
  json report = full_report();
  report["series"]["per_second"] = json::array({1, "x", json::object()});
  report["histograms"]["views"]["response_time"] = "not base64!";
  report["worst_interval"] = "oops";
  report["slo"] = {{"results", {{{"expression", 5}}, 7}}};
  report["validity"] = {{"valid", "maybe"}, {"checks", "none"}};
  report["model"] = json::array();
  report["command_line"] = 3;
  std::string html;
  ASSERT_NO_THROW(html = html_of(report));
  EXPECT_TRUE(html.ends_with("</body></html>\n"));
  EXPECT_EQ(drawn_points(svg_by_id(html, "spectrum"), "response time"), 0u);
  EXPECT_GT(drawn_points(svg_by_id(html, "spectrum"), "service time"), 10u);
  EXPECT_EQ(drawn_points(svg_by_id(html, "load-over-time"), "planned"), 3u);
}

TEST(html_report, slo_bounds_are_drawn_on_the_spectrum) {
  const std::string html = html_of(load_report("slo.json"));
  const std::string spectrum = svg_by_id(html, "spectrum");
  EXPECT_TRUE(has(spectrum, "SLO p99&lt;=100ms"));
  EXPECT_FALSE(has(spectrum, "errors==0"));  // not a latency SLO
  EXPECT_TRUE(has(html, "errors==0"));       // but listed with the verdicts
}

TEST(html_report, closed_runs_show_the_reconstructed_view) {
  json report = load_report("closed-expected-interval.json");
  report["histograms"] = {
      {"views",
       {{"response_time", hdr::encode_compressed_base64(tailed_histogram(80'000, 2000))},
        {"service_time", hdr::encode_compressed_base64(tailed_histogram(80'000, 2000))},
        {"reconstructed", hdr::encode_compressed_base64(tailed_histogram(90'000, 3000))}}}};
  const std::string spectrum = svg_by_id(html_of(report), "spectrum");
  EXPECT_GT(drawn_points(spectrum, "reconstructed"), 10u);
  EXPECT_TRUE(has(html_of(report), "expected-interval, expected interval 10ms"));
}

TEST(html_report, retries_are_charted_per_row) {
  json report = full_report();
  report["retry_policy"] = {{"retries", 2}, {"description", "up to 2 retries on 5xx"}};
  report["attempts"]["retries"] = 60;
  const std::string html = html_of(report);
  EXPECT_TRUE(has(html, "id=\"retries\""));
  EXPECT_TRUE(has(html, "up to 2 retries on 5xx"));
  EXPECT_EQ(drawn_points(svg_by_id(html, "attempts-over-time"), "attempts"), 10u);
  EXPECT_EQ(drawn_points(svg_by_id(html, "amplification-over-time"), "amplification"), 10u);
  EXPECT_FALSE(has(html_of(full_report()), "id=\"retries\""));
}

TEST(html_report, retries_without_series_use_the_attempts_per_second) {
  json report = load_report("open-retries.json");
  report.erase("series");
  report["attempts"]["per_second"] = {{{"second", 0}, {"planned", 200}, {"attempts", 286}},
                                      {{"second", 1}, {"planned", 0}, {"attempts", 4}}};
  const std::string html = html_of(report);
  EXPECT_EQ(drawn_points(svg_by_id(html, "attempts-over-time"), "attempts"), 2u);
  // A row with nothing planned has no amplification.
  EXPECT_EQ(drawn_points(svg_by_id(html, "amplification-over-time"), "amplification"), 1u);
  // Its one point is drawn on the same x axis as the attempts (to the end of the last row),
  // at the middle of its row.
  const std::vector<double> amplification =
      drawn_xs(svg_by_id(html, "amplification-over-time"), "amplification");
  const std::vector<double> attempts = drawn_xs(svg_by_id(html, "attempts-over-time"), "attempts");
  ASSERT_EQ(amplification.size(), 1u);
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_NEAR(amplification[0], attempts[0], 0.2);
  EXPECT_LT(attempts[0], attempts[1]);
}

TEST(html_report, interrupted_runs_are_flagged) {
  json report = load_report("open-constant.json");
  report["interrupted"] = true;
  report["worst_interval"] = nullptr;
  const std::string html = html_of(report);
  EXPECT_TRUE(has(html, "the run was interrupted"));
  EXPECT_TRUE(has(html, "no worst second"));
}

TEST(html_report, hybrid_runs_show_steps_sessions_and_their_spectrum) {
  json report = full_report();
  report["model"]["kind"] = "hybrid";
  const json view = report["latency"]["response_time"];
  const json outcomes = report["outcomes"];
  report["by_name"] = {{"checkout.login",
                        {{"planned", 200},
                         {"outcomes", outcomes},
                         {"response_time", view},
                         {"service_time", view}}}};
  report["sessions"] = {{"checkout",
                         {{"planned", 100},
                          {"outcomes", outcomes},
                          {"failed_at", {{"checkout.login", 3}}},
                          {"session_time", view}}}};
  report["histograms"]["sessions"] = {
      {"checkout", hdr::encode_compressed_base64(tailed_histogram(2'000'000, 500))}};
  report["worst_step"] = {{"name", "checkout.login"},
                          {"response_time", {{"p50_ns", 1}, {"p99_ns", 2}, {"max_ns", 3}}},
                          {"cause", "server"}};
  const std::string html = html_of(report);
  EXPECT_TRUE(has(html, "<td>checkout.login</td>"));
  EXPECT_TRUE(has(html, "checkout.login 3"));  // failed at
  EXPECT_TRUE(has(html, "worst step: <b>checkout.login</b>"));
  EXPECT_GT(drawn_points(svg_by_id(html, "session-spectrum"), "checkout"), 5u);
}

TEST(html_report, a_ten_minute_run_stays_small) {
  const std::string html = html_of(full_report(600));
  EXPECT_LT(html.size(), 1'000'000u);
  EXPECT_EQ(drawn_points(svg_by_id(html, "latency-over-time"), "response max"), 600u);
  const std::string longer = html_of(full_report(1500));  // decimated to at most 600 points
  EXPECT_EQ(drawn_points(svg_by_id(longer, "load-over-time"), "sent"), 600u);
  EXPECT_LT(longer.size(), 1'000'000u);
}

TEST(html_report, demo_page_has_four_series) {
  const char* names[] = {"closed (as wrk)", "closed, reconstructed", "open (punctual)",
                         "truth (from stall log)"};
  json demo{{"punctual", {{"version", "0.1.0"}}},
            {"server", {{"stall", "1s/5s"}, {"url", "http://127.0.0.1:1/"}}},
            {"unit", "ns"}};
  for (int i = 0; i < 4; ++i) {
    const hdr::histogram h = tailed_histogram(50'000 * (i + 1), 5000);
    demo["columns"][names[i]] = {{"count", h.total_count()},
                                 {"p50_ns", h.value_at_percentile(50)},
                                 {"p99_ns", h.value_at_percentile(99)},
                                 {"p100_ns", 999'817'215}};
    demo["histograms"][names[i]] = hdr::encode_compressed_base64(h);
  }
  demo["open_within_tolerance"] = true;
  demo["verdict"] = {"the open model saw the stall", "<not markup>"};
  std::ostringstream out;
  write_demo_html(out, demo);
  const std::string html = out.str();
  const std::string spectrum = svg_by_id(html, "spectrum");
  for (const char* n : names) {
    EXPECT_GT(drawn_points(spectrum, xml_escape(n)), 10u) << n;
  }
  EXPECT_TRUE(has(html, "the open model saw the stall"));
  // Whole values near a second read as one, neither in the table nor in the chart.
  EXPECT_FALSE(has(html, "e+0")) << html.substr(0, 4000);
  EXPECT_TRUE(has(html, "&lt;not markup&gt;"));
  EXPECT_TRUE(has(html, "<th>max</th>"));
  EXPECT_TRUE(has(html, "<td>1s</td>"));  // 999.8 ms
  EXPECT_FALSE(has(html, "<script"));
  EXPECT_THROW(write_demo_html(out, json{{"server", 1}}), std::runtime_error);
}

}  // namespace
}  // namespace punctual::report
