#include "report/timeline_csv.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <ctime>
#include <stdexcept>
#include <string>
#include <string_view>

namespace punctual::report {

namespace {

using json = nlohmann::ordered_json;

// RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled.
std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (const char ch : text) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

// 2026-12-01T01:02:03.250Z
std::string utc_text(double unix_s) {
  constexpr double year_9999 = 253402300799.0;
  if (!(unix_s >= 0 && unix_s <= year_9999)) throw std::out_of_range("unix_s out of range");
  const auto whole = static_cast<std::time_t>(std::floor(unix_s));
  const auto ms = static_cast<int>(std::lround((unix_s - static_cast<double>(whole)) * 1000.0));
  std::tm tm{};
  gmtime_r(&whole, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03d}Z", buf, std::min(ms, 999));
}

std::string ms(const json& ns) {
  return fmt::format("{:.3f}", ns.get<double>() / 1e6);
}
// A count as written: only an integer may be one (at() and get<>() throw on anything else, which
// `punctual report` turns into one line).
std::string count(const json& n) {
  return std::to_string(n.get<std::uint64_t>());
}

constexpr std::array<std::string_view, 18> columns{"offset_s",
                                                   "time_utc",
                                                   "planned",
                                                   "sent",
                                                   "completed",
                                                   "ok",
                                                   "errors",
                                                   "timeouts",
                                                   "dropped",
                                                   "response_p50_ms",
                                                   "response_p99_ms",
                                                   "response_max_ms",
                                                   "service_p50_ms",
                                                   "service_p99_ms",
                                                   "service_max_ms",
                                                   "send_lag_p99_ms",
                                                   "queue_wait_p99_ms",
                                                   "attempts"};

}  // namespace

void write_timeline_csv(std::ostream& out, const nlohmann::ordered_json& report) {
  std::string line;
  for (const auto c : columns) line += (line.empty() ? "" : ",") + csv_field(c);
  out << line << "\r\n";
  if (!report.contains("series")) return;
  for (const auto& row : report.at("series").at("per_second")) {
    const auto& rt = row.at("response_time");
    const auto& st = row.at("service_time");
    const std::string fields[] = {fmt::format("{:g}", row.at("offset_s").get<double>()),
                                  utc_text(row.at("unix_s").get<double>()),
                                  count(row.at("planned")),
                                  count(row.at("sent")),
                                  count(row.at("completed")),
                                  count(row.at("ok")),
                                  count(row.at("errors")),
                                  count(row.at("timeouts")),
                                  count(row.at("dropped")),
                                  ms(rt.at("p50_ns")),
                                  ms(rt.at("p99_ns")),
                                  ms(rt.at("max_ns")),
                                  ms(st.at("p50_ns")),
                                  ms(st.at("p99_ns")),
                                  ms(st.at("max_ns")),
                                  ms(row.at("send_lag_p99_ns")),
                                  ms(row.at("queue_wait_p99_ns")),
                                  count(row.at("attempts"))};
    line.clear();
    for (const auto& f : fields) line += (line.empty() ? "" : ",") + csv_field(f);
    out << line << "\r\n";
  }
}

}  // namespace punctual::report
