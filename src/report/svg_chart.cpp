#include "report/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>
#include <iterator>

#include "analysis/text.hpp"

namespace punctual::report {

namespace {

// In viewBox units: the chart is scaled to the page's width, so these are about pixels on a
// 1000 px wide page.
constexpr double svg_font_size = 13;
constexpr double svg_margin_left = 78;   // at least; more when the y labels are wider
constexpr double svg_y_title_room = 24;  // the rotated y title, its baseline at x = 16
constexpr double svg_tick_gap = 7;       // between a y label and the plot
constexpr double svg_margin_right = 48;  // room for half of "99.999%", centred on the edge
constexpr double svg_margin_bottom = 46;
constexpr double svg_title_row = 24;
constexpr double svg_legend_row = 19;
constexpr double svg_char_width = 8.2;  // a generous width of a 13px sans-serif character
// A threshold this far above the data would squash the data into the bottom of the plot, so it
// is named at the top instead of drawn to scale.
constexpr double svg_threshold_stretch = 4;

struct svg_unit {
  double divisor = 1;
  const char* name = "";
};

svg_unit svg_unit_for(y_axis_kind kind, double max) {
  if (kind == y_axis_kind::count) return {1, ""};
  if (max >= 1e9) return {1e9, "s"};
  if (max >= 1e6) return {1e6, "ms"};
  if (max >= 1e3) return {1e3, "µs"};
  return {1, "ns"};
}

// The project's duration text ("1s", not "1e+03ms", for 999.8 ms), with the page's µ.
std::string svg_value_text(double v, y_axis_kind kind) {
  if (kind == y_axis_kind::count) return analysis::number_text(v);
  std::string text = analysis::duration_text(v);
  if (text.ends_with("us")) text.replace(text.size() - 2, 2, "µs");
  return text;
}

// Fixed-point, trailing zeros dropped: a percentile of 99.99999 or an offset of 0.0005 s never
// turns into an exponent.
std::string svg_plain_number(double v) {
  std::string text = fmt::format("{:.6f}", v);
  text.erase(text.find_last_not_of('0') + 1);
  if (text.ends_with('.')) text.pop_back();
  return text == "-0" ? "0" : text;
}

std::string svg_x_text(double x, x_axis_kind kind) {
  return svg_plain_number(x) + (kind == x_axis_kind::percentile ? "%" : "");
}

// The plot area and the mapping from data to pixels.
struct svg_frame {
  double left = 0, top = 0, right = 0, bottom = 0;
  double x_max = 1;  // axis units (the percentile axis: nines)
  double y_max = 1;  // data units
  x_axis_kind x_kind = x_axis_kind::linear;

  double axis_x(double x) const {
    return x_kind == x_axis_kind::percentile ? percentile_axis_x(x) : x;
  }
  double px(double x) const {
    return left + std::clamp(axis_x(x) / x_max, 0.0, 1.0) * (right - left);
  }
  double py(double y) const { return bottom - std::clamp(y / y_max, 0.0, 1.0) * (bottom - top); }
};

double svg_legend_width(const chart_series& s) {
  return 30 + svg_char_width * static_cast<double>(s.name.size());
}

int svg_legend_rows(const chart_spec& c) {
  int rows = c.series.empty() ? 0 : 1;
  double x = 0;
  for (const auto& s : c.series) {
    if (x > 0 && x + svg_legend_width(s) > c.width - svg_margin_left) {
      ++rows;
      x = 0;
    }
    x += svg_legend_width(s);
  }
  return rows;
}

void svg_legend(std::string& out, const chart_spec& c) {
  double x = svg_margin_left;
  double y = svg_title_row + svg_legend_row - 4;
  for (const auto& s : c.series) {
    if (x > svg_margin_left && x + svg_legend_width(s) > c.width) {
      x = svg_margin_left;
      y += svg_legend_row;
    }
    fmt::format_to(
        std::back_inserter(out),
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
        "stroke-width=\"2\"{}/><text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>",
        x, y - 4, x + 20, y - 4, xml_escape(s.colour),
        s.dash.empty() ? "" : fmt::format(" stroke-dasharray=\"{}\"", xml_escape(s.dash)), x + 24,
        y, xml_escape(s.name));
    x += svg_legend_width(s);
  }
}

double svg_data_max(const chart_spec& c, bool x_axis) {
  double m = 0;
  for (const auto& s : c.series) {
    for (const auto& p : s.points) m = std::max(m, x_axis ? p.x : p.y);
  }
  return m;
}

void svg_axes(std::string& out, const chart_spec& c, const svg_frame& f,
              const std::vector<double>& y_ticks, const svg_unit& unit) {
  auto o = std::back_inserter(out);
  std::vector<std::pair<double, std::string>> x_ticks;  // axis units, label
  if (c.x_axis == x_axis_kind::percentile) {
    static constexpr std::array<const char*, percentile_axis_nines + 1> labels{
        "0%", "90%", "99%", "99.9%", "99.99%", "99.999%"};
    for (int i = 0; i <= percentile_axis_nines; ++i) x_ticks.emplace_back(i, labels[i]);
  } else {
    for (const double t : nice_ticks(f.x_max, 8)) x_ticks.emplace_back(t, svg_plain_number(t));
  }
  out += "<g stroke=\"#e3e3e3\">";
  for (const double t : y_ticks) {
    fmt::format_to(o, "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/>", f.left,
                   f.py(t), f.right, f.py(t));
  }
  for (const auto& tick : x_ticks) {
    const double x = f.left + tick.first / f.x_max * (f.right - f.left);
    fmt::format_to(o, "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/>", x, f.top,
                   x, f.bottom);
  }
  fmt::format_to(o,
                 "</g><rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
                 "fill=\"none\" stroke=\"#999\"/><g fill=\"#444\" text-anchor=\"end\">",
                 f.left, f.top, f.right - f.left, f.bottom - f.top);
  for (const double t : y_ticks) {
    fmt::format_to(o, "<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>", f.left - svg_tick_gap,
                   f.py(t) + 4.5, svg_plain_number(t / unit.divisor));
  }
  out += "</g><g fill=\"#444\" text-anchor=\"middle\">";
  for (const auto& [t, label] : x_ticks) {
    fmt::format_to(o, "<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>",
                   f.left + t / f.x_max * (f.right - f.left), f.bottom + 17, label);
  }
  fmt::format_to(o, "<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>", (f.left + f.right) / 2,
                 f.bottom + 38, xml_escape(c.x_title));
  const std::string y_title = *unit.name ? fmt::format("{} ({})", c.y_title, unit.name) : c.y_title;
  fmt::format_to(o,
                 "<text x=\"16\" y=\"{0:.1f}\" transform=\"rotate(-90 16 {0:.1f})\">{1}</text></g>",
                 (f.top + f.bottom) / 2, xml_escape(y_title));
}

// The boxes of the labels drawn inside the plot so far: a band's or threshold's label moves to
// another row rather than print over another one.
struct svg_label_boxes {
  struct box {
    double x0, y0, x1, y1;
  };
  std::vector<box> placed;

  // The first baseline of `candidates` (inside the plot) at which [x0, x1] overlaps no placed
  // label, else the first candidate; the label's box is then taken.
  double place(double x0, double x1, std::initializer_list<double> candidates, const svg_frame& f) {
    double chosen = *candidates.begin();
    for (const double b : candidates) {
      if (b - 12 < f.top || b + 3 > f.bottom) continue;
      const bool clash = std::any_of(placed.begin(), placed.end(), [&](const box& p) {
        return x0 < p.x1 && p.x0 < x1 && b - 12 < p.y1 && p.y0 < b + 3;
      });
      if (!clash) {
        chosen = b;
        break;
      }
    }
    placed.push_back({x0, chosen - 12, x1, chosen + 3});
    return chosen;
  }
};

double svg_text_width(std::string_view text) {
  return svg_char_width * static_cast<double>(text.size());
}

void svg_band(std::string& out, const chart_band& b, const svg_frame& f, svg_label_boxes& labels) {
  const double x0 = f.px(b.x_from);
  const double x1 = f.px(b.x_to);
  if (x1 <= x0) return;  // outside the plotted range
  const double width = svg_text_width(b.label);
  const double text_x = std::min(x0 + 3, f.right - 3 - width);
  const double baseline = labels.place(text_x, text_x + width, {f.top + 14, f.top + 29}, f);
  // The outline keeps a band of one second visible on an axis of many minutes.
  fmt::format_to(std::back_inserter(out),
                 "<rect class=\"band\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
                 "height=\"{:.1f}\" fill=\"#e76f51\" fill-opacity=\"0.18\" stroke=\"#e76f51\" "
                 "stroke-opacity=\"0.5\"><title>{}</title></rect><text x=\"{:.1f}\" y=\"{:.1f}\" "
                 "fill=\"#b5452b\">{}</text>",
                 x0, f.top, x1 - x0, f.bottom - f.top, xml_escape(b.label), text_x, baseline,
                 xml_escape(b.label));
}

void svg_threshold(std::string& out, const chart_threshold& t, const svg_frame& f, y_axis_kind kind,
                   svg_label_boxes& labels) {
  auto o = std::back_inserter(out);
  const std::string label = xml_escape(t.label);
  const std::string colour = xml_escape(t.colour);
  const double x1 = f.right - 4;
  if (t.y > f.y_max) {
    const std::string text = "\u2191 " + t.label + " (above the chart)";
    const double x0 = x1 - svg_text_width(text);
    const double b = labels.place(x0, x1, {f.top + 14, f.top + 29, f.top + 44}, f);
    fmt::format_to(o,
                   "<text class=\"threshold\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" "
                   "fill=\"{}\">{}</text>",
                   x1, b, colour, xml_escape(text));
    return;
  }
  const double y = f.py(t.y);
  const double b = labels.place(x1 - svg_text_width(t.label), x1,
                                {y - 4, y + 15, y - 19, y + 30, y - 34, y + 45}, f);
  fmt::format_to(o,
                 "<g class=\"threshold\"><line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" "
                 "y2=\"{:.1f}\" stroke=\"{}\" stroke-dasharray=\"6 4\"><title>{}: {}</title>"
                 "</line><text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" fill=\"{}\">{}</text>"
                 "</g>",
                 f.left, y, f.right, y, colour, label, svg_value_text(t.y, kind), x1, b, colour,
                 label);
}

void svg_series(std::string& out, const chart_series& s, const svg_frame& f, const chart_spec& c) {
  auto o = std::back_inserter(out);
  const std::vector<chart_point> points = decimate_keep_max(s.points, chart_max_points);
  const std::string name = xml_escape(s.name);
  fmt::format_to(o,
                 "<path data-series=\"{}\" data-points=\"{}\" fill=\"none\" stroke-width=\"1.6\" "
                 "stroke=\"{}\"{} d=\"",
                 name, points.size(), xml_escape(s.colour),
                 s.dash.empty() ? "" : fmt::format(" stroke-dasharray=\"{}\"", xml_escape(s.dash)));
  for (std::size_t i = 0; i < points.size(); ++i) {
    fmt::format_to(o, "{}{:.1f} {:.1f}", i ? "L" : "M", f.px(points[i].x), f.py(points[i].y));
  }
  fmt::format_to(o, "\"><title>{}</title></path><g data-marks=\"{}\" fill-opacity=\"0\">", name,
                 name);
  for (const auto& p : decimate_keep_max(points, chart_max_markers)) {
    fmt::format_to(o,
                   "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\"><title>{} at {}: {}</title>"
                   "</circle>",
                   f.px(p.x), f.py(p.y), name, svg_x_text(p.x, c.x_axis),
                   svg_value_text(p.y, c.y_axis));
  }
  out += "</g>";
  if (points.size() == 1) {  // a path of one point draws nothing
    fmt::format_to(o, "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>",
                   f.px(points[0].x), f.py(points[0].y), xml_escape(s.colour));
  }
}

// The y range: the data and the thresholds near it, with round ticks in the display unit.
std::vector<double> svg_y_ticks(const chart_spec& c, svg_unit& unit) {
  const double data_max = svg_data_max(c, false);
  double max = data_max;
  for (const auto& t : c.thresholds) {
    if (data_max <= 0 || t.y <= data_max * svg_threshold_stretch) max = std::max(max, t.y);
  }
  unit = svg_unit_for(c.y_axis, max);
  // A little headroom, so a line at the maximum is not drawn on the frame.
  std::vector<double> ticks = nice_ticks(max * 1.04 / unit.divisor);
  for (double& t : ticks) t *= unit.divisor;
  return ticks;
}

// Wide enough for the widest y label (a count of millions) beside the rotated y title.
double svg_frame_left(const std::vector<double>& y_ticks, const svg_unit& unit) {
  double widest = 0;
  for (const double t : y_ticks) {
    widest = std::max(widest, svg_text_width(svg_plain_number(t / unit.divisor)));
  }
  return std::max(svg_margin_left, svg_y_title_room + svg_tick_gap + widest);
}

}  // namespace

std::vector<chart_point> decimate_keep_max(const std::vector<chart_point>& points,
                                           std::size_t max_points) {
  if (max_points == 0) return {};
  if (points.size() <= max_points) return points;
  std::vector<chart_point> kept;
  kept.reserve(max_points);
  const auto by_y = [](const chart_point& a, const chart_point& b) { return a.y < b.y; };
  // Bucket b is [b * n / max, (b + 1) * n / max): sizes differ by at most one point.
  for (std::size_t b = 0; b < max_points; ++b) {
    const auto first = static_cast<std::ptrdiff_t>(b * points.size() / max_points);
    const auto last = static_cast<std::ptrdiff_t>((b + 1) * points.size() / max_points);
    kept.push_back(*std::max_element(points.begin() + first, points.begin() + last, by_y));
  }
  return kept;
}

double percentile_axis_x(double percentile) {
  if (!(percentile > 0)) return 0;
  if (percentile >= 100) return percentile_axis_nines;
  return std::min(std::log10(1.0 / (1.0 - percentile / 100.0)),
                  static_cast<double>(percentile_axis_nines));
}

std::vector<double> nice_ticks(double max, int target) {
  if (!(max > 0) || !std::isfinite(max)) max = 1;
  target = std::max(target, 1);
  const double raw = max / target;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude * 10;
  for (const double m : {1.0, 2.0, 2.5, 5.0}) {
    if (raw <= m * magnitude) {
      step = m * magnitude;
      break;
    }
  }
  const auto steps = static_cast<int>(std::ceil(max / step - 1e-9));
  std::vector<double> ticks;
  for (int i = 0; i <= steps; ++i) ticks.push_back(i * step);
  return ticks;
}

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string render_svg(const chart_spec& c) {
  svg_unit unit;
  const std::vector<double> y_ticks = svg_y_ticks(c, unit);
  svg_frame f;
  f.x_kind = c.x_axis;
  f.left = svg_frame_left(y_ticks, unit);
  f.right = c.width - svg_margin_right;
  f.top = svg_title_row + svg_legend_row * svg_legend_rows(c) + 10;
  f.bottom = c.height - svg_margin_bottom;
  f.x_max = c.x_axis == x_axis_kind::percentile
                ? percentile_axis_nines
                : nice_ticks(std::max(svg_data_max(c, true), c.x_end), 8).back();
  f.y_max = y_ticks.back();

  std::string out = fmt::format(
      "<svg id=\"{0}\" class=\"chart\" viewBox=\"0 0 {1} {2}\" width=\"100%\" "
      "preserveAspectRatio=\"xMinYMin meet\" role=\"img\" aria-label=\"{3}\" "
      "font-family=\"system-ui, sans-serif\" font-size=\"{5:g}\"><title>{3}</title>"
      "<text x=\"{4:.1f}\" y=\"17\" font-weight=\"bold\">{3}</text>",
      xml_escape(c.id), c.width, c.height, xml_escape(c.title), svg_margin_left, svg_font_size);
  svg_legend(out, c);
  svg_axes(out, c, f, y_ticks, unit);
  svg_label_boxes labels;
  if (c.band) svg_band(out, *c.band, f, labels);
  for (const auto& t : c.thresholds) svg_threshold(out, t, f, c.y_axis, labels);
  bool any_point = false;
  for (const auto& s : c.series) {
    svg_series(out, s, f, c);
    any_point = any_point || !s.points.empty();
  }
  if (!any_point) {
    fmt::format_to(std::back_inserter(out),
                   "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">no data</text>",
                   (f.left + f.right) / 2, (f.top + f.bottom) / 2);
  }
  out += "</svg>";
  return out;
}

}  // namespace punctual::report
