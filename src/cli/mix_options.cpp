#include "cli/mix_options.hpp"

#include <algorithm>

#include "cli/command.hpp"
#include "http/request.hpp"
#include "http/text.hpp"
#include "scenario/request_mix.hpp"

namespace punctual::cli {
namespace {

[[noreturn]] void fail(const scenario::request_mix& mix, const scenario::mix_entry& e,
                       const std::string& key, const std::string& what) {
  throw usage_error("--requests " + mix.file + ":" + std::to_string(e.line) + ": " + key + ": " +
                    what);
}

std::string path_of(const scenario::request_mix& mix, const scenario::mix_entry& e,
                    const http::url& target) {
  if (e.target.starts_with('/')) return e.target;
  const auto u = http::parse_url(e.target);
  if (!u) fail(mix, e, "url", u.error);
  if (u.value->tls != target.tls || u.value->host != target.host || u.value->port != target.port) {
    fail(mix, e, "url",
         "'" + e.target + "' is not on the run's origin " +
             http::to_string(
                 http::url{target.tls, target.host, target.port, "", target.is_ipv6_literal}));
  }
  return u.value->path_and_query;
}

// The -H headers an entry does not set itself, then the entry's own.
std::vector<std::string> headers_of(const run_options& o, const scenario::mix_entry& e) {
  std::vector<std::string> out;
  for (const auto& h : o.headers) {
    const auto same = [&](const std::string& mine) {
      return http::iequals(http::header_name(mine), http::header_name(h));
    };
    if (std::none_of(e.headers.begin(), e.headers.end(), same)) out.push_back(h);
  }
  out.insert(out.end(), e.headers.begin(), e.headers.end());
  return out;
}

void check_trace_names(const schedule::trace& replay, const run::config& c) {
  for (const auto& name : replay.names()) {
    if (name.empty()) continue;
    const auto defined = std::any_of(c.mix.begin(), c.mix.end(),
                                     [&](const run::named_request& e) { return e.name == name; });
    if (!defined) {
      throw usage_error("--schedule-in " + replay.source() + ": request name '" + name +
                        "' is not defined in --requests " + c.mix_file);
    }
  }
}

}  // namespace

void apply_request_mix(const run_options& o, const http::url& target,
                       const schedule::trace* replay, run::config& c) {
  // Without a mix a trace's names select nothing: every request is the URL's.
  if (o.requests_file.empty()) return;
  if (o.model != "open") throw usage_error("--requests: request mixes belong to the open model");
  if (o.method != "GET" || !o.body.empty() || !o.body_file.empty()) {
    throw usage_error("--requests: -X, --body and --body-file are set per request in the file");
  }
  scenario::request_mix mix;
  try {
    mix = scenario::load_request_mix(o.requests_file);
  } catch (const scenario::load_error& e) {
    throw usage_error(std::string("--requests ") + e.what());
  }
  for (const auto& e : mix.entries) {
    http::request_spec spec;
    spec.method = e.method;
    spec.host = http::host_header_value(target);
    spec.path_and_query = path_of(mix, e, target);
    spec.headers = headers_of(o, e);
    spec.body = e.body;
    spec.keep_alive = !o.no_keepalive;
    if (const auto err = http::validate_request(spec)) fail(mix, e, "headers", *err);
    c.mix.push_back({e.name, http::encode_request(spec), e.method == "HEAD", e.weight});
  }
  c.mix_file = o.requests_file;
  if (replay && replay->has_names()) check_trace_names(*replay, c);
}

}  // namespace punctual::cli
