// The SVG chart unit: decimation, the percentile axis, ticks, escaping and the rendered element.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "report/svg_chart.hpp"

namespace punctual::report {
namespace {

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The d attribute of the path drawn for `series`.
std::string path_of(const std::string& svg, const std::string& series) {
  const auto at = svg.find("data-series=\"" + series + "\"");
  if (at == std::string::npos) return {};
  const auto d = svg.find(" d=\"", at) + 4;
  return svg.substr(d, svg.find('"', d) - d);
}

TEST(svg_chart, decimation_bounds_the_count_and_keeps_every_bucket_max) {
  std::vector<chart_point> points;
  for (int i = 0; i < 10'000; ++i) points.push_back({double(i), double(i % 97)});
  points[4321].y = 1e6;  // a lone spike
  const auto kept = decimate_keep_max(points, 600);
  ASSERT_EQ(kept.size(), 600u);
  EXPECT_NE(std::find(kept.begin(), kept.end(), chart_point{4321, 1e6}), kept.end());
  for (std::size_t b = 0; b < kept.size(); ++b) {
    double max = 0;
    for (std::size_t i = b * points.size() / 600; i < (b + 1) * points.size() / 600; ++i) {
      max = std::max(max, points[i].y);
    }
    EXPECT_EQ(kept[b].y, max) << "bucket " << b;
  }
  EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end(),
                             [](const chart_point& a, const chart_point& b) { return a.x < b.x; }));
}

TEST(svg_chart, decimation_leaves_short_series_alone) {
  const std::vector<chart_point> points{{0, 3}, {1, 1}, {2, 2}};
  EXPECT_EQ(decimate_keep_max(points, 600), points);
  EXPECT_EQ(decimate_keep_max(points, 1), (std::vector<chart_point>{{0, 3}}));
  EXPECT_TRUE(decimate_keep_max(points, 0).empty());
}

TEST(svg_chart, percentile_axis_maps_each_nine_to_one_unit) {
  EXPECT_DOUBLE_EQ(percentile_axis_x(0), 0);
  EXPECT_NEAR(percentile_axis_x(50), std::log10(2.0), 1e-12);
  EXPECT_NEAR(percentile_axis_x(90), 1, 1e-12);
  EXPECT_NEAR(percentile_axis_x(99), 2, 1e-12);
  EXPECT_NEAR(percentile_axis_x(99.9), 3, 1e-9);
  EXPECT_NEAR(percentile_axis_x(99.99), 4, 1e-9);
  EXPECT_NEAR(percentile_axis_x(99.999), 5, 1e-9);
  EXPECT_DOUBLE_EQ(percentile_axis_x(100), percentile_axis_nines);
  EXPECT_DOUBLE_EQ(percentile_axis_x(99.99999), percentile_axis_nines);  // beyond the last label
}

TEST(svg_chart, nice_ticks_are_round_and_cover_the_maximum) {
  EXPECT_EQ(nice_ticks(10, 5), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(nice_ticks(3.7, 5), (std::vector<double>{0, 1, 2, 3, 4}));
  const auto t = nice_ticks(123'456, 5);
  EXPECT_GE(t.back(), 123'456);
  EXPECT_LE(t.size(), 8u);
  EXPECT_EQ(t[1], 25'000);
  EXPECT_EQ(nice_ticks(0, 5).back(), 1);  // an all-zero series still has an axis
}

TEST(svg_chart, xml_escape_covers_markup_and_quotes) {
  EXPECT_EQ(xml_escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
}

chart_spec two_series_chart() {
  chart_spec c;
  c.id = "demo-chart";
  c.title = "a <title>";
  c.x_title = "seconds";
  c.y_title = "latency";
  c.y_axis = y_axis_kind::latency;
  std::vector<chart_point> slow, fast;
  for (int i = 0; i < 5000; ++i) {
    slow.push_back({double(i), 2.5e6 + (i == 1234 ? 4e6 : 0)});
    fast.push_back({double(i), 1e5});
  }
  c.series = {{"slow & steady", "#123456", slow, ""}, {"fast", "#654321", fast, "4 3"}};
  c.thresholds = {{"SLO p99<=5ms", 5e6}};
  c.band = chart_band{"worst second", 1234, 1235};
  return c;
}

TEST(svg_chart, renders_ids_series_thresholds_band_and_escaped_text) {
  const std::string svg = render_svg(two_series_chart());
  EXPECT_EQ(svg.rfind("<svg id=\"demo-chart\"", 0), 0u);
  EXPECT_TRUE(svg.ends_with("</svg>"));
  EXPECT_NE(svg.find("data-series=\"slow &amp; steady\""), std::string::npos);
  EXPECT_NE(svg.find("data-series=\"fast\""), std::string::npos);
  EXPECT_EQ(svg.find("<title>a <title>"), std::string::npos);
  EXPECT_NE(svg.find("a &lt;title&gt;"), std::string::npos);
  EXPECT_NE(svg.find("SLO p99&lt;=5ms"), std::string::npos);
  EXPECT_NE(svg.find("stroke-dasharray=\"6 4\""), std::string::npos);  // the threshold is dashed
  EXPECT_NE(svg.find("worst second"), std::string::npos);
  EXPECT_NE(svg.find("latency (ms)"), std::string::npos);  // 6.5 ms at most: ms on the axis
  EXPECT_EQ(svg.find("http"), std::string::npos);          // no namespace URL, no resource
  EXPECT_EQ(svg.find("<script"), std::string::npos);
}

TEST(svg_chart, long_series_are_decimated_and_hover_markers_are_few) {
  const std::string svg = render_svg(two_series_chart());
  const std::string d = path_of(svg, "slow &amp; steady");
  ASSERT_FALSE(d.empty());
  EXPECT_EQ(count_of(d, "M") + count_of(d, "L"), chart_max_points);
  EXPECT_NE(svg.find("data-points=\"600\""), std::string::npos);
  // The spike survives decimation: its hover marker names its value.
  EXPECT_NE(svg.find("slow &amp; steady at 1234: 6.5ms"), std::string::npos);
  EXPECT_LE(count_of(svg, "<circle"), 2 * chart_max_markers);
  EXPECT_LT(svg.size(), 40'000u);
}

TEST(svg_chart, percentile_axis_has_the_nines_labels) {
  chart_spec c;
  c.id = "p";
  c.x_axis = x_axis_kind::percentile;
  c.y_axis = y_axis_kind::latency;
  c.series = {{"rt", "#000", {{0, 1000}, {90, 2000}, {99.9, 5000}, {100, 9000}}, ""}};
  const std::string svg = render_svg(c);
  for (const char* label : {">0%<", ">90%<", ">99%<", ">99.9%<", ">99.99%<", ">99.999%<"}) {
    EXPECT_NE(svg.find(label), std::string::npos) << label;
  }
  // 100 % is drawn at the right edge of the plot (960 - 48), 0 % at the left (78).
  const std::string d = path_of(svg, "rt");
  EXPECT_EQ(d.rfind("M78.0 ", 0), 0u) << d;
  EXPECT_NE(d.find("L912.0 "), std::string::npos) << d;
  EXPECT_NE(svg.find("rt at 99.9%: 5µs"), std::string::npos);
}

// The baseline (y attribute) of the <text> element whose content is `label`.
double text_baseline(const std::string& svg, const std::string& label) {
  const auto end = svg.find(">" + label + "</text>");
  if (end == std::string::npos) return -1;
  const auto y = svg.rfind(" y=\"", end) + 4;
  return std::stod(svg.substr(y, svg.find('"', y) - y));
}

// The x attribute of the <text> element whose content is `label`.
double text_x(const std::string& svg, const std::string& label) {
  const auto end = svg.find(">" + label + "</text>");
  if (end == std::string::npos) return -1;
  const auto x = svg.rfind(" x=\"", end) + 4;
  return std::stod(svg.substr(x, svg.find('"', x) - x));
}

TEST(svg_chart, labels_inside_the_plot_do_not_overlap) {
  chart_spec c;
  c.id = "labels";
  c.series = {{"s", "#000", {{0, 1}, {10, 100}}, ""}};
  c.thresholds = {{"SLO p99<=50", 50}, {"SLO p99.9<=50", 50}, {"far", 1e6}, {"farther", 2e6}};
  c.band = chart_band{"worst second (9)", 9.5, 10};  // at the right edge
  const std::string svg = render_svg(c);
  const double a = text_baseline(svg, "SLO p99&lt;=50");
  const double b = text_baseline(svg, "SLO p99.9&lt;=50");
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  EXPECT_GE(std::abs(a - b), 14);
  const double far = text_baseline(svg, "\u2191 far (above the chart)");
  const double farther = text_baseline(svg, "\u2191 farther (above the chart)");
  const double band = text_baseline(svg, "worst second (9)");
  EXPECT_GT(far, 0);
  EXPECT_GE(std::abs(far - farther), 14);
  EXPECT_GE(std::abs(band - far), 14);
  EXPECT_GE(std::abs(band - farther), 14);
  // The band's label is pulled left so that it ends inside the plot.
  EXPECT_LE(text_x(svg, "worst second (9)") + 16 * 8.2, 960 - 48);
}

TEST(svg_chart, scales_with_the_page) {
  const std::string svg = render_svg(two_series_chart());
  const std::string head = svg.substr(0, svg.find('>'));
  EXPECT_NE(head.find("viewBox=\"0 0 960 300\""), std::string::npos) << head;
  EXPECT_NE(head.find("width=\"100%\""), std::string::npos) << head;
  EXPECT_EQ(head.find("height="), std::string::npos) << head;  // from the viewBox's ratio
  EXPECT_NE(head.find("font-size=\"13\""), std::string::npos) << head;
}

TEST(svg_chart, values_are_never_written_with_an_exponent) {
  chart_spec c;
  c.id = "values";
  c.y_axis = y_axis_kind::latency;
  c.x_axis = x_axis_kind::percentile;
  c.series = {{"rt", "#000", {{99.99999, 999'817'215}, {0.00001, 36'400}}, ""}};
  std::string svg = render_svg(c);
  EXPECT_NE(svg.find("rt at 99.99999%: 1s"), std::string::npos) << svg;  // 999.8 ms
  EXPECT_NE(svg.find("rt at 0.00001%: 36.4µs"), std::string::npos) << svg;
  c.x_axis = x_axis_kind::linear;
  c.y_axis = y_axis_kind::count;
  c.series = {{"n", "#000", {{0, 1}, {600, 2'345'678}}, ""}};
  svg = render_svg(c);
  EXPECT_NE(svg.find("n at 600: 2345678"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("e+"), std::string::npos) << svg;
}

TEST(svg_chart, wide_y_labels_move_the_plot_right) {
  chart_spec c;
  c.id = "wide";
  c.series = {{"n", "#000", {{0, 0}, {10, 2'345'678}}, ""}};
  const std::string svg = render_svg(c);
  // The top label, "2500000", ends 7 units left of the plot and starts right of the rotated y
  // title (baseline at x 16, so its glyphs end before x 24).
  const std::string d = path_of(svg, "n");
  const double left = std::stod(d.substr(1, d.find(' ') - 1));
  EXPECT_GE(left - 7 - 7 * 8.2, 24) << d;
  const double x = text_x(svg, "2500000");
  EXPECT_DOUBLE_EQ(x, left - 7);
}

TEST(svg_chart, x_end_stretches_a_linear_axis) {
  chart_spec c;
  c.id = "end";
  c.series = {{"s", "#000", {{0.5, 1}}, ""}};
  c.x_end = 2;
  const std::string svg = render_svg(c);
  EXPECT_NE(svg.find(">2</text>"), std::string::npos);  // the last x label
  // 0.5 of 2: a quarter of the plot from 78 to 912.
  EXPECT_NE(svg.find("cx=\"286.5\""), std::string::npos) << svg;
}

TEST(svg_chart, an_empty_chart_says_so) {
  chart_spec c;
  c.id = "empty";
  c.series = {{"nothing", "#000", {}, ""}};
  const std::string svg = render_svg(c);
  EXPECT_NE(svg.find("no data"), std::string::npos);
  EXPECT_NE(svg.find("data-points=\"0\""), std::string::npos);
}

}  // namespace
}  // namespace punctual::report
