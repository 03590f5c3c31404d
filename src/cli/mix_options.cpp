#include "cli/mix_options.hpp"

#include <algorithm>

#include "cli/command.hpp"
#include "http/request.hpp"
#include "http/text.hpp"
#include "scenario/request_mix.hpp"

namespace punctual::cli {
namespace {

// The path of an entry's target: a path as it is, or a full URL's on the run's origin.
std::string path_of(const std::string& where, const std::string& text, const http::url& target) {
  if (text.starts_with('/')) return text;
  const auto u = http::parse_url(text);
  if (!u) throw usage_error(where + ": url: " + u.error);
  if (u.value->tls != target.tls || u.value->host != target.host || u.value->port != target.port) {
    throw usage_error(where + ": url: '" + text + "' is not on the run's origin " +
                      http::to_string(http::url{target.tls, target.host, target.port, "",
                                                target.is_ipv6_literal}));
  }
  return u.value->path_and_query;
}

// The -H headers an entry does not set itself, then the entry's own.
std::vector<std::string> headers_of(const run_options& o, const std::vector<std::string>& own) {
  std::vector<std::string> out;
  for (const auto& h : o.headers) {
    const auto same = [&](const std::string& mine) {
      return http::iequals(http::header_name(mine), http::header_name(h));
    };
    if (std::none_of(own.begin(), own.end(), same)) out.push_back(h);
  }
  out.insert(out.end(), own.begin(), own.end());
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

http::request_spec spec_of_entry(const run_options& o, const http::url& target,
                                 const std::string& where, const entry_text& e) {
  http::request_spec spec;
  spec.method = e.method;
  spec.host = http::host_header_value(target);
  spec.path_and_query = path_of(where, e.target, target);
  spec.headers = headers_of(o, e.headers);
  spec.body = e.body;
  spec.keep_alive = !o.no_keepalive;
  if (const auto err = http::validate_request(spec))
    throw usage_error(where + ": headers: " + *err);
  return spec;
}

run::named_request encode_entry(const run_options& o, const http::url& target,
                                const std::string& where, const entry_text& e) {
  const http::request_spec spec = spec_of_entry(o, target, where, e);
  run::named_request r;
  r.bytes = http::encode_request(spec);
  r.head = e.method == "HEAD";
  return r;
}

void apply_request_mix(const run_options& o, const http::url& target, const schedule::trace* replay,
                       run::config& c) {
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
    const std::string where = "--requests " + mix.file + ":" + std::to_string(e.line);
    run::named_request r = encode_entry(o, target, where, {e.method, e.target, e.headers, e.body});
    r.name = e.name;
    r.weight = e.weight;
    c.mix.push_back(std::move(r));
  }
  c.mix_file = o.requests_file;
  if (replay && replay->has_names()) check_trace_names(*replay, c);
}

}  // namespace punctual::cli
