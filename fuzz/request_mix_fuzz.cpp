// parse_request_mix on arbitrary bytes: never crashes or hangs (aliases are refused before
// anything expands), every refusal is one line that starts with the file's name, and every mix
// it accepts keeps the loader's promises: 1 to 200 entries, valid unique names, weights >= 0 that
// add up to more than 0, and a path or a URL for each entry.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "scenario/request_mix.hpp"

using punctual::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text{reinterpret_cast<const char*>(data), size};
  using namespace punctual::scenario;
  const auto loaded = punctual::fuzz::accepted<load_error>(
      [&] { return parse_request_mix(text, "fuzz.yaml"); }, "fuzz.yaml");
  if (!loaded) return 0;
  const request_mix& mix = *loaded;
  check(!mix.entries.empty() && mix.entries.size() <= max_names);
  check(mix.total_weight() > 0);
  std::set<std::string> names;
  for (const auto& e : mix.entries) {
    check(valid_name(e.name) && e.name != "session");
    check(names.insert(e.name).second);
    check(e.weight >= 0);
    check(!e.target.empty());
    check(!e.method.empty());
    check(e.line >= 1);
  }
  return 0;
}
