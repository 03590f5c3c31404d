#include <gtest/gtest.h>

#include "cli/suggest.hpp"

namespace {

using punctual::cli::closest;
using punctual::cli::first_unknown_option;

const std::vector<std::string> known{"--connections", "--rate",    "--duration",
                                     "--timeout",     "--threads", "--stall"};

TEST(cli_suggest, the_nearest_known_option_within_a_few_edits) {
  EXPECT_EQ(closest("--conections", known), "--connections");   // a letter left out
  EXPECT_EQ(closest("--conenctions", known), "--connections");  // two letters swapped
  EXPECT_EQ(closest("--rte", known), "--rate");
  EXPECT_EQ(closest("--stal", known), "--stall");
  EXPECT_EQ(closest("--bogus", known), std::nullopt);  // nothing near: no guess
}

TEST(cli_suggest, the_first_long_option_not_known_before_a_double_dash) {
  EXPECT_EQ(first_unknown_option({"-R", "10", "--rate=5", "--conections", "10", "URL"}, known),
            "--conections");
  EXPECT_EQ(first_unknown_option({"--timeout=1s", "URL"}, known), "");
  EXPECT_EQ(first_unknown_option({"--", "--anything"}, known), "");
}

}  // namespace
