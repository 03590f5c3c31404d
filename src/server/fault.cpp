#include "server/fault.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "server/fault_picker.hpp"
#include "server/kind_names.hpp"

namespace punctual::server {

namespace {

constexpr std::array<std::string_view, fault_kind_count> fault_names = {
    "none",    "reset",  "garbage",     "close-delimited", "huge-headers", "trickle", "continue",
    "chunked", "http10", "close-after", "never",           "503",          "429"};

[[noreturn]] void bad_fault(std::string_view text, const std::string& why) {
  throw std::invalid_argument("--fault: " + why + ", got '" + std::string(text) + "'");
}

}  // namespace

std::string_view fault_name(fault_kind kind) {
  return fault_names[static_cast<std::size_t>(kind)];
}

std::optional<fault_kind> fault_from_name(std::string_view name) {
  return kind_from_name<fault_kind>(fault_names, name);
}

fault_spec parse_fault(std::string_view text) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) bad_fault(text, "expected KIND:FRACTION such as reset:0.1");
  std::string_view kind_text = text.substr(0, colon);
  const std::string_view fraction_text = text.substr(colon + 1);
  fault_spec spec;
  const auto equals = kind_text.find('=');
  if (equals != std::string_view::npos) {
    if (kind_text.substr(0, equals) != "reset") bad_fault(text, "only reset takes =N");
    const std::string_view n = kind_text.substr(equals + 1);
    const auto r = std::from_chars(n.data(), n.data() + n.size(), spec.reset_after_bytes);
    if (n.empty() || r.ec != std::errc{} || r.ptr != n.data() + n.size()) {
      bad_fault(text, "expected reset=N with N a byte count");
    }
    kind_text = kind_text.substr(0, equals);
  }
  const auto kind = fault_from_name(kind_text);
  if (!kind)
    bad_fault(text, "unknown fault kind (expected one of " + known_kinds(fault_names) + ")");
  spec.kind = *kind;
  // strtod on a copy: from_chars for double is not in every standard library we build with.
  const std::string fraction(fraction_text);
  char* end = nullptr;
  spec.fraction = fraction.empty() ? -1 : std::strtod(fraction.c_str(), &end);
  if (fraction.empty() || end != fraction.c_str() + fraction.size() ||
      !std::isfinite(spec.fraction) || spec.fraction < 0 || spec.fraction > 1) {
    bad_fault(text, "expected a FRACTION between 0 and 1");
  }
  return spec;
}

void validate_faults(const std::vector<fault_spec>& faults) {
  double sum = 0;
  std::array<bool, fault_kind_count> seen{};
  for (const fault_spec& f : faults) {
    if (f.kind == fault_kind::none) throw std::invalid_argument("--fault: no kind given");
    if (!(f.fraction >= 0 && f.fraction <= 1)) {
      throw std::invalid_argument("--fault " + std::string(fault_name(f.kind)) +
                                  ": the fraction must be between 0 and 1");
    }
    auto& was = seen[static_cast<std::size_t>(f.kind)];
    if (was) {
      throw std::invalid_argument("--fault " + std::string(fault_name(f.kind)) + " given twice");
    }
    was = true;
    sum += f.fraction;
  }
  // A little slack so 0.1 + 0.2 + 0.7 is not refused for rounding.
  if (sum > 1 + 1e-9) {
    throw std::invalid_argument("--fault: the fractions add up to " + std::to_string(sum) +
                                ", more than 1");
  }
}

fault_picker::fault_picker(const std::vector<fault_spec>& faults, std::uint64_t seed,
                           std::uint64_t stream)
    // A different stream constant from the service-time sampler: faults must not be
    // correlated with long service times.
    : rng_(seed ^ (0xd1b54a32d192ed03ULL * (stream + 1))) {
  double below = 0;
  for (const fault_spec& f : faults) {
    if (f.fraction <= 0 || count_ == thresholds_.size()) continue;
    below += f.fraction;
    thresholds_[count_++] = {below, {f.kind, f.reset_after_bytes}};
  }
}

fault_choice fault_picker::next() {
  if (count_ == 0) return {};
  const double u = rng_.next_unit();
  for (std::size_t i = 0; i < count_; ++i) {
    if (u < thresholds_[i].below) return thresholds_[i].choice;
  }
  return {};
}

}  // namespace punctual::server
