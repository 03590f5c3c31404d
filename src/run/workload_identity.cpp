#include "run/workload_identity.hpp"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <memory>
#include <stdexcept>

#include "analysis/slo.hpp"
#include "run/config.hpp"
#include "run/describe.hpp"
#include "schedule/stages.hpp"
#include "schedule/trace.hpp"

namespace punctual::run {
namespace {

constexpr const char* not_applicable = "-";

std::string hex_of(const unsigned char* bytes, std::size_t n) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    out += hex[bytes[i] >> 4];
    out += hex[bytes[i] & 15];
  }
  return out;
}

// A SHA-256 fed piece by piece, each piece prefixed by its length (or of a fixed width): no two
// sequences of pieces feed it the same bytes, so the encoding is canonical.
class hasher {
 public:
  hasher() : ctx_(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
    if (!ctx_ || EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) != 1)
      throw std::runtime_error("cannot compute SHA-256");
  }
  hasher& add(std::string_view piece) {
    update(std::to_string(piece.size()) + ':');
    update(piece);
    return *this;
  }
  hasher& add(std::uint64_t n) { return add(std::to_string(n)); }
  hasher& add(nanoseconds d) { return add(std::to_string(d.count())); }
  hasher& add_fixed(std::uint64_t n) {
    unsigned char bytes[8];
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(n >> (8 * i));
    EVP_DigestUpdate(ctx_.get(), bytes, sizeof bytes);
    return *this;
  }
  std::string hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (EVP_DigestFinal_ex(ctx_.get(), digest, &length) != 1)
      throw std::runtime_error("cannot compute SHA-256");
    return hex_of(digest, length);
  }

 private:
  void update(std::string_view bytes) { EVP_DigestUpdate(ctx_.get(), bytes.data(), bytes.size()); }
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx_;
};

// "3 entries, sha256:..." : a content by its size and its digest.
std::string content_text(std::size_t count, const char* unit, hasher& h) {
  return std::to_string(count) + " " + unit + ", sha256:" + h.hex();
}

}  // namespace

std::string status_text(const std::bitset<600>& ok) {
  std::string out;
  for (std::size_t code = 0; code < ok.size(); ++code) {
    if (!ok[code]) continue;
    std::size_t last = code;
    while (last + 1 < ok.size() && ok[last + 1]) ++last;
    if (!out.empty()) out += ',';
    out += std::to_string(code);
    if (last > code) out += "-" + std::to_string(last);
    code = last;
  }
  return out.empty() ? std::string("none") : out;
}

namespace {

// A request as it goes on the wire: its request line, its header lines and its body.
struct request_parts {
  std::string method, path, headers, body;
};

request_parts split_request(std::string_view bytes) {
  request_parts r;
  const auto head_end = bytes.find("\r\n\r\n");
  const std::string_view head = bytes.substr(0, head_end);
  if (head_end != std::string_view::npos) r.body = std::string(bytes.substr(head_end + 4));
  const auto line_end = head.find("\r\n");
  const std::string_view line = head.substr(0, line_end);
  const auto space = line.find(' ');
  r.method = std::string(line.substr(0, space));
  if (space != std::string_view::npos) {
    const std::string_view rest = line.substr(space + 1);
    r.path = std::string(rest.substr(0, rest.rfind(' ')));
  }
  // One header a line, as sent; "\n" between them reads as one line once quoted.
  if (line_end != std::string_view::npos) r.headers = std::string(head.substr(line_end + 2));
  for (auto at = r.headers.find("\r\n"); at != std::string::npos; at = r.headers.find("\r\n", at))
    r.headers.replace(at, 2, "\n");
  return r;
}

// A short printable body as it is; any other by its size and digest.
std::string body_text(const std::string& body) {
  constexpr std::size_t shown = 64;
  bool printable = body.size() <= shown;
  for (const char c : body) printable = printable && c >= 0x20 && c < 0x7f;
  if (printable) return body;
  hasher h;
  h.add(body);
  return std::to_string(body.size()) + " bytes, sha256:" + h.hex();
}

void add_entry(hasher& h, const named_request& e) {
  h.add(e.name).add(schedule::format_rate(e.weight)).add(std::uint64_t{e.head});
  h.add(e.bytes).add(status_text(e.expected_status));
  h.add(e.expect_body ? e.expect_body->text() : std::string()).add(std::uint64_t{e.session});
}

std::string mix_text(const config& c) {
  hasher h;
  for (const auto& e : c.mix) add_entry(h, e);
  return content_text(c.mix.size(), "requests", h);
}

void add_think(hasher& h, const schedule::think_time& t) {
  h.add(static_cast<std::uint64_t>(t.shape)).add(t.a).add(t.b);
}

// Everything the scenario file sets but the feeder's rows: the steps (their requests, expected
// statuses and texts in the mix), think times, captures and the file's policies. max_users is
// left out: like -c, it is each process's own capacity.
std::string scenario_text(const config& c, const hybrid_model& m) {
  hasher h;
  for (const auto& e : c.mix) add_entry(h, e);
  for (const auto& sc : m.scenarios) {
    h.add(sc.name).add(schedule::format_rate(sc.weight)).add(sc.steps.size());
    for (const auto& st : sc.steps) {
      h.add(std::uint64_t{st.name});
      add_think(h, st.think);
      h.add(st.captures.size());
      for (const auto& cap : st.captures)
        h.add(std::uint64_t{cap.variable}).add(std::uint64_t{cap.from_header}).add(cap.key);
    }
  }
  h.add(std::uint64_t{m.drop_on_overload}).add(std::uint64_t{m.continue_on_error});
  h.add(m.graceful_stop).add(std::uint64_t{m.cookies}).add(std::uint64_t{m.per_user});
  h.add(m.variables.size());
  for (const auto& v : m.variables) h.add(v);
  return content_text(m.scenarios.size(), "scenarios", h);
}

std::string feeder_text(const hybrid_model& m) {
  if (!m.csv_rows) return not_applicable;
  hasher h;
  for (const auto& row : *m.csv_rows) {
    h.add(row.size());
    for (const auto& value : row) h.add(value);
  }
  return content_text(m.csv_rows->size(), m.csv_random ? "rows, random" : "rows, in order", h);
}

std::string trace_text(const schedule::trace& t) {
  hasher h;
  for (std::size_t i = 0; i < t.size(); ++i)
    h.add_fixed(static_cast<std::uint64_t>(t.offset(i).count())).add_fixed(t.name_id(i));
  for (const auto& name : t.names()) h.add(name);
  return content_text(t.size(), "entries", h);
}

// "http://host:8080": the target without its path (the request's path is a field of its own).
std::string origin_of(const std::string& url) {
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return url;
  return url.substr(0, url.find('/', scheme_end + 3));
}

std::string retry_text(const retry_policy& p) {
  if (!p.enabled()) return "none";
  return std::to_string(p.retries) + " on " + retry_causes(p.on) + ", backoff " +
         schedule::format_duration(p.backoff_base) + ".." +
         schedule::format_duration(p.backoff_cap) + ", attempt timeout " +
         (p.attempt_timeout.count() > 0 ? schedule::format_duration(p.attempt_timeout)
                                        : std::string(not_applicable));
}

void add_schedule(const config& c, std::vector<workload_field>& f) {
  const schedule::plan* p = c.plan();
  const bool trace = p && p->arrival == schedule::arrival_kind::trace;
  f.push_back({"arrival", p ? name(p->arrival) : not_applicable});
  f.push_back({"rate", p && !trace && p->stages.empty() ? schedule::format_rate(p->rate_per_s)
                                                        : not_applicable});
  f.push_back({"stages", p && !p->stages.empty()
                             ? "from " + schedule::format_rate(p->start_rate_per_s) + " " +
                                   schedule::format_stages(p->stages)
                             : not_applicable});
  f.push_back({"trace", trace ? trace_text(*p->replay) : not_applicable});
  const closed_model* closed = c.closed();
  f.push_back({"think", closed ? schedule::format_duration(closed->think) : not_applicable});
  f.push_back({"expected_interval", closed && closed->expected_interval
                                        ? schedule::format_duration(*closed->expected_interval)
                                        : not_applicable});
}

void add_requests(const config& c, std::vector<workload_field>& f) {
  f.push_back({"target", origin_of(c.target_url)});
  f.push_back({"resolve", c.resolved_address.empty() ? not_applicable : c.resolved_address});
  f.push_back({"http", name(c.http)});
  // One request, or a mix of them, or a scenario's steps: the fields of the others are "-".
  const bool one = c.mix.empty();
  const request_parts r = one ? split_request(c.request) : request_parts{};
  f.push_back({"method", one ? r.method : not_applicable});
  f.push_back({"path", one ? r.path : not_applicable});
  f.push_back({"headers", one ? r.headers : not_applicable});
  f.push_back({"body", one ? body_text(r.body) : not_applicable});
  const hybrid_model* h = c.hybrid();
  f.push_back({"requests", !one && !h ? mix_text(c) : not_applicable});
  f.push_back({"scenario", h ? scenario_text(c, *h) : not_applicable});
  f.push_back({"feeder", h ? feeder_text(*h) : not_applicable});
}

void add_judgement(const config& c, analysis::bound_mode slo_bound,
                   std::vector<workload_field>& f) {
  f.push_back({"timeout", schedule::format_duration(c.timeout)});
  f.push_back({"expect_status", status_text(c.expected_status)});
  const retry_policy& r = c.retry();
  f.push_back({"retry", retry_text(r)});
  f.push_back({"retry_budget",
               r.enabled() && r.budget >= 0 ? schedule::format_rate(r.budget) : not_applicable});
  f.push_back({"slo_bound", slo_bound == analysis::bound_mode::upper ? "upper" : "point"});
}

// `"text"`, with quotes, backslashes and control bytes escaped: one line whatever the text.
std::string quoted(std::string_view text) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte == 0x7f) {
      out += c == '\n' ? std::string("\\n") : std::string("\\x") + hex[byte >> 4] + hex[byte & 15];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

const workload_field* find_field(const std::vector<workload_field>& fields, std::string_view name) {
  for (const auto& f : fields) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

}  // namespace

std::vector<workload_field> workload_fields(const config& c, analysis::bound_mode slo_bound) {
  std::vector<workload_field> f;
  f.push_back({"model", name(c.kind())});
  add_schedule(c, f);
  add_requests(c, f);
  add_judgement(c, slo_bound, f);
  return f;
}

std::string workload_digest(const std::vector<workload_field>& fields) {
  hasher h;
  for (const auto& f : fields) h.add(f.name).add(f.value);
  return h.hex();
}

workload_identity identify_workload(const config& c, analysis::bound_mode slo_bound) {
  workload_identity id;
  id.fields = workload_fields(c, slo_bound);
  id.digest = workload_digest(id.fields);
  return id;
}

std::optional<std::string> first_difference(const std::vector<workload_field>& other,
                                            const std::vector<workload_field>& reference) {
  const auto text = [](const workload_field* f) {
    return f ? quoted(f->value) : std::string("none");
  };
  for (const auto& r : reference) {
    const workload_field* o = find_field(other, r.name);
    if (!o || o->value != r.value) return r.name + " " + text(o) + " vs " + text(&r);
  }
  for (const auto& o : other) {
    if (!find_field(reference, o.name)) return o.name + " " + text(&o) + " vs none";
  }
  return std::nullopt;
}

std::optional<std::string> workload_difference(const workload_identity& other,
                                               const workload_identity& reference) {
  if (other.digest == reference.digest) return std::nullopt;
  if (auto field = first_difference(other.fields, reference.fields)) return field;
  return "digest " + quoted(other.digest) + " vs " + quoted(reference.digest);
}

std::string derived_run_id(nanoseconds start_at, std::string_view digest) {
  hasher h;
  h.add("run").add(start_at).add(digest);
  return h.hex().substr(0, 32);
}

std::string random_run_id() {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1)
    throw std::runtime_error("no random bytes for a run id");
  return hex_of(bytes, sizeof bytes);
}

std::optional<std::string> run_id_problem(std::string_view id) {
  constexpr std::size_t longest = 64;
  if (id.empty() || id.size() > longest) return "expected 1 to 64 characters";
  for (const char c : id) {
    const bool fits = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == ':' || c == '-';
    if (!fits) return "only letters, digits and . _ : - may name a run";
  }
  return std::nullopt;
}

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("cannot compute SHA-256");
  return hex_of(digest, length);
}

}  // namespace punctual::run
