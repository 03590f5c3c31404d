// What a request-mix entry and a scenario step both say about the request they send, read by one
// set of rules so that the two files cannot drift apart.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scenario/yaml_reader.hpp"

namespace punctual::scenario {

struct request_fields {
  std::string method = "GET";
  std::string target;                // a path starting with '/', or a full URL
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
};

// A file a YAML file names (a body_file, a csv file), relative to the YAML file's folder, at
// most 1 MiB; errors name `key` at node `at`.
std::string read_side_file(const yaml_reader& r, const YAML::Node& at, std::string_view key,
                           const std::string& name);

// The node's `name`: required, valid_name, not the reserved "session". `noun` says what lacks
// one ("every step needs a name").
std::string read_name(const yaml_reader& r, const YAML::Node& node, std::string_view noun);

// The node's method, path or url (exactly one), headers, and body or body_file (relative to the
// YAML file's folder).
request_fields read_request_fields(const yaml_reader& r, const YAML::Node& node,
                                   std::string_view noun);

// Sets the members a mix entry and a scenario step share: line, name, method, target, headers
// and body.
template <class Request>
void read_request(const yaml_reader& r, const YAML::Node& node, std::string_view noun,
                  Request& out) {
  out.line = yaml_reader::line_of(node);
  out.name = read_name(r, node, noun);
  request_fields f = read_request_fields(r, node, noun);
  out.method = std::move(f.method);
  out.target = std::move(f.target);
  out.headers = std::move(f.headers);
  out.body = std::move(f.body);
}

}  // namespace punctual::scenario
