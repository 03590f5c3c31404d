#include "http/json_pointer.hpp"

#include <cstdint>

namespace punctual::http {
namespace {

constexpr int max_depth = 64;

class cursor {
 public:
  explicit cursor(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  void skip_space() noexcept {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }
  bool at_end() const noexcept { return p_ == end_; }
  bool take(char c) noexcept {
    skip_space();
    if (p_ < end_ && *p_ == c) return ++p_, true;
    return false;
  }
  char peek() noexcept {
    skip_space();
    return p_ < end_ ? *p_ : '\0';
  }
  const char* position() const noexcept { return p_; }

  // A string at the cursor, decoded into `out` when given.
  bool string(std::string* out) noexcept {
    if (!take('"')) return false;
    while (p_ < end_) {
      const char c = *p_++;
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c != '\\') {
        if (out) *out += c;
        continue;
      }
      if (p_ == end_) return false;
      const char e = *p_++;
      switch (e) {
        case '"':
        case '\\':
        case '/':
          if (out) *out += e;
          break;
        case 'b':
          if (out) *out += '\b';
          break;
        case 'f':
          if (out) *out += '\f';
          break;
        case 'n':
          if (out) *out += '\n';
          break;
        case 'r':
          if (out) *out += '\r';
          break;
        case 't':
          if (out) *out += '\t';
          break;
        case 'u':
          if (!unicode(out)) return false;
          break;
        default:
          return false;
      }
    }
    return false;
  }

  // Any value, skipped; `depth` bounds the nesting.
  bool skip(int depth) noexcept {
    if (depth > max_depth) return false;
    switch (peek()) {
      case '"':
        return string(nullptr);
      case '{':
        return members(depth, [&](bool) { return skip(depth + 1); });
      case '[':
        return elements(depth, [&](std::size_t) { return skip(depth + 1); });
      default:
        return scalar();
    }
  }

  // Walks an object's members; `on_value(key_matches)` reads or skips each value. Keys are
  // decoded into `key` (cleared per member).
  template <typename F>
  bool members(int, F on_value, std::string* key = nullptr, std::string_view want = {}) noexcept {
    if (!take('{')) return false;
    if (take('}')) return true;
    for (;;) {
      if (key) key->clear();
      if (!string(key) || !take(':')) return false;
      if (!on_value(key && *key == want)) return false;
      if (take('}')) return true;
      if (!take(',')) return false;
    }
  }

  template <typename F>
  bool elements(int, F on_value) noexcept {
    if (!take('[')) return false;
    if (take(']')) return true;
    for (std::size_t i = 0;; ++i) {
      if (!on_value(i)) return false;
      if (take(']')) return true;
      if (!take(',')) return false;
    }
  }

 private:
  bool scalar() noexcept {
    for (const std::string_view word : {"true", "false", "null"}) {
      if (static_cast<std::size_t>(end_ - p_) >= word.size() &&
          std::string_view(p_, word.size()) == word) {
        p_ += word.size();
        return true;
      }
    }
    return number();
  }

  // -?(0|[1-9]digits)(.digits)?([eE][+-]?digits)?
  bool number() noexcept {
    const auto digits = [this] {
      const char* start = p_;
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
      return p_ > start;
    };
    if (p_ < end_ && *p_ == '-') ++p_;
    if (p_ < end_ && *p_ == '0') {
      ++p_;
    } else if (!digits()) {
      return false;
    }
    if (p_ < end_ && *p_ == '.' && (++p_, !digits())) return false;
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (!digits()) return false;
    }
    return true;
  }

  bool hex4(std::uint32_t& v) noexcept {
    if (end_ - p_ < 4) return false;
    v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = *p_++;
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= static_cast<std::uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= static_cast<std::uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= static_cast<std::uint32_t>(c - 'A' + 10);
      else
        return false;
    }
    return true;
  }

  bool unicode(std::string* out) noexcept {
    std::uint32_t cp = 0;
    if (!hex4(cp)) return false;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      std::uint32_t low = 0;
      if (end_ - p_ < 6 || p_[0] != '\\' || p_[1] != 'u') return false;
      p_ += 2;
      if (!hex4(low) || low < 0xDC00 || low > 0xDFFF) return false;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
      return false;
    }
    if (!out) return true;
    if (cp < 0x80) {
      *out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      *out += static_cast<char>(0xC0 | (cp >> 6));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      *out += static_cast<char>(0xE0 | (cp >> 12));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      *out += static_cast<char>(0xF0 | (cp >> 18));
      *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    }
    return true;
  }

  const char* p_;
  const char* end_;
};

// The next segment of `pointer` (which starts with '/'), decoded, and the rest after it.
std::string_view next_segment(std::string_view& pointer, std::string& segment) {
  pointer.remove_prefix(1);
  const auto slash = pointer.find('/');
  const std::string_view raw = pointer.substr(0, slash);
  pointer = slash == std::string_view::npos ? std::string_view{} : pointer.substr(slash);
  segment.clear();
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '~' && i + 1 < raw.size()) {
      segment += raw[i + 1] == '1' ? '/' : '~';
      ++i;
    } else {
      segment += raw[i];
    }
  }
  return segment;
}

bool array_index(std::string_view s, std::size_t& index) noexcept {
  if (s.empty() || s.size() > 9 || (s.size() > 1 && s[0] == '0')) return false;
  index = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
    index = index * 10 + static_cast<std::size_t>(c - '0');
  }
  return true;
}

// The value at the cursor, followed along `pointer`; found: `out` holds it.
bool follow(cursor& c, std::string_view pointer, int depth, std::string& out, bool& found) {
  if (depth > max_depth) return false;
  if (pointer.empty()) {
    found = true;
    out.clear();
    if (c.peek() == '"') return c.string(&out);
    const char* start = (c.skip_space(), c.position());
    if (!c.skip(depth)) return false;
    out.assign(start, static_cast<std::size_t>(c.position() - start));
    return true;
  }
  // Scratch per depth, kept by the thread: after the first captures, walking allocates nothing.
  thread_local std::string segments[max_depth + 1];
  thread_local std::string keys[max_depth + 1];
  std::string& segment = segments[depth];
  std::string& key = keys[depth];
  next_segment(pointer, segment);
  const char kind = c.peek();
  if (kind == '{') {
    bool seen = false;
    return c.members(
        depth,
        [&](bool match) {
          if (match && !seen) {
            seen = true;
            return follow(c, pointer, depth + 1, out, found);
          }
          return c.skip(depth + 1);
        },
        &key, segment);
  }
  if (kind == '[') {
    std::size_t want = 0;
    const bool indexable = array_index(segment, want);
    return c.elements(depth, [&](std::size_t i) {
      return indexable && i == want ? follow(c, pointer, depth + 1, out, found) : c.skip(depth + 1);
    });
  }
  return c.skip(depth);  // a scalar has no members: the path ends here, not found
}

}  // namespace

bool valid_json_pointer(std::string_view pointer) noexcept {
  if (pointer.empty()) return true;
  if (pointer[0] != '/') return false;
  for (std::size_t i = 0; i < pointer.size(); ++i) {
    if (pointer[i] == '~' &&
        (i + 1 == pointer.size() || (pointer[i + 1] != '0' && pointer[i + 1] != '1'))) {
      return false;
    }
  }
  return true;
}

bool json_pointer_value(std::string_view json, std::string_view pointer, std::string& out) {
  cursor c(json);
  bool found = false;
  thread_local std::string value;
  if (!follow(c, pointer, 0, value, found) || !found) return false;
  c.skip_space();
  if (!c.at_end()) return false;  // trailing bytes: not one JSON document
  out = value;
  return true;
}

}  // namespace punctual::http
