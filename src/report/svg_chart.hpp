// Line charts as inline SVG text for the HTML report: no script, no external resource, so the
// page stays one self-contained file that any browser (or a text search) can read.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace punctual::report {

enum class x_axis_kind {
  linear,
  // HdrHistogram's plot: x = log10(1 / (1 - p)), so each further "nine" gets the same width.
  percentile,
};

enum class y_axis_kind {
  latency,  // values in ns, shown in ns, µs, ms or s after the largest value
  count,    // plain numbers
};

struct chart_point {
  double x = 0;  // percentile axis: the percentile (0..100), else the value itself
  double y = 0;
  friend bool operator==(const chart_point&, const chart_point&) = default;
};

struct chart_series {
  std::string name;
  std::string colour;  // any CSS colour, e.g. "#1f77b4"
  std::vector<chart_point> points;
  std::string dash;  // stroke-dasharray, empty for a solid line
};

// A horizontal line across the plot, e.g. an SLO bound.
struct chart_threshold {
  std::string label;
  double y = 0;
  std::string colour = "#c0392b";
};

// A shaded vertical band, e.g. the worst second of the run.
struct chart_band {
  std::string label;
  double x_from = 0;
  double x_to = 0;
};

struct chart_spec {
  std::string id;  // the svg element's id
  std::string title;
  std::string x_title;
  std::string y_title;
  x_axis_kind x_axis = x_axis_kind::linear;
  y_axis_kind y_axis = y_axis_kind::count;
  // The viewBox: the element itself takes the page's width (width="100%"), so these set the
  // aspect ratio and how large the text (13 units) is against the plot.
  int width = 960;
  int height = 300;
  // A linear x axis reaches at least this far, so charts of the same rows share one axis even
  // where a series has fewer points (e.g. the end of the last row); 0 leaves it to the data.
  double x_end = 0;
  std::vector<chart_series> series;
  std::vector<chart_threshold> thresholds;
  std::optional<chart_band> band;
};

// A series is drawn with at most this many points; longer ones are decimated.
inline constexpr std::size_t chart_max_points = 600;
// Hover markers (invisible circles with a <title>) per series: enough to read a peak's value
// without making a ten-minute run's page heavy.
inline constexpr std::size_t chart_max_markers = 120;
// The percentile axis ends at 99.999 % (five nines); higher levels and 100 % are drawn there.
inline constexpr int percentile_axis_nines = 5;

// Splits the points, in order, into max_points buckets of (nearly) equal size and keeps each
// bucket's point of largest y: a spike survives decimation, which an average would hide.
// Series of at most max_points are returned as they are.
std::vector<chart_point> decimate_keep_max(const std::vector<chart_point>& points,
                                           std::size_t max_points);

// log10(1 / (1 - p/100)) for p in [0, 100), clamped to [0, percentile_axis_nines]; 100 maps to
// the end of the axis.
double percentile_axis_x(double percentile);

// Up to about `target` round tick values (steps of 1, 2, 2.5 or 5 times a power of ten) from 0
// to at least `max`.
std::vector<double> nice_ticks(double max, int target = 5);

// Escapes &, <, >, " and ' for XML text and attributes (HTML too).
std::string xml_escape(std::string_view text);

// The chart as one <svg> element.
std::string render_svg(const chart_spec& chart);

}  // namespace punctual::report
