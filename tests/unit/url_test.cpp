#include "http/url.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using punctual::http::parse_url;

struct good_url {
  std::string text;
  std::string host;
  int port;
  std::string path_and_query;
  bool ipv6;
};

TEST(url, good_urls) {
  const std::vector<good_url> cases = {
      {"http://127.0.0.1:8080/", "127.0.0.1", 8080, "/", false},
      {"http://127.0.0.1", "127.0.0.1", 80, "/", false},
      {"http://localhost:1/a/b?x=1&y=2", "localhost", 1, "/a/b?x=1&y=2", false},
      {"http://example.com/path#fragment", "example.com", 80, "/path", false},
      {"http://example.com#frag", "example.com", 80, "/", false},
      {"http://example.com?q=1", "example.com", 80, "/?q=1", false},
      {"http://example.com:65535/", "example.com", 65535, "/", false},
      {"HTTP://Example.COM:80/Case", "Example.COM", 80, "/Case", false},
      {"http://[::1]:8080/x", "::1", 8080, "/x", true},
      {"http://[::1]", "::1", 80, "/", true},
      {"http://[2001:db8::7]/p?q", "2001:db8::7", 80, "/p?q", true},
      {"http://[::ffff:127.0.0.1]:9000/", "::ffff:127.0.0.1", 9000, "/", true},
      {"http://my_host.internal-1.:81/%20x", "my_host.internal-1.", 81, "/%20x", false},
      {"http://h:08080/", "h", 8080, "/", false},
      {"http://h/a@b:c", "h", 80, "/a@b:c", false},
      {"https://example.com/", "example.com", 443, "/", false},
      {"HTTPS://example.com:8443/x", "example.com", 8443, "/x", false},
  };
  for (const auto& c : cases) {
    const auto r = parse_url(c.text);
    ASSERT_TRUE(r) << c.text << ": " << r.error;
    EXPECT_TRUE(r.error.empty()) << c.text;
    EXPECT_EQ(r.value->host, c.host) << c.text;
    EXPECT_EQ(r.value->port, c.port) << c.text;
    EXPECT_EQ(r.value->path_and_query, c.path_and_query) << c.text;
    EXPECT_EQ(r.value->is_ipv6_literal, c.ipv6) << c.text;
    EXPECT_EQ(r.value->tls, c.text.rfind("http://", 0) != 0 && c.text.rfind("HTTP://", 0) != 0)
        << c.text;
  }
}

TEST(url, the_host_header_and_the_text_name_the_port_only_when_it_is_not_the_default) {
  using punctual::http::host_header_value;
  using punctual::http::to_string;
  EXPECT_EQ(host_header_value(*parse_url("https://example.com/").value), "example.com");
  EXPECT_EQ(host_header_value(*parse_url("https://example.com:80/").value), "example.com:80");
  EXPECT_EQ(host_header_value(*parse_url("http://example.com:443/").value), "example.com:443");
  EXPECT_EQ(to_string(*parse_url("https://[::1]:8443/a").value), "https://[::1]:8443/a");
}

struct bad_url {
  std::string text;
  std::string error;  // the whole message
};

TEST(url, bad_urls_say_what_was_expected) {
  const std::vector<bad_url> cases = {
      {"", "target '': empty URL (expected http[s]://host[:port][/path])"},
      {"example.com:8080/",
       "target 'example.com:8080/': no scheme (expected http[s]://host[:port][/path]; did you mean "
       "'http://example.com:8080/'?)"},
      {"localhost",
       "target 'localhost': no scheme (expected http[s]://host[:port][/path]; did you mean "
       "'http://localhost'?)"},
      {"ftp://example.com/",
       "target 'ftp://example.com/': unsupported scheme 'ftp' (expected "
       "http[s]://host[:port][/path])"},
      {"http://", "target 'http://': empty host (expected http[s]://host[:port][/path])"},
      {"http:///path", "target 'http:///path': empty host (expected http[s]://host[:port][/path])"},
      {"http://:8080/",
       "target 'http://:8080/': empty host (expected http[s]://host[:port][/path])"},
      {"http://user:pw@example.com/",
       "target 'http://user:pw@example.com/': user info ('user@') is not supported in the URL "
       "(expected "
       "http[s]://host[:port][/path]; send credentials with -H 'Authorization: ...')"},
      {"http://h:0/", "target 'http://h:0/': port '0' is not a number in 1..65535"},
      {"http://h:65536/", "target 'http://h:65536/': port '65536' is not a number in 1..65535"},
      {"http://h:99999999999/",
       "target 'http://h:99999999999/': port '99999999999' is not a number in 1..65535"},
      {"http://h:8o/", "target 'http://h:8o/': port '8o' is not a number in 1..65535"},
      {"http://h:-1/", "target 'http://h:-1/': port '-1' is not a number in 1..65535"},
      {"http://h:/", "target 'http://h:/': empty port after ':' (expected a number in 1..65535)"},
      {"http://a b/",
       "target 'http://a b/': contains a space, control or non-ASCII byte (percent-encode it, e.g. "
       "%20)"},
      {"http://h/a\nb",
       "target 'http://h/a\\x0ab': contains a space, control or non-ASCII byte (percent-encode it, "
       "e.g. %20)"},
      {"http://h/a\x7f",
       "target 'http://h/a\\x7f': contains a space, control or non-ASCII byte (percent-encode it, "
       "e.g. %20)"},
      {"http://h/caf\xc3\xa9",
       "target 'http://h/caf\\xc3\\xa9': contains a space, control or non-ASCII byte "
       "(percent-encode it, e.g. %20)"},
      {"http://[::1/",
       "target 'http://[::1/': unterminated IPv6 literal (expected http://[::1]:8080/)"},
      {"http://[::1]x/",
       "target 'http://[::1]x/': unexpected text after the IPv6 literal (expected "
       "http://[::1]:8080/)"},
      {"http://[zz::1]/",
       "target 'http://[zz::1]/': 'zz::1' is not a valid IPv6 address (expected e.g. "
       "http://[::1]:8080/)"},
      {"http://[]/",
       "target 'http://[]/': '' is not a valid IPv6 address (expected e.g. http://[::1]:8080/)"},
      {"http://[fe80::1%25eth0]/",
       "target 'http://[fe80::1%25eth0]/': IPv6 zone identifiers are not supported"},
      {"http://::1/",
       "target 'http://::1/': too many ':' in host (IPv6 literals need brackets, e.g. "
       "http://[::1]:8080/)"},
      {"http://999.1.1.1/",
       "target 'http://999.1.1.1/': '999.1.1.1' is not a valid IPv4 address (expected four numbers "
       "0..255, e.g. "
       "127.0.0.1)"},
      {"http://exa!mple.com/",
       "target 'http://exa!mple.com/': invalid character '!' in host (expected "
       "http[s]://host[:port][/path])"},
      {"http://" + std::string(254, 'a') + "/",
       "target 'http://" + std::string(254, 'a') + "/': host name is longer than 253 characters"},
      {"://x",
       "target '://x': no scheme (expected http[s]://host[:port][/path]; did you mean "
       "'http://://x'?)"},
  };
  ASSERT_GE(cases.size(), 15u);
  for (const auto& c : cases) {
    const auto r = parse_url(c.text);
    EXPECT_FALSE(r) << c.text;
    EXPECT_EQ(r.error, c.error) << c.text;
    EXPECT_EQ(r.error.find('\n'), std::string::npos) << "one line: " << c.text;
  }
}

TEST(url, host_header_and_round_trip) {
  const auto plain = parse_url("http://example.com/x?y");
  ASSERT_TRUE(plain);
  EXPECT_EQ(punctual::http::host_header_value(*plain.value), "example.com");
  EXPECT_EQ(punctual::http::to_string(*plain.value), "http://example.com/x?y");
  const auto v6 = parse_url("http://[::1]:8080");
  ASSERT_TRUE(v6);
  EXPECT_EQ(punctual::http::host_header_value(*v6.value), "[::1]:8080");
  EXPECT_EQ(punctual::http::to_string(*v6.value), "http://[::1]:8080/");
  const auto v4 = parse_url("http://127.0.0.1:9/");
  ASSERT_TRUE(v4);
  EXPECT_EQ(punctual::http::host_header_value(*v4.value), "127.0.0.1:9");
}

}  // namespace
