#include "scenario/request_fields.hpp"

#include <fstream>
#include <sstream>

#include "http/request.hpp"

namespace punctual::scenario {
namespace {

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

}  // namespace

std::string read_side_file(const yaml_reader& r, const YAML::Node& at, std::string_view key,
                           const std::string& name) {
  const std::string& file = r.file();
  const auto slash = file.rfind('/');
  const std::string path =
      name.starts_with('/') || slash == std::string::npos ? name : file.substr(0, slash + 1) + name;
  std::ifstream in(path, std::ios::binary);
  if (!in) r.fail(at, key, "cannot read '" + path + "'");
  std::ostringstream s;
  s << in.rdbuf();
  if (s.str().size() > max_file_bytes) r.fail(at, key, "'" + path + "' is over 1 MiB");
  return s.str();
}

std::string read_name(const yaml_reader& r, const YAML::Node& node, std::string_view noun) {
  if (!node["name"]) r.fail(node, "name", "every " + std::string(noun) + " needs a name");
  std::string name = r.text(node["name"], "name");
  if (!valid_name(name)) {
    r.fail(node["name"], "name", "'" + name + "' may only use A-Z, a-z, 0-9, '_' and '-'");
  }
  if (name == "session") r.fail(node["name"], "name", "'session' is reserved");
  return name;
}

request_fields read_request_fields(const yaml_reader& r, const YAML::Node& node,
                                   std::string_view noun) {
  request_fields f;
  if (node["method"]) {
    f.method = r.text(node["method"], "method");
    if (auto err = http::validate_method(f.method)) r.fail(node["method"], "method", *err);
  }
  if (node["path"] && node["url"]) r.fail(node, "path", "give path or url, not both");
  if (!node["path"] && !node["url"]) {
    r.fail(node, "path", "every " + std::string(noun) + " needs a path or a url");
  }
  const char* target_key = node["path"] ? "path" : "url";
  f.target = r.text(node[target_key], target_key);
  if (f.target.empty()) r.fail(node[target_key], target_key, "is empty");
  if (node["path"] && !f.target.starts_with('/')) {
    r.fail(node["path"], "path", "'" + f.target + "' must start with '/'");
  }
  if (node["headers"]) f.headers = read_headers(r, node["headers"]);
  if (node["body"] && node["body_file"]) r.fail(node, "body", "give body or body_file, not both");
  if (node["body"]) f.body = r.text(node["body"], "body");
  if (node["body_file"]) {
    f.body =
        read_side_file(r, node["body_file"], "body_file", r.text(node["body_file"], "body_file"));
  }
  return f;
}

}  // namespace punctual::scenario
