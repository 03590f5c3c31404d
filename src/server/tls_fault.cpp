#include "server/tls_fault.hpp"

#include <array>
#include <charconv>
#include <stdexcept>

#include "server/kind_names.hpp"

namespace punctual::server {

namespace {

constexpr std::array<std::string_view, 5> tls_fault_names = {
    "none", "garbage-hello", "stall-handshake", "close-in-handshake", "plaintext-answer"};

[[noreturn]] void bad_tls_fault(std::string_view text, const std::string& why) {
  throw std::invalid_argument("--tls-fault: " + why + ", got '" + std::string(text) + "'");
}

}  // namespace

std::string_view tls_fault_name(tls_fault_kind kind) {
  return tls_fault_names[static_cast<std::size_t>(kind)];
}

std::optional<tls_fault_kind> tls_fault_from_name(std::string_view name) {
  return kind_from_name<tls_fault_kind>(tls_fault_names, name);
}

tls_fault_spec parse_tls_fault(std::string_view text) {
  const auto colon = text.find(':');
  const auto kind = tls_fault_from_name(text.substr(0, colon));
  if (!kind)
    bad_tls_fault(text, "unknown kind (expected one of " + known_kinds(tls_fault_names) + ")");
  tls_fault_spec spec{*kind, 0};
  if (colon == std::string_view::npos) return spec;
  const std::string_view option = text.substr(colon + 1);
  constexpr std::string_view prefix = "after=";
  if (option.substr(0, prefix.size()) != prefix)
    bad_tls_fault(text, "expected KIND or KIND:after=N");
  const std::string_view n = option.substr(prefix.size());
  const auto r = std::from_chars(n.data(), n.data() + n.size(), spec.after);
  if (n.empty() || r.ec != std::errc{} || r.ptr != n.data() + n.size()) {
    bad_tls_fault(text, "expected after=N with N a whole number of connections");
  }
  return spec;
}

void validate_tls_options(const tls_options& tls) {
  if (tls.self_signed && !tls.cert_path.empty()) {
    throw std::invalid_argument("--tls-self-signed cannot be combined with --tls-cert");
  }
  if (tls.self_signed && !tls.key_path.empty()) {
    throw std::invalid_argument("--tls-self-signed cannot be combined with --tls-key");
  }
  if (!tls.key_path.empty() && tls.cert_path.empty()) {
    throw std::invalid_argument("--tls-key needs --tls-cert");
  }
  if (tls.fault.kind != tls_fault_kind::none && !tls.enabled()) {
    throw std::invalid_argument(
        "--tls-fault needs TLS: add --tls-self-signed or --tls-cert and --tls-key");
  }
}

}  // namespace punctual::server
