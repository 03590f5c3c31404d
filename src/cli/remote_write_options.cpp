#include "cli/remote_write_options.hpp"

#include <array>
#include <string_view>

#include "cli/command.hpp"
#include "cli/live_metrics.hpp"
#include "http/request.hpp"
#include "http/text.hpp"
#include "metrics/remote_write.hpp"

namespace punctual::cli {
namespace {

// Set by the pusher itself: the protocol's headers and the request's framing.
constexpr std::array<std::string_view, 7> own_headers{"Host",
                                                      "Content-Length",
                                                      "Content-Encoding",
                                                      "Content-Type",
                                                      "Connection",
                                                      "Transfer-Encoding",
                                                      "X-Prometheus-Remote-Write-Version"};

void check_header(const std::string& header) {
  if (const auto problem = http::validate_header(header))
    throw usage_error("--remote-write-header " + http::quoted(header) + ": " + *problem);
  const std::string_view name = http::header_name(header);
  for (const auto own : own_headers) {
    if (http::iequals(name, own))
      throw usage_error("--remote-write-header " + http::quoted(header) + ": " + std::string(own) +
                        " is set by remote write itself");
  }
}

}  // namespace

std::optional<remote_write_target> parse_remote_write(const std::string& url,
                                                      const std::vector<std::string>& headers) {
  if (url.empty()) {
    if (!headers.empty()) throw usage_error("--remote-write-header needs --remote-write URL");
    return std::nullopt;
  }
  const auto parsed = http::parse_url(url);
  if (!parsed) throw usage_error("--remote-write " + http::quoted(url) + ": " + parsed.error);
  if (parsed.value->tls) {
    throw usage_error("--remote-write " + http::quoted(url) +
                      ": https is not supported (remote write speaks plain http://)");
  }
  for (const auto& h : headers) check_header(h);
  return remote_write_target{*parsed.value, http::to_string(*parsed.value), headers};
}

metrics::remote_write* attach_remote_write(const std::optional<remote_write_target>& target,
                                           const std::string& run_id, std::uint32_t shard,
                                           std::unique_ptr<live_metrics>& live) {
  if (!target) return nullptr;
  metrics::remote_write_options o;
  o.url = target->url_text;
  o.labels = {{"run_id", run_id}, {"shard", std::to_string(shard)}};
  auto sink = std::make_unique<metrics::remote_write>(
      std::move(o), metrics::http_push_transport(target->url, target->headers));
  metrics::remote_write* const kept = sink.get();
  if (!live) live = std::make_unique<live_metrics>();
  live->add_sink(std::move(sink));
  return kept;
}

}  // namespace punctual::cli
