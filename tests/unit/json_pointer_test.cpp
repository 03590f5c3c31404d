#include "http/json_pointer.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using punctual::http::json_pointer_value;
using punctual::http::valid_json_pointer;

const std::string doc =
    R"( {"session": {"token": "t-\u00e9\"x\\", "n": 42, "ok": true, "a/b": 1, "m~n": 2},
  "items": [ {"id": 7}, {"id": 8, "tags": ["x", null]} ], "empty": "", "nested": {"k": [1, {"z": -0.5e3}]} } )";

TEST(json_pointer, finds_values_by_path) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/session/token", "t-\xc3\xa9\"x\\"},
      {"/session/n", "42"},
      {"/session/ok", "true"},
      {"/session/a~1b", "1"},
      {"/session/m~0n", "2"},
      {"/items/0/id", "7"},
      {"/items/1/tags/0", "x"},
      {"/items/1/tags/1", "null"},
      {"/items/1/tags", R"(["x", null])"},
      {"/empty", ""},
      {"/nested/k/1/z", "-0.5e3"},
  };
  for (const auto& [pointer, want] : cases) {
    std::string out = "stale";
    ASSERT_TRUE(json_pointer_value(doc, pointer, out)) << pointer;
    EXPECT_EQ(out, want) << pointer;
  }
  std::string whole;
  ASSERT_TRUE(json_pointer_value(R"("just")", "", whole));
  EXPECT_EQ(whole, "just");
}

TEST(json_pointer, misses_and_bad_documents_are_false) {
  std::string out = "kept";
  for (const std::string pointer :
       {"/nope", "/items/2", "/items/01", "/items/x", "/session/n/deeper", "/empty/0"}) {
    EXPECT_FALSE(json_pointer_value(doc, pointer, out)) << pointer;
  }
  for (const std::string& bad : std::vector<std::string>{
           R"({"a": 1,})", R"({"a" 1})", R"({"a": "x)", R"({"a": 1} trailing)", "",
           R"({"a": "\ud800"})", R"({"a": tru})", std::string(100, '[') + std::string(100, ']')}) {
    EXPECT_FALSE(json_pointer_value(bad, "/a", out)) << bad;
  }
  EXPECT_EQ(out, "kept");  // a miss writes nothing
  EXPECT_TRUE(valid_json_pointer(""));
  EXPECT_TRUE(valid_json_pointer("/a~0/~1"));
  EXPECT_FALSE(valid_json_pointer("a"));
  EXPECT_FALSE(valid_json_pointer("/a~2"));
  EXPECT_FALSE(valid_json_pointer("/a~"));
}

}  // namespace
