#include "scenario/request_mix.hpp"

#include <fstream>
#include <set>
#include <sstream>

#include "http/request.hpp"

namespace punctual::scenario {
namespace {

std::string read_body_file(const yaml_reader& r, const YAML::Node& at, const std::string& name) {
  const std::string& file = r.file();
  const auto slash = file.rfind('/');
  const std::string path =
      name.starts_with('/') || slash == std::string::npos ? name : file.substr(0, slash + 1) + name;
  std::ifstream in(path, std::ios::binary);
  if (!in) r.fail(at, "body_file", "cannot read '" + path + "'");
  std::ostringstream s;
  s << in.rdbuf();
  if (s.str().size() > max_file_bytes) r.fail(at, "body_file", "'" + path + "' is over 1 MiB");
  return s.str();
}

std::vector<std::string> read_headers(const yaml_reader& r, const YAML::Node& node) {
  if (!node.IsMap()) r.fail(node, "headers", "expected a mapping of header names to values");
  std::vector<std::string> out;
  for (const auto& kv : node) {
    std::string header = r.text(kv.first, "headers") + ": " + r.text(kv.second, "headers");
    if (auto err = http::validate_header(header)) r.fail(kv.first, "headers", *err);
    out.push_back(std::move(header));
  }
  return out;
}

mix_entry read_entry(const yaml_reader& r, const YAML::Node& node) {
  r.expect_map(node, "requests",
               {"name", "method", "path", "url", "headers", "body", "body_file", "weight"});
  mix_entry e;
  e.line = yaml_reader::line_of(node);
  if (!node["name"]) r.fail(node, "name", "every request needs a name");
  e.name = r.text(node["name"], "name");
  if (!valid_name(e.name)) {
    r.fail(node["name"], "name", "'" + e.name + "' may only use A-Z, a-z, 0-9, '_' and '-'");
  }
  if (e.name == "session") r.fail(node["name"], "name", "'session' is reserved");
  if (node["method"]) {
    e.method = r.text(node["method"], "method");
    if (auto err = http::validate_method(e.method)) r.fail(node["method"], "method", *err);
  }
  if (node["path"] && node["url"]) r.fail(node, "path", "give path or url, not both");
  if (!node["path"] && !node["url"]) r.fail(node, "path", "every request needs a path or a url");
  const char* target_key = node["path"] ? "path" : "url";
  e.target = r.text(node[target_key], target_key);
  if (node["path"] && !e.target.starts_with('/')) {
    r.fail(node["path"], "path", "'" + e.target + "' must start with '/'");
  }
  if (node["headers"]) e.headers = read_headers(r, node["headers"]);
  if (node["body"] && node["body_file"]) r.fail(node, "body", "give body or body_file, not both");
  if (node["body"]) e.body = r.text(node["body"], "body");
  if (node["body_file"]) {
    e.body = read_body_file(r, node["body_file"], r.text(node["body_file"], "body_file"));
  }
  if (node["weight"]) {
    e.weight = r.number(node["weight"], "weight");
    if (e.weight < 0) r.fail(node["weight"], "weight", "must not be negative");
  }
  return e;
}

}  // namespace

double request_mix::total_weight() const noexcept {
  double sum = 0;
  for (const auto& e : entries) sum += e.weight;
  return sum;
}

request_mix parse_request_mix(std::string_view text, const std::string& file) {
  const yaml_reader r(file);
  const YAML::Node root = r.parse(text);
  YAML::Node list = root;
  if (root.IsMap()) {
    r.expect_map(root, "file", {"requests"});
    list = root["requests"];
    if (!list) r.fail(root, "requests", "missing: the file lists its requests under 'requests'");
  }
  r.expect_sequence(list, "requests");
  if (list.size() == 0) r.fail(list, "requests", "the list is empty");
  if (list.size() > max_names) {
    r.fail(list, "requests", "more than " + std::to_string(max_names) + " requests");
  }
  request_mix mix{file, {}};
  std::set<std::string> names;
  for (const auto& node : list) {
    mix.entries.push_back(read_entry(r, node));
    if (!names.insert(mix.entries.back().name).second) {
      r.fail(node["name"], "name", "'" + mix.entries.back().name + "' is used twice");
    }
  }
  if (!(mix.total_weight() > 0)) r.fail(list, "weight", "the weights add up to 0");
  return mix;
}

request_mix load_request_mix(const std::string& file) {
  return parse_request_mix(yaml_reader(file).read_file(), file);
}

}  // namespace punctual::scenario
