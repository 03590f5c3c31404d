// The merge of shards' reports (`punctual merge DIR/*.json`) on arbitrary JSON: the input is two
// documents separated by a line "----", each a shard's report (their interval logs empty). Any
// pair either merges into a report or is refused with merge_refused (one line, exit 2); nothing
// else escapes, crashes or reads out of bounds, and a merge keeps planned as the shards' sum.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "report/json.hpp"
#include "report/merged_report.hpp"

namespace {

using punctual::report::shard_report;

bool parse(std::string_view text, const char* name, std::vector<shard_report>& out) {
  shard_report s;
  s.name = name;
  s.doc = nlohmann::ordered_json::parse(text.begin(), text.end(), nullptr, false);
  if (s.doc.is_discarded()) return false;
  out.push_back(std::move(s));
  return true;
}

std::uint64_t planned(const nlohmann::ordered_json& doc) {
  return doc["schedule"]["planned"].get<std::uint64_t>();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto cut = input.find("\n----\n");
  if (cut == std::string_view::npos) return 0;
  std::vector<shard_report> shards;
  if (!parse(input.substr(0, cut), "a.json", shards) ||
      !parse(input.substr(cut + 6), "b.json", shards))
    return 0;
  try {
    punctual::report::order_shards(shards);
    const auto merged = punctual::report::merge_runs(shards, {});
    // The merge read every shard's planned as a count, so reading them again cannot throw.
    std::uint64_t sum = 0;
    for (const auto& s : shards) sum += planned(s.doc);
    punctual::fuzz::check(planned(merged.doc) == sum);
  } catch (const punctual::report::merge_refused&) {
  }
  return 0;
}
