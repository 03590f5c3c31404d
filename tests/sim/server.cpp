#include "server.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "server_state.hpp"

namespace punctual::sim {
namespace {

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// The value of header `name` in an HTTP/1.1 head, or empty.
std::string_view header_value(std::string_view head, std::string_view name) {
  std::size_t at = head.find("\r\n");
  while (at != std::string_view::npos && at + 2 < head.size()) {
    const std::size_t start = at + 2;
    const std::size_t end = head.find("\r\n", start);
    const std::string_view line =
        head.substr(start, end == std::string_view::npos ? head.npos : end - start);
    const std::size_t colon = line.find(':');
    if (colon != std::string_view::npos && iequal(line.substr(0, colon), name)) {
      std::string_view v = line.substr(colon + 1);
      while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
      return v;
    }
    at = end;
  }
  return {};
}

std::uint64_t number(std::string_view text) {
  std::uint64_t n = 0;
  for (const char ch : text) {
    if (ch < '0' || ch > '9') break;
    n = n * 10 + static_cast<std::uint64_t>(ch - '0');
  }
  return n;
}

}  // namespace

int status_of(fate f) noexcept {
  switch (f) {
    case fate::status_503:
      return 503;
    case fate::status_429:
      return 429;
    default:
      return 200;
  }
}

nanoseconds service_time::draw(world& w) const {
  switch (shape) {
    case kind::constant:
      return a;
    case kind::exponential:
      return nanoseconds{
          static_cast<std::int64_t>(-static_cast<double>(a.count()) * std::log(1 - w.unit()))};
    case kind::uniform:
      return a + nanoseconds{
                     static_cast<std::int64_t>(w.unit() * static_cast<double>((b - a).count()))};
  }
  return a;
}

scripted_server::scripted_server(world& w, network& net, server_script script)
    : world_(w),
      net_(net),
      script_(std::move(script)),
      responses_(server::response_set::make(script_.body_bytes)),
      cpu_free_at_(w.now() + script_.busy_at_start) {
  net_.serve(*this);
}

scripted_server::~scripted_server() = default;

const served_request* scripted_server::find(std::uint64_t sim_id) const noexcept {
  const auto it = by_id_.find(sim_id);
  return it == by_id_.end() ? nullptr : &log_[it->second];
}

fate scripted_server::draw_fate() {
  double u = world_.unit();
  for (std::size_t i = 1; i < fate_count; ++i) {
    if (u < script_.shares[i]) return static_cast<fate>(i);
    u -= script_.shares[i];
  }
  return fate::ok;
}

nanoseconds scripted_server::writable_at(nanoseconds at) const noexcept {
  for (bool moved = true; moved;) {
    moved = false;
    for (const auto& s : script_.stalls) {
      if (at >= origin_ + s.from && at < origin_ + s.until) {
        at = origin_ + s.until;
        moved = true;
      }
    }
  }
  return at;
}

served_request& scripted_server::record(std::uint64_t sim_id, const connection& c) {
  served_request r;
  r.sim_id = sim_id;
  r.connection = c.serial;
  r.read_at = world_.now();
  if (sim_id != 0) by_id_[sim_id] = log_.size();
  log_.push_back(r);
  return log_.back();
}

// A 200's head for a body of body_bytes written a byte at a time.
std::string scripted_server::trickle_head() const {
  return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(script_.body_bytes) + "\r\n\r\n";
}

void scripted_server::go_away() {
  script_.refuse_share = 1;
  script_.hang_share = script_.reset_share = 0;
  for (const auto& conn : net_.connections()) {
    auto* state = static_cast<conn_state*>(conn->server_state);
    if (!state || state->gone) continue;
    state->gone = true;
    net_.server_close(*conn);
  }
}

accept_fate scripted_server::on_accept(connection& c) {
  ++seen_;
  const double u = world_.unit();
  if (u < script_.refuse_share) return accept_fate::refuse;
  if (u < script_.refuse_share + script_.hang_share) return accept_fate::hang;
  if (u < script_.refuse_share + script_.hang_share + script_.reset_share)
    return accept_fate::reset;
  ++accepted_;
  auto state = std::make_unique<conn_state>();
  state->server = this;
  state->conn = &c;
  c.server_state = state.get();
  conn_state& s = *state;
  states_[c.serial] = std::move(state);
  if (script_.banner) {
    auto conn = c.shared_from_this();
    world_.at(writable_at(world_.now()),
              [this, conn] { net_.server_write(*conn, "HELLO punctual\r\n"); });
  }
  if (script_.http2) h2_start(s);
  return accept_fate::accept;
}

void scripted_server::on_data(connection& c, std::string_view bytes) {
  auto* s = static_cast<conn_state*>(c.server_state);
  if (!s || s->gone) return;
  if (s->session) return h2_data(c, *s, bytes);
  http1_data(c, *s, bytes);
}

void scripted_server::on_closed_by_client(connection& c) {
  if (auto* s = static_cast<conn_state*>(c.server_state)) s->gone = true;
}

void scripted_server::http1_data(connection& c, conn_state& s, std::string_view bytes) {
  s.in.append(bytes);
  for (;;) {
    const std::size_t end = s.in.find("\r\n\r\n");
    if (end == std::string::npos) return;
    const std::string_view head(s.in.data(), end + 2);
    const std::uint64_t length = number(header_value(head, "content-length"));
    if (s.in.size() < end + 4 + length) return;
    const std::uint64_t id = number(header_value(head, "x-sim-id"));
    std::string request_head(head);
    s.in.erase(0, end + 4 + length);
    served_request& r = record(id, c);
    r.head = std::move(request_head);
    r.what = draw_fate();
    if (r.what == fate::refused || r.what == fate::stream_reset || r.what == fate::malformed)
      r.what = fate::ok;  // HTTP/2's
    r.status = status_of(r.what);
    ++s.requests;
    nanoseconds ready = world_.now();
    if (script_.cpu_per_request.count() > 0) {
      cpu_free_at_ = std::max(cpu_free_at_, ready) + script_.cpu_per_request;
      ready = cpu_free_at_;
    }
    const nanoseconds due = std::max(ready + service_of(r.head), s.free_at);
    const nanoseconds at = writable_at(due);
    s.free_at = at;
    if (r.what == fate::never) continue;
    const std::size_t index = log_.size() - 1;
    auto conn = c.shared_from_this();
    world_.at(at, [this, conn, index] { http1_answer(*conn, index); });
  }
}

nanoseconds scripted_server::service_of(std::string_view head) {
  const nanoseconds drawn = script_.service.draw(world_);
  if (script_.slower_paths.empty()) return drawn;
  const auto from = head.find(' ') + 1;
  const std::string_view path = head.substr(from, head.find(' ', from) - from);
  for (const auto& [slower, factor] : script_.slower_paths) {
    if (path == slower)
      return nanoseconds{static_cast<std::int64_t>(static_cast<double>(drawn.count()) * factor)};
  }
  return drawn;
}

void scripted_server::http1_answer(connection& c, std::size_t index) {
  auto* s = static_cast<conn_state*>(c.server_state);
  served_request& r = log_[index];
  r.answer_at = world_.now();
  if (s->gone) return;
  switch (r.what) {
    case fate::reset:
      s->gone = true;
      net_.server_reset(c);
      return;
    case fate::close_delimited: {
      net_.server_write(c, responses_.close_delimited);
      r.end_offset = c.server_sent;
      r.answered = true;
      s->gone = true;
      if (script_.close_delimited_fin_after.count() == 0) return net_.server_close(c);
      auto conn = c.shared_from_this();
      world_.at(world_.now() + script_.close_delimited_fin_after,
                [this, conn] { net_.server_close(*conn); });
      return;
    }
    case fate::trickle: {
      net_.server_write(c, trickle_head());
      auto conn = c.shared_from_this();
      nanoseconds at = world_.now();
      for (std::size_t k = 0; k < script_.body_bytes; ++k) {
        at = writable_at(at + script_.trickle_gap);
        const bool last = k + 1 == script_.body_bytes;
        world_.at(at, [this, conn, index, last] {
          auto* st = static_cast<conn_state*>(conn->server_state);
          if (st->gone) return;
          net_.server_write(*conn, "x");
          if (last) {
            log_[index].end_offset = conn->server_sent;
            log_[index].answered = true;
          }
        });
      }
      s->free_at = std::max(s->free_at, at);
      return;
    }
    case fate::reset_after:
      net_.server_write(
          c, responses_.ok.substr(0, std::min(script_.reset_after_bytes, responses_.ok.size())));
      s->gone = true;
      net_.server_reset(c);
      return;
    case fate::garbage:
    case fate::huge_headers:
    case fate::continue_:
    case fate::chunked:
    case fate::http10:
    case fate::close_after: {
      const std::string& bytes = r.what == fate::garbage        ? responses_.garbage
                                 : r.what == fate::huge_headers ? responses_.huge_headers
                                 : r.what == fate::continue_    ? responses_.continue_
                                 : r.what == fate::chunked      ? responses_.chunked
                                 : r.what == fate::http10       ? responses_.http10
                                                                : responses_.ok;
      net_.server_write(c, bytes);
      r.end_offset = c.server_sent;
      r.answered = r.what != fate::garbage;
      // After these the connection carries nothing more (serve closes it).
      if (r.what == fate::garbage || r.what == fate::http10 || r.what == fate::close_after) {
        s->gone = true;
        net_.server_close(c);
      }
      return;
    }
    default: {
      const std::string& canned = r.status == 503   ? responses_.unavailable
                                  : r.status == 429 ? responses_.too_many
                                                    : responses_.ok;
      net_.server_write(c, r.what == fate::ok && script_.answer ? script_.answer(r.head) : canned);
      r.end_offset = c.server_sent;
      r.answered = true;
      idle_close_later(c);
      return;
    }
  }
}

// serve's --idle-close: a keep-alive connection that carried nothing more for that long closes.
void scripted_server::idle_close_later(connection& c) {
  if (script_.idle_close.count() == 0) return;
  auto* s = static_cast<conn_state*>(c.server_state);
  const std::uint32_t requests = s->requests;
  auto keep = c.shared_from_this();
  world_.at(world_.now() + script_.idle_close, [this, keep, requests] {
    auto* st = static_cast<conn_state*>(keep->server_state);
    if (st->gone || st->requests != requests) return;
    st->gone = true;
    net_.server_close(*keep);
  });
}

}  // namespace punctual::sim
