#include "http/request_template.hpp"

#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

#include "http/request.hpp"

namespace {

using punctual::http::request_template;

const std::vector<std::string> variables{"user", "token"};

request_template compile(const std::string& head, const std::string& body, bool implies_body) {
  auto t = request_template::compile(head, body, implies_body, variables);
  if (auto* e = std::get_if<std::string>(&t)) ADD_FAILURE() << *e;
  return std::get<request_template>(std::move(t));
}

TEST(request_template, renders_values_and_sizes_the_body) {
  punctual::http::request_spec spec;
  spec.method = "POST";
  spec.host = "h";
  spec.path_and_query = "/u/{{user}}?t={{ token }}";
  spec.headers = {"Authorization: Bearer {{token}}"};
  spec.body = R"({"user": "{{user}}"})";
  const auto t = compile(punctual::http::encode_request_head(spec), spec.body, true);
  EXPECT_TRUE(t.has_references());
  std::string out;
  t.render({"ann", "T1"}, out);
  punctual::http::request_spec want = spec;
  want.path_and_query = "/u/ann?t=T1";
  want.headers = {"Authorization: Bearer T1"};
  want.body = R"({"user": "ann"})";
  EXPECT_EQ(out, punctual::http::encode_request(want));  // byte for byte what encoding would send
  t.render({"bartholomew", ""}, out);                    // the buffer is reused, not appended to
  want.path_and_query = "/u/bartholomew?t=";
  want.headers = {"Authorization: Bearer"};
  want.body = R"({"user": "bartholomew"})";
  EXPECT_EQ(out.substr(0, out.find("\r\n")), "POST /u/bartholomew?t= HTTP/1.1");
  EXPECT_NE(out.find("Content-Length: 23\r\n\r\n{\"user\": \"bartholomew\"}"), std::string::npos)
      << out;
}

TEST(request_template, an_empty_post_still_says_its_length) {
  const auto t = compile("POST /{{user}} HTTP/1.1\r\nHost: h\r\n", "", true);
  std::string out;
  t.render({"a", "b"}, out);
  EXPECT_EQ(out, "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n");
  const auto get = compile("GET /{{user}} HTTP/1.1\r\nHost: h\r\n", "", false);
  get.render({"a", "b"}, out);
  EXPECT_EQ(out, "GET /a HTTP/1.1\r\nHost: h\r\n\r\n");
}

TEST(request_template, bad_references_are_named) {
  for (const auto& [text, want] : std::vector<std::pair<std::string, std::string>>{
           {"/{{nobody}}", "{{nobody}} is not defined"},
           {"/{{user", "is not closed"},
           {"/{{a b}}", "is not {{name}}"},
           {"/{{}}", "is not {{name}}"}}) {
    auto t = request_template::compile("GET " + text + " HTTP/1.1\r\n", "", false, variables);
    ASSERT_TRUE(std::holds_alternative<std::string>(t)) << text;
    EXPECT_NE(std::get<std::string>(t).find(want), std::string::npos) << std::get<std::string>(t);
  }
}

}  // namespace
