#include <gtest/gtest.h>

#include <string>

#include "scenario/request_mix.hpp"
#include "yaml_loader_inputs.hpp"

namespace punctual::scenario {
namespace {

std::string mix_error_of(const std::string& text) {
  return test::load_error_of([&] { parse_request_mix(text, "mix.yaml"); });
}

TEST(request_mix, reads_every_key) {
  const auto mix = parse_request_mix(R"(requests:
  - name: home
    path: /
    weight: 7
  - name: post-item_2
    method: POST
    url: http://127.0.0.1:8080/items?x=1
    headers:
      Content-Type: application/json
      X-Trace: "on"
    body: '{"a": 1}'
)",
                                     "mix.yaml");
  ASSERT_EQ(mix.entries.size(), 2u);
  EXPECT_EQ(mix.entries[0].name, "home");
  EXPECT_EQ(mix.entries[0].method, "GET");
  EXPECT_EQ(mix.entries[0].target, "/");
  EXPECT_EQ(mix.entries[0].weight, 7);
  EXPECT_EQ(mix.entries[0].line, 2);
  EXPECT_EQ(mix.entries[1].method, "POST");
  EXPECT_EQ(mix.entries[1].target, "http://127.0.0.1:8080/items?x=1");
  EXPECT_EQ(mix.entries[1].headers,
            (std::vector<std::string>{"Content-Type: application/json", "X-Trace: on"}));
  EXPECT_EQ(mix.entries[1].body, R"({"a": 1})");
  EXPECT_EQ(mix.entries[1].weight, 1);  // the default
  EXPECT_EQ(mix.total_weight(), 8);
}

TEST(request_mix, a_bare_list_is_a_mix_too) {
  const auto mix =
      parse_request_mix("- {name: a, path: /a}\n- {name: b, path: /b, weight: 0}\n", "m");
  EXPECT_EQ(mix.entries.size(), 2u);
  EXPECT_EQ(mix.total_weight(), 1);
}

// Each refusal is one line naming the file, the line and the key.
TEST(request_mix, refusals_name_file_line_and_key) {
  const std::pair<const char*, const char*> cases[] = {
      {"requests:\n  - name: a\n    path: /\n    colour: red\n", "mix.yaml:4: colour: unknown key"},
      {"requests:\n  - name: a\n    path: /\n    weight: heavy\n",
       "mix.yaml:4: weight: 'heavy' is not a number"},
      {"requests:\n  - name: a\n    path: /\n    weight: -1\n",
       "mix.yaml:4: weight: must not be negative"},
      {"requests:\n  - name: a\n    path: /\n    weight: 0\n",
       "mix.yaml:2: weight: the weights add up to 0"},
      {"requests:\n  - name: my step\n    path: /\n", "mix.yaml:2: name: 'my step' may only use"},
      {"requests:\n  - name: session\n    path: /\n", "mix.yaml:2: name: 'session' is reserved"},
      {"requests:\n  - name: a\n    path: /\n  - name: a\n    path: /b\n",
       "mix.yaml:4: name: 'a' is used twice"},
      {"requests:\n  - name: a\n", "mix.yaml:2: path: every request needs a path or a url"},
      {"requests:\n  - name: a\n    path: x\n", "mix.yaml:3: path: 'x' must start with '/'"},
      {"requests:\n  - name: a\n    url: ''\n", "mix.yaml:3: url: is empty"},
      {"requests:\n  - path: /\n", "mix.yaml:2: name: every request needs a name"},
      {"requests:\n  - name: a\n    path: /\n    path2: /\n", "mix.yaml:4: path2: unknown key"},
      {"requests:\n  - name: [a]\n    path: /\n", "mix.yaml:2: name: expected a text value"},
      {"requests:\n  - name: a\n    path: /\n    method: 'G T'\n",
       "mix.yaml:4: method: method 'G T'"},
      {"requests:\n  - name: a\n    path: /\n    headers: {'Bad Name': x}\n",
       "mix.yaml:4: headers:"},
      {"requests:\n  - name: a\n    path: /\n    body: x\n    body_file: y\n",
       "mix.yaml:2: body: give body or body_file"},
      {"requests: []\n", "mix.yaml:1: requests: the list is empty"},
      {"requests: {a: 1}\n", "mix.yaml:1: requests: expected a list"},
      {"other: 1\n", "mix.yaml:1: other: unknown key"},
      // Found by request_mix_fuzz: an empty mapping once assigned through a node aliasing the
      // document, and yaml-cpp's exception escaped.
      {"{}\n", "mix.yaml:1: requests: missing"},
      {"", "mix.yaml:1: file: is empty"},
      {"requests:\n  - name: a\n    path: [/\n",
       "mix.yaml:4: yaml: end of sequence flow not found"},
      {"requests:\n  - &x {name: a, path: /}\n  - *x\n",
       "mix.yaml:2: yaml: anchors and aliases are not supported"},
      {"a: 1\n---\nb: 2\n", "mix.yaml:1: yaml: more than one document"},
  };
  for (const auto& [text, expected] : cases) {
    const std::string got = mix_error_of(text);
    EXPECT_EQ(got.rfind(expected, 0), 0u) << "input:\n" << text << "\ngot: " << got;
    EXPECT_EQ(got.find('\n'), std::string::npos) << got;
  }
}

TEST(request_mix, at_most_200_names) {
  std::string text = "requests:\n";
  for (int i = 0; i < 201; ++i) text += "  - {name: n" + std::to_string(i) + ", path: /}\n";
  EXPECT_EQ(mix_error_of(text).rfind("mix.yaml:2: requests: more than 200 requests", 0), 0u)
      << mix_error_of(text);
  text.resize(text.rfind("  - "));
  EXPECT_EQ(parse_request_mix(text, "m").entries.size(), 200u);
}

// A billion-laughs file is refused at its first anchor, before anything expands; so is a file
// over 1 MiB.
TEST(request_mix, alias_bombs_and_huge_files_are_refused) {
  const std::string bomb = test::alias_bomb();
  EXPECT_EQ(mix_error_of(bomb).rfind("mix.yaml:1: yaml: anchors and aliases", 0), 0u)
      << mix_error_of(bomb);
  const std::string huge =
      "requests:\n  - {name: a, path: /, body: '" + std::string(1 << 20, 'x') + "'}\n";
  EXPECT_EQ(mix_error_of(huge).rfind("mix.yaml:1: file: larger than 1 MiB", 0), 0u)
      << mix_error_of(huge);
}

TEST(request_mix, a_missing_file_is_named) {
  EXPECT_EQ(test::load_error_of([] { load_request_mix("/nonexistent/mix.yaml"); }),
            "/nonexistent/mix.yaml: file: cannot be read");
}

TEST(request_mix, names_are_checked_by_one_rule) {
  EXPECT_TRUE(valid_name("checkout_2-pay"));
  EXPECT_FALSE(valid_name(""));
  EXPECT_FALSE(valid_name("a.b"));
  EXPECT_FALSE(valid_name("a b"));
  EXPECT_FALSE(valid_name("caf\xc3\xa9"));
}

}  // namespace
}  // namespace punctual::scenario
