// The --slo expression parser. Pure text in, expression or one-line error out; it allocates
// only for the result and never throws from try_parse_slo (the fuzzer checks both).
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

#include "analysis/slo.hpp"

namespace punctual::analysis {
namespace {

constexpr double max_duration_ns = 24.0 * 3600 * 1e9;
constexpr double max_count = 1e15;
constexpr std::size_t max_number_length = 40;

std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Echoed user text stays on one line and printable whatever bytes it holds.
std::string printable(std::string_view s) {
  std::string out;
  for (const char ch : s.substr(0, 80)) {
    const auto c = static_cast<unsigned char>(ch);
    out += (c >= 0x20 && c < 0x7f) ? ch : '?';
  }
  if (s.size() > 80) out += "...";
  return out;
}

// Digits with at most one '.', at least one digit; no sign, no exponent.
std::optional<double> parse_decimal(std::string_view s) noexcept {
  if (s.empty() || s.size() > max_number_length) return std::nullopt;
  int digits = 0;
  int dots = 0;
  for (const char c : s) {
    if (c >= '0' && c <= '9') {
      ++digits;
    } else if (c == '.') {
      ++dots;
    } else {
      return std::nullopt;
    }
  }
  if (digits == 0 || dots > 1) return std::nullopt;
  double value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc{} || end != s.data() + s.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

struct failure {
  std::string expected;
  std::string_view got;
};

std::optional<double> parse_duration_ns(std::string_view s) noexcept {
  struct unit {
    std::string_view name;
    double scale;
  };
  static constexpr std::array<unit, 5> units{
      {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}}};
  const auto split = s.find_first_not_of("0123456789.");
  if (split == std::string_view::npos) return std::nullopt;
  const auto number = parse_decimal(s.substr(0, split));
  if (!number) return std::nullopt;
  for (const auto& u : units) {
    if (s.substr(split) != u.name) continue;
    const double ns = std::round(*number * u.scale);
    if (ns > max_duration_ns) return std::nullopt;
    return ns;
  }
  return std::nullopt;
}

std::optional<double> parse_percent(std::string_view s) noexcept {
  if (s.empty() || s.back() != '%') return std::nullopt;
  const auto value = parse_decimal(s.substr(0, s.size() - 1));
  if (!value || *value > 100) return std::nullopt;
  return value;
}

std::optional<double> parse_count(std::string_view s) noexcept {
  if (s.find('.') != std::string_view::npos) return std::nullopt;
  const auto value = parse_decimal(s);
  if (!value || *value > max_count) return std::nullopt;
  return value;
}

// The left-hand side: fills metric and percentile.
std::optional<failure> parse_subject(std::string_view lhs, slo_expression& e) {
  if (lhs == "errors") {
    e.metric = slo_metric::errors;
  } else if (lhs == "timeouts") {
    e.metric = slo_metric::timeouts;
  } else if (lhs == "rate") {
    e.metric = slo_metric::rate;
  } else if (!lhs.empty() && lhs.front() == 'p' && lhs.size() > 1 &&
             lhs.find_first_not_of("0123456789.", 1) == std::string_view::npos) {
    const auto p = parse_decimal(lhs.substr(1));
    if (!p || *p <= 0 || *p > 100) {
      return failure{"a percentile above 0 and at most 100 after 'p'", lhs};
    }
    e.metric = slo_metric::percentile;
    e.percentile = *p;
  } else {
    return failure{"p<percentile> (e.g. p99), errors, timeouts or rate before the comparator", lhs};
  }
  return std::nullopt;
}

std::optional<failure> parse_comparator(std::string_view op, slo_expression& e) {
  static constexpr std::array<std::pair<std::string_view, comparator>, 5> ops{
      {{"<=", comparator::le},
       {">=", comparator::ge},
       {"==", comparator::eq},
       {"<", comparator::lt},
       {">", comparator::gt}}};
  for (const auto& [name, c] : ops) {
    if (op == name) {
      e.cmp = c;
      return std::nullopt;
    }
  }
  return failure{"a comparator: <, <=, ==, >= or >", op};
}

std::optional<failure> parse_threshold(std::string_view rhs, slo_expression& e) {
  switch (e.metric) {
    case slo_metric::percentile:
      if (const auto ns = parse_duration_ns(rhs)) {
        e.unit = slo_unit::nanoseconds;
        e.threshold = *ns;
        return std::nullopt;
      }
      return failure{"a duration of at most 24h with a unit (ns, us, ms, s or m), e.g. 200ms", rhs};
    case slo_metric::rate:
      if (const auto pct = parse_percent(rhs)) {
        e.unit = slo_unit::percent;
        e.threshold = *pct;
        return std::nullopt;
      }
      return failure{"a percentage of the planned rate from 0% to 100%, e.g. 99%", rhs};
    case slo_metric::errors:
    case slo_metric::timeouts:
      if (const auto pct = parse_percent(rhs)) {
        e.unit = slo_unit::percent;
        e.threshold = *pct;
        return std::nullopt;
      }
      if (const auto n = parse_count(rhs)) {
        e.unit = slo_unit::count;
        e.threshold = *n;
        return std::nullopt;
      }
      return failure{
          "a whole count (e.g. 0) or a percentage of planned from 0% to 100% (e.g. 0.1%)", rhs};
  }
  return failure{"a threshold", rhs};
}

// "NAME:" before an expression scopes it to a request name or a session (resolved later, against
// the run's names): name bytes are the names' own, [A-Za-z0-9_-] and the '.' of SCENARIO.STEP.
std::optional<failure> parse_scope(std::string_view& body, slo_expression& e) {
  const auto colon = body.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const std::string_view scope = trim(body.substr(0, colon));
  const bool ok =
      !scope.empty() && scope.find_first_not_of(
                            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.") ==
                            std::string_view::npos;
  if (!ok)
    return failure{"a name (SCENARIO.STEP, SCENARIO.session or a --requests name) before ':'",
                   scope};
  e.scope = std::string(scope);
  body = trim(body.substr(colon + 1));
  return std::nullopt;
}

std::optional<failure> parse_into(std::string_view text, slo_expression& e) {
  std::string_view body = trim(text);
  if (auto f = parse_scope(body, e)) return f;
  if (body.empty()) return failure{"an expression such as p99<=200ms", body};
  const auto op_start = body.find_first_of("<>=!");
  if (op_start == std::string_view::npos) {
    return failure{"a comparator (<, <=, ==, >= or >), e.g. p99<=200ms", body};
  }
  const auto op_end = body.find_first_not_of("<>=!", op_start);
  const std::string_view rhs =
      op_end == std::string_view::npos ? std::string_view{} : body.substr(op_end);
  if (auto f = parse_subject(trim(body.substr(0, op_start)), e)) return f;
  if (!e.scope.empty() && e.metric == slo_metric::rate) {
    return failure{"p<percentile>, errors or timeouts for a name (rate is the whole run's)",
                   "rate"};
  }
  if (auto f = parse_comparator(body.substr(op_start, op_end - op_start), e)) return f;
  return parse_threshold(trim(rhs), e);
}

}  // namespace

std::optional<slo_expression> try_parse_slo(std::string_view text, std::string* error) {
  slo_expression e;
  const auto f = parse_into(text, e);
  if (!f) {
    e.text = std::string(trim(text));
    return e;
  }
  if (error) {
    *error = "--slo '" + printable(text) + "': expected " + f->expected + ", got '" +
             printable(f->got) + "'";
  }
  return std::nullopt;
}

slo_expression parse_slo(std::string_view text) {
  std::string error;
  auto e = try_parse_slo(text, &error);
  if (!e) throw slo_syntax_error(error);
  return std::move(*e);
}

void resolve_slo_scopes(std::vector<slo_expression>& slos, const std::vector<std::string>& names,
                        const std::vector<bool>& sessions) {
  for (auto& e : slos) {
    if (e.scope.empty()) continue;
    const auto it = std::find(names.begin(), names.end(), e.scope);
    if (it == names.end()) {
      throw slo_syntax_error(
          "--slo '" + printable(e.text) + "': " +
          (names.empty()
               ? std::string("names '") + printable(e.scope) +
                     "', but only --requests and --scenario runs have names"
               : "no step, session or request named '" + printable(e.scope) + "' in this run"));
    }
    e.name = static_cast<std::size_t>(it - names.begin());
    e.session = e.name < sessions.size() && sessions[e.name];
  }
}

std::vector<double> slo_percentiles(const std::vector<slo_expression>& slos) {
  std::vector<double> out;
  for (const auto& s : slos) {
    if (s.metric != slo_metric::percentile) continue;
    bool seen = false;
    for (const double p : out) seen = seen || same_percentile(p, s.percentile);
    if (!seen) out.push_back(s.percentile);
  }
  return out;
}

}  // namespace punctual::analysis
