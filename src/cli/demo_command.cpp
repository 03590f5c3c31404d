// `punctual demo`: coordinated omission, shown in 30 seconds on this machine. A server that
// stalls for 1 s in every 5 s is measured three ways; the truth comes from its stall log. The
// conclusions are computed from the table (cli/demo_verdict), and the demo fails (exit 1) when
// the open run misses the truth by more than the truth tests allow.
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <iostream>
#include <sstream>

#include "cli/command.hpp"
#include "cli/demo_verdict.hpp"
#include "cli/run_command.hpp"
#include "punctual/histogram/codec.hpp"
#include "report/html_report.hpp"
#include "report/json.hpp"
#include "server/server.hpp"

namespace punctual::cli {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

constexpr double demo_percentiles[] = {50, 90, 99, 99.9, 100};
constexpr int demo_connections = 10;
constexpr double demo_rate = 1000;
// Closed-loop connections pause this long between requests, so they offer the same 1000 req/s
// as the open run while the server is healthy; it is also the expected interval.
constexpr milliseconds demo_think{10};

run_options demo_options(const std::string& url, bool closed, bool reconstruct) {
  run_options o;
  o.url = url;
  o.threads = 1;
  o.connections = demo_connections;
  o.duration = "5s";
  o.timeout = "10s";
  if (closed) {
    o.model = "closed";
    o.think = "10ms";
    if (reconstruct) o.expected_interval = "10ms";
  } else {
    o.rate = "1000";
  }
  return o;
}

// What each request of the open run's schedule must have waited: a request due inside a logged
// stall waits for its end; any other waits only for the (tiny) service time.
hdr::histogram truth(const engine::run_result& open,
                     const std::vector<server::stall_record>& stalls) {
  hdr::histogram h(record::latency_params());
  const auto planned = open.measured.counts.planned;
  const nanoseconds gap{static_cast<std::int64_t>(1e9 / demo_rate)};
  for (std::uint64_t i = 0; i < planned; ++i) {
    const std::int64_t t = (open.measure_start + gap * static_cast<std::int64_t>(i)).count();
    std::int64_t wait = 0;
    for (const auto& s : stalls) {
      if (t >= s.start_mono_ns && t < s.end_mono_ns) wait = s.end_mono_ns - t;
    }
    h.record(wait);
  }
  return h;
}

void print_table(std::ostream& out,
                 const std::vector<std::pair<std::string, hdr::histogram>>& cols) {
  fmt::print(out, "\n{:>6}", "ms");
  for (const auto& c : cols) fmt::print(out, "  {:>22}", c.first);
  fmt::print(out, "\n");
  for (const double p : demo_percentiles) {
    fmt::print(out, "{:>6}", p == 100 ? "max" : fmt::format("p{:g}", p));
    for (const auto& c : cols) fmt::print(out, "  {:>22}", ms(c.second.value_at_percentile(p)));
    fmt::print(out, "\n");
  }
}

demo_column percentiles_of(const std::pair<std::string, hdr::histogram>& column) {
  const hdr::histogram& h = column.second;
  return {column.first, h.value_at_percentile(90), h.value_at_percentile(99)};
}

nlohmann::ordered_json column_json(const hdr::histogram& h) {
  nlohmann::ordered_json j{{"count", h.total_count()}};
  for (const double p : demo_percentiles) j[fmt::format("p{:g}_ns", p)] = h.value_at_percentile(p);
  return j;
}

}  // namespace

int demo_command(const std::string& json_path, const std::string& html_path) {
  server::server_config sc;
  sc.stall_length = seconds(1);
  sc.stall_period = seconds(5);
  server::server srv(sc);
  const std::uint16_t port = srv.start();
  const std::string url = fmt::format("http://127.0.0.1:{}/", port);
  std::cout << fmt::format("punctual demo: a server on {} that stalls for 1 s in every 5 s\n", url);

  std::vector<engine::run_result> runs;
  const char* names[] = {"closed model, 10 connections (as wrk)",
                         "the same, with expected-interval reconstruction",
                         "open model, 1000 req/s (punctual)"};
  for (int i = 0; i < 3; ++i) {
    std::cout << fmt::format("run {}: {} ... ", i + 1, names[i]) << std::flush;
    const auto setup = build_run(demo_options(url, i < 2, i == 1), command_line());
    runs.push_back(perform_run(setup, ""));
    std::cout << fmt::format("{} requests\n", runs.back().measured.counts.planned);
  }
  srv.stop();
  srv.wait();
  const auto& rt = [](const engine::run_result& r) -> const hdr::histogram& {
    return r.measured.views[record::view::response_time];
  };
  std::vector<std::pair<std::string, hdr::histogram>> cols;
  cols.emplace_back("closed (as wrk)", rt(runs[0]));
  cols.emplace_back("closed, reconstructed", rt(runs[1]).copy_corrected_for_coordinated_omission(
                                                 nanoseconds(demo_think).count()));
  cols.emplace_back("open (punctual)", rt(runs[2]));
  cols.emplace_back("truth (from stall log)", truth(runs[2], srv.stalls()));
  print_table(std::cout, cols);
  const demo_verdict verdict = judge_demo({percentiles_of(cols[0]), percentiles_of(cols[1]),
                                           percentiles_of(cols[2]), percentiles_of(cols[3])});
  std::cout << "\n";
  for (const auto& line : verdict.lines) std::cout << line << "\n";
  nlohmann::ordered_json doc{{"punctual", {{"version", "0.1.0"}}},
                             {"server", {{"stall", "1s/5s"}, {"url", url}}},
                             {"unit", "ns"}};
  for (const auto& c : cols) doc["columns"][c.first] = column_json(c.second);
  for (const auto& c : cols) doc["histograms"][c.first] = hdr::encode_compressed_base64(c.second);
  doc["open_within_tolerance"] = verdict.passed;
  doc["verdict"] = verdict.lines;
  write_file_atomically(json_path, doc.dump(2) + "\n");
  std::cout << "wrote " << json_path << "\n";
  if (!html_path.empty()) {
    std::ostringstream html;
    report::write_demo_html(html, doc);
    write_file_atomically(html_path, html.str());
    std::cout << "wrote " << html_path
              << " (the four spectra on one chart; open it in a browser)\n";
  }
  if (!verdict.passed) {
    std::cerr << "punctual demo: " << verdict.failure << "\n";
    return exit_run_failed;
  }
  return exit_ok;
}

}  // namespace punctual::cli
