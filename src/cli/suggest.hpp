// "did you mean --connections?": the known word closest to a mistyped one.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace punctual::cli {

// The candidate nearest to `typed` by edit distance (insertions, deletions, substitutions and
// swaps of neighbours), if one is near enough to be what was meant: at most 2 edits, or a third
// of the word's length for long ones. Ties go to the first candidate.
std::optional<std::string> closest(std::string_view typed, const std::vector<std::string>& known);

// The first argument in `args` that looks like a long option ("--name" or "--name=value", before
// any "--") and is not in `known`; empty when there is none.
std::string first_unknown_option(const std::vector<std::string>& args,
                                 const std::vector<std::string>& known);

}  // namespace punctual::cli
