#include "http/cookie_jar.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using punctual::http::cookie_jar;

std::string header(const cookie_jar& jar) {
  std::string out = "stale";
  jar.header_value(out);
  return out;
}

TEST(cookie_jar, keeps_replaces_and_removes) {
  cookie_jar jar;
  EXPECT_TRUE(jar.empty());
  jar.take("sid=abc; Path=/; HttpOnly");
  jar.take(" theme = dark ");
  EXPECT_EQ(header(jar), "sid=abc; theme=dark");
  jar.take("sid=def; Max-Age=3600");
  EXPECT_EQ(header(jar), "sid=def; theme=dark");  // replaced in place
  jar.take("sid=; max-age=0");
  EXPECT_EQ(header(jar), "theme=dark");  // logged out
  jar.take("theme=x; Max-Age=-1");
  EXPECT_TRUE(jar.empty());
  jar.take("a=1");
  jar.take("b=2");
  jar.take("c=3");
  jar.take("b=; Max-Age=0");
  EXPECT_EQ(header(jar), "a=1; c=3");  // the others keep their order
}

TEST(cookie_jar, ignores_what_is_not_a_cookie) {
  cookie_jar jar;
  for (const char* bad : {"", "novalue", "=nameless", "a=b\r\nX-Injected: 1", "a=\x01"})
    jar.take(bad);
  EXPECT_TRUE(jar.empty()) << header(jar);
  jar.take("a=1");
  jar.clear();  // a new user: an empty jar, its room kept
  EXPECT_TRUE(jar.empty());
  EXPECT_EQ(header(jar), "");
}

}  // namespace
