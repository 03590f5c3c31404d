// `punctual report FILE.hlog`: the merged percentile summary of one stream of an interval log,
// as Java's HistogramLogProcessor would compute it, plus optional .hgrm and JSON outputs.
// `punctual report RUN.json`: the run's text report again, or its HTML and timeline.
#include "cli/report_command.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "cli/atomic_file.hpp"
#include "cli/command.hpp"
#include "cli/renderings.hpp"
#include "punctual/histogram/interval_log.hpp"
#include "punctual/histogram/log_merge.hpp"
#include "punctual/histogram/percentile_text.hpp"
#include "report/json.hpp"

namespace punctual::cli {

namespace {

struct percentile_point {
  const char* label;  // text and JSON key
  double percentile;
};

constexpr percentile_point summary_points[] = {{"50", 50.0},   {"90", 90.0},     {"99", 99.0},
                                               {"99.9", 99.9}, {"99.99", 99.99}, {"100", 100.0}};

struct stream_summary {
  hdr::histogram merged;
  std::size_t intervals = 0;
  double start_unix_s = 0;
  double end_unix_s = 0;
};

std::string tag_name(const std::string& tag) {
  return tag.empty() ? "untagged" : "tag " + tag;
}

// Read one interval at a time: a long run's log holds thousands of ~270 KB histograms, and only
// their sum is needed. Intervals of other layouts are added in the widest of them.
stream_summary summarise(const report_options& o) {
  std::optional<stream_summary> s;
  std::set<std::string> present;
  const auto on_interval = [&](const hdr::interval_log&, hdr::log_interval&& iv) {
    if (iv.tag != o.tag) {
      if (present.size() < 64) present.insert(iv.tag.empty() ? "(untagged)" : iv.tag);
      return;
    }
    const double end = iv.start_unix_seconds + iv.length_seconds;
    if (!s) {
      s.emplace(stream_summary{std::move(iv.value), 1, iv.start_unix_seconds, end});
      return;
    }
    if (iv.value.params() != s->merged.params()) {
      hdr::histogram wider(hdr::widest_params(s->merged.params(), iv.value.params()));
      wider.add(s->merged);
      s->merged = std::move(wider);
    }
    s->merged.add(iv.value);
    s->start_unix_s = std::min(s->start_unix_s, iv.start_unix_seconds);
    s->end_unix_s = std::max(s->end_unix_s, end);
    ++s->intervals;
  };
  const auto read = hdr::read_interval_log_file(o.file, on_interval);
  if (!read) throw usage_error(read.error_line > 0 ? o.file + ": " + read.error : read.error);
  if (!s) {
    std::string list;
    for (const auto& t : present) list += (list.empty() ? "" : ", ") + t;
    throw usage_error(fmt::format("{}: no {} intervals (present: {})", o.file,
                                  o.tag.empty() ? "untagged" : "'Tag=" + o.tag + "'",
                                  list.empty() ? "none" : list));
  }
  return std::move(*s);
}

std::string scaled(const report_options& o, const hdr::histogram& h, double value) {
  return hdr::java_fixed(value / o.unit_ratio, h.params().significant_digits);
}

void write_text(std::ostream& out, const report_options& o, const stream_summary& s) {
  const hdr::histogram& h = s.merged;
  out << fmt::format("{}: {}, {} intervals, {} .. {} ({} s)\n", o.file, tag_name(o.tag),
                     s.intervals, hdr::java_fixed(s.start_unix_s, 3),
                     hdr::java_fixed(s.end_unix_s, 3),
                     hdr::java_fixed(s.end_unix_s - s.start_unix_s, 3));
  out << fmt::format("values / {} (unit ratio)\n", hdr::java_fixed(o.unit_ratio, 0));
  const auto row = [&](std::string_view name, const std::string& value) {
    out << fmt::format("  {:<8} {:>14}\n", name, value);
  };
  row("count", std::to_string(h.total_count()));
  row("min", scaled(o, h, static_cast<double>(h.min())));
  row("mean", scaled(o, h, h.mean()));
  for (const auto& p : summary_points) {
    if (p.percentile == 100.0) continue;
    row(std::string("p") + p.label,
        scaled(o, h, static_cast<double>(h.value_at_percentile(p.percentile))));
  }
  row("max", scaled(o, h, static_cast<double>(h.max())));
  if (h.over_range_count() > 0) row("over range", std::to_string(h.over_range_count()));
}

std::string json_text(const report_options& o, const stream_summary& s) {
  const hdr::histogram& h = s.merged;
  nlohmann::ordered_json j;
  j["tag"] = o.tag.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(o.tag);
  j["count"] = h.total_count();
  j["min"] = h.min();
  j["max"] = h.max();
  j["mean"] = h.mean();
  j["stddev"] = h.stddev();
  auto& percentiles = j["percentiles"];
  for (const auto& p : summary_points) percentiles[p.label] = h.value_at_percentile(p.percentile);
  j["over_range"] = h.over_range_count();
  j["intervals"] = s.intervals;
  j["start_unix_s"] = s.start_unix_s;
  j["end_unix_s"] = s.end_unix_s;
  // Values above are in the log's recorded unit; the ratio only scales the text and .hgrm.
  j["unit_ratio"] = o.unit_ratio;
  return j.dump(2) + "\n";
}

// With no output named, the text report again, as run or merge printed it.
int print_text_report(const report_options& o, const nlohmann::ordered_json& doc) {
  const auto text = doc.find("text_report");
  if (text == doc.end() || !text->is_string()) {
    throw usage_error(o.file +
                      " holds no text report (an older punctual wrote it): give --html OUT.html "
                      "and/or --timeline OUT.csv");
  }
  std::cout << text->get<std::string>() << std::flush;
  return exit_ok;
}

int render_json_report(const report_options& o) {
  if (!o.tag.empty() || !o.hgrm_out.empty() || !o.json_out.empty()) {
    throw usage_error(o.file +
                      " is a JSON run report: --tag, --hgrm and --json read interval logs only");
  }
  std::ifstream in(o.file, std::ios::binary);
  nlohmann::ordered_json doc;
  try {
    doc = nlohmann::ordered_json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw usage_error(o.file + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  if (!doc.is_object()) throw usage_error(o.file + ": not a punctual run report");
  if (o.html_out.empty() && o.timeline_out.empty()) return print_text_report(o, doc);
  try {
    write_renderings(doc, o.html_out, o.timeline_out);
  } catch (const usage_error&) {
    throw;  // an output that could not be written
  } catch (const run_error&) {
    throw;
  } catch (const std::exception& e) {
    throw usage_error(o.file + ": not a punctual run report (" + std::string(e.what()) + ")");
  }
  return exit_ok;
}

}  // namespace

bool is_json_report(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw usage_error(path + ": cannot open");
  char ch = 0;
  while (in.get(ch)) {
    if (ch != ' ' && ch != '\t' && ch != '\r' && ch != '\n') return ch == '{';
  }
  return false;
}

int report_command(const report_options& o) {
  if (is_json_report(o.file)) return render_json_report(o);
  if (!o.html_out.empty() || !o.timeline_out.empty()) {
    throw usage_error(o.file +
                      ": --html and --timeline need a JSON run report (punctual run --json)");
  }
  const stream_summary s = summarise(o);
  const bool json_to_stdout = o.json_out == "-";
  write_text(json_to_stdout ? std::cerr : std::cout, o, s);
  if (!o.hgrm_out.empty()) {
    write_file_atomically(o.hgrm_out,
                          hdr::percentile_distribution_text(s.merged, {5, o.unit_ratio, false}));
  }
  if (json_to_stdout) {
    std::cout << json_text(o, s) << std::flush;
  } else if (!o.json_out.empty()) {
    write_file_atomically(o.json_out, json_text(o, s));
  }
  return exit_ok;
}

}  // namespace punctual::cli
