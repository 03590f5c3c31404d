#include "scenario/request_mix.hpp"

#include <set>

#include "scenario/request_fields.hpp"

namespace punctual::scenario {
namespace {

mix_entry read_entry(const yaml_reader& r, const YAML::Node& node) {
  r.expect_map(node, "requests",
               {"name", "method", "path", "url", "headers", "body", "body_file", "weight"});
  mix_entry e;
  read_request(r, node, "request", e);
  if (node["weight"]) {
    e.weight = r.number(node["weight"], "weight");
    if (e.weight < 0) r.fail(node["weight"], "weight", "must not be negative");
  }
  return e;
}

request_mix read_mix(const yaml_reader& r, const YAML::Node& root) {
  // A YAML::Node is a reference: assigning to one aliasing `root` would write into the document.
  if (root.IsMap()) r.expect_map(root, "file", {"requests"});
  const YAML::Node list = root.IsMap() ? root["requests"] : root;
  if (!list) r.fail(root, "requests", "missing: the file lists its requests under 'requests'");
  r.expect_sequence(list, "requests");
  if (list.size() == 0) r.fail(list, "requests", "the list is empty");
  if (list.size() > max_names) {
    r.fail(list, "requests", "more than " + std::to_string(max_names) + " requests");
  }
  request_mix mix{r.file(), {}};
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

}  // namespace

double request_mix::total_weight() const noexcept {
  double sum = 0;
  for (const auto& e : entries) sum += e.weight;
  return sum;
}

request_mix parse_request_mix(std::string_view text, const std::string& file) {
  const yaml_reader r(file);
  const YAML::Node root = r.parse(text);
  return r.guarded([&] { return read_mix(r, root); });
}
request_mix load_request_mix(const std::string& file) {
  return parse_request_mix(yaml_reader(file).read_file(), file);
}

}  // namespace punctual::scenario
