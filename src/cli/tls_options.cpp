#include "cli/tls_options.hpp"

#include <arpa/inet.h>

#include <charconv>
#include <string_view>

#include "cli/command.hpp"
#include "http/text.hpp"
#include "net/tls.hpp"

namespace punctual::cli {
namespace {

struct resolve_entry {
  std::string host;
  std::uint16_t port = 0;
  std::string address;
};

bool is_address(const std::string& text) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, text.c_str(), buf) == 1 || inet_pton(AF_INET6, text.c_str(), buf) == 1;
}

// HOST:PORT:ADDR, as curl takes it; ADDR may be an IPv6 address, bracketed or not.
resolve_entry parse_resolve(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return usage_error("--resolve " + http::quoted(text) + ": " + std::string{why} +
                       " (expected HOST:PORT:ADDR, e.g. example.com:443:127.0.0.1)");
  };
  const auto first = text.find(':');
  const auto second = first == std::string_view::npos ? first : text.find(':', first + 1);
  if (second == std::string_view::npos) throw bad("not three parts");
  resolve_entry e;
  e.host = std::string{text.substr(0, first)};
  const std::string_view port = text.substr(first + 1, second - first - 1);
  std::string_view address = text.substr(second + 1);
  if (address.size() >= 2 && address.front() == '[' && address.back() == ']') {
    address = address.substr(1, address.size() - 2);
  }
  e.address = std::string{address};
  unsigned value = 0;
  const auto r = std::from_chars(port.data(), port.data() + port.size(), value);
  if (e.host.empty()) throw bad("no host");
  if (r.ec != std::errc() || r.ptr != port.data() + port.size() || value == 0 || value > 65535) {
    throw bad("the port is not a number from 1 to 65535");
  }
  e.port = static_cast<std::uint16_t>(value);
  if (!is_address(e.address)) throw bad("the address is not an IPv4 or IPv6 address");
  return e;
}

}  // namespace

void apply_tls_options(const run_options& o, const http::url& target, run::config& config) {
  if (o.cert.empty() != o.key.empty()) {
    throw usage_error(o.cert.empty()
                          ? "--key: give --cert with it (a client certificate and its key)"
                          : "--cert: give --key with it (the certificate's private key)");
  }
  if (!target.tls) {
    const char* option = o.insecure          ? "--insecure"
                         : !o.cacert.empty() ? "--cacert"
                         : !o.cert.empty()   ? "--cert"
                                             : nullptr;
    if (option) {
      throw usage_error(std::string(option) +
                        ": the target is http://, which has no TLS (use https://)");
    }
    return;
  }
  auto& tls = config.tls;
  tls.enabled = true;
  tls.verify = !o.insecure;
  tls.server_name = target.host;
  tls.ca_file = o.cacert;
  tls.cert_file = o.cert;
  tls.key_file = o.key;
  if (auto error = net::check_tls_client(tls)) throw usage_error(*error);
}

std::string resolved_address(const run_options& o, const http::url& target) {
  std::string address;
  for (const auto& text : o.resolve) {
    const resolve_entry e = parse_resolve(text);
    if (e.host == target.host && e.port == target.port) address = e.address;
  }
  return address;
}

net::address connect_address(const run_options& o, const http::url& target) {
  const std::string resolved = resolved_address(o, target);
  const std::string host = resolved.empty() ? target.host : resolved;
  net::address address;
  std::string error;
  if (!net::resolve(host, target.port, address, error)) throw usage_error(error);
  return address;
}

}  // namespace punctual::cli
