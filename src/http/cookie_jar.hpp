// A hybrid user's cookies, as a browser keeps them for one origin: Set-Cookie in, a Cookie
// header out. Every cookie of the origin goes with every request (Path and Domain are not
// matched: a scenario talks to one origin), and Max-Age <= 0 removes one, as a server logs a
// user out. Expires dates are not read. Entries and their strings are reused from one user to
// the next, so a jar that has grown costs no allocation.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace punctual::http {

class cookie_jar {
 public:
  void clear() noexcept { count_ = 0; }
  bool empty() const noexcept { return count_ == 0; }
  std::size_t size() const noexcept { return count_; }

  // One Set-Cookie header's value: "name=value; Attr; Max-Age=N; ...". Stores or replaces the
  // cookie, or removes it; a value without a name or with a control byte is ignored.
  void take(std::string_view set_cookie);
  // "a=1; b=2", in the order the cookies were first set, replacing `out`'s contents.
  void header_value(std::string& out) const;

 private:
  struct cookie {
    std::string name;
    std::string value;
  };
  std::vector<cookie> cookies_;  // the first count_ are live
  std::size_t count_ = 0;
};

}  // namespace punctual::http
