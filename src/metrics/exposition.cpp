#include "metrics/exposition.hpp"

#include <fmt/format.h>

#include <cmath>

namespace punctual::metrics {
namespace {

const char* type_name(metric_type t) {
  switch (t) {
    case metric_type::counter:
      return "counter";
    case metric_type::gauge:
      return "gauge";
    case metric_type::histogram:
      return "histogram";
  }
  return "untyped";
}

// HELP escapes backslash and newline; label values also the double quote.
void append_escaped(std::string& out, std::string_view text, bool quote) {
  for (const char ch : text) {
    if (ch == '\\') {
      out += "\\\\";
    } else if (ch == '\n') {
      out += "\\n";
    } else if (quote && ch == '"') {
      out += "\\\"";
    } else {
      out += ch;
    }
  }
}

void append_value(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
  } else if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
  } else if (v == std::trunc(v) && std::fabs(v) < 9007199254740992.0) {
    out += fmt::format("{}", static_cast<long long>(v));
  } else {
    out += fmt::format("{}", v);
  }
}

bool belongs(std::string_view sample, const family& f) {
  if (!sample.starts_with(f.name)) return false;
  const std::string_view rest = sample.substr(f.name.size());
  if (f.type != metric_type::histogram) return rest.empty();
  return rest == "_bucket" || rest == "_sum" || rest == "_count";
}

}  // namespace

std::string render(const snapshot& s) {
  std::string out;
  out.reserve(64 * s.samples.size() + 256);
  std::size_t next = 0;
  for (const auto& f : s.families) {
    out += "# HELP ";
    out += f.name;
    out += ' ';
    append_escaped(out, f.help, false);
    out += "\n# TYPE ";
    out += f.name;
    out += ' ';
    out += type_name(f.type);
    out += '\n';
    // Samples are grouped by family in the families' order; a histogram's carry a suffix.
    for (; next < s.samples.size(); ++next) {
      const sample& x = s.samples[next];
      if (!belongs(x.name, f)) break;
      out += x.name;
      if (!x.labels.empty()) {
        out += '{';
        for (std::size_t i = 0; i < x.labels.size(); ++i) {
          if (i) out += ',';
          out += x.labels[i].name;
          out += "=\"";
          append_escaped(out, x.labels[i].value, true);
          out += '"';
        }
        out += '}';
      }
      out += ' ';
      append_value(out, x.value);
      out += '\n';
    }
  }
  return out;
}

}  // namespace punctual::metrics
