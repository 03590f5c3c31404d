// The HTML report's pieces, shared by html_report.cpp (page, header, counts, verdicts),
// html_charts.cpp (spectrum and series over time) and html_tables.cpp (names, sessions,
// retries). Internal to src/report. Every reader of the JSON here tolerates a missing or
// mistyped key: an old report renders with what it has.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "punctual/histogram/histogram.hpp"
#include "report/json.hpp"
#include "report/svg_chart.hpp"

namespace punctual::report {

using html_json = nlohmann::ordered_json;

// The member `key` of an object, or null when `j` is no object or the member is absent or null.
const html_json* html_find(const html_json& j, std::string_view key);
// html_find(html_find(j, a), b), tolerating a missing first level.
const html_json* html_find(const html_json* j, std::string_view key);
double html_number(const html_json* j, std::string_view key, double fallback = 0);
std::string html_string(const html_json* j, std::string_view key);

// "1.25 ms", "850 ns", "72.2 µs": three significant digits.
std::string html_duration(double ns);
// A distributed run: "shard 2 of 7", or "merged from 7 shards" with their start lags; empty
// for a run of one process.
std::string html_shard_text(const html_json& report);
// "1,234,567"; fractions keep up to 4 significant digits.
std::string html_count(double n);
// "2026-11-30 12:34:56.123 UTC" from Unix ns.
std::string html_utc(double unix_ns);
// A base64 V2 histogram, or none when the text is absent or does not decode.
std::optional<hdr::histogram> html_histogram(const html_json* text);

// series.interval_ns in seconds: the span of each row over time (1 when the report has none).
double html_row_interval_s(const html_json& report);
// Where a row over time is drawn: the middle of the span it covers, [offset_s, offset_s +
// interval), so a stall that completes late in a row peaks inside it, not at its start.
double html_row_middle_s(const html_json& row, double interval_s);
// Where the last of `rows` ends: the x axis of every chart over time reaches it.
double html_rows_end_s(const html_json& rows, double interval_s);

// <!DOCTYPE html> up to the page's <h1>: the house style, inline, so the page fetches nothing.
void html_page_start(std::string& out, std::string_view title);
void html_chart(std::string& out, const chart_spec& chart, std::string_view caption);
void html_note(std::string& out, std::string_view text);

// html_charts.cpp
// The charts' colours.
inline constexpr const char* html_blue = "#1f77b4";
inline constexpr const char* html_orange = "#e07b00";
inline constexpr const char* html_green = "#2ca02c";
inline constexpr const char* html_red = "#c0392b";
inline constexpr const char* html_purple = "#7b4ea3";
inline constexpr const char* html_grey = "#777777";
// A percentile spectrum (x: 1/(1-p) on a log scale; y: latency), and a chart over time.
chart_spec html_spectrum_spec(std::string id, std::string title);
chart_spec html_time_spec(std::string id, std::string title, y_axis_kind y, int height);
void html_spectrum_section(std::string& out, const html_json& report);
void html_demo_spectrum(std::string& out, const html_json& demo);  // demo has its columns
void html_over_time_sections(std::string& out, const html_json& report);
// html_tables.cpp
void html_named_sections(std::string& out, const html_json& report);
void html_retry_section(std::string& out, const html_json& report);
// The generator's own threads: requests sent for paused workers, the longest pause, the host's
// steal, and each worker's share (generator in the JSON).
void html_generator_section(std::string& out, const html_json& report);
// "50 ms" or ">=50 ms" when the view marks that percentile as a lower bound.
std::string html_view_cell(const html_json* view, std::string_view percentile_key);

}  // namespace punctual::report
