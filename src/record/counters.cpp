#include "record/counters.hpp"

#include <utility>

namespace punctual::record {
namespace {

template <std::size_t N>
void add_all(std::array<std::uint64_t, N>& to, const std::array<std::uint64_t, N>& from) noexcept {
  for (std::size_t i = 0; i < N; ++i) to[i] += from[i];
}

}  // namespace

void attempt_counts::add(const attempt_counts& other) noexcept {
  total += other.total;
  first += other.first;
  retries += other.retries;
  resent += other.resent;
  refused_by_budget += other.refused_by_budget;
  past_deadline += other.past_deadline;
  add_all(by_cause, other.by_cause);
}

void counters::add(const counters& other) noexcept {
  planned += other.planned;
  claimed_in += other.claimed_in;
  claimed_out += other.claimed_out;
  add_all(outcomes, other.outcomes);
  add_all(socket_errors, other.socket_errors);
  add_all(status, other.status);
  censored += other.censored;
  body_missing += other.body_missing;
  capture_missing += other.capture_missing;
  sent_in_window += other.sent_in_window;
  completed_in_window += other.completed_in_window;
  bytes_sent += other.bytes_sent;
  bytes_received += other.bytes_received;
  reconnects += other.reconnects;
  tls_handshakes += other.tls_handshakes;
  tls_resumed += other.tls_resumed;
  h2_unprocessed += other.h2_unprocessed;
  add_all(h2_rst_codes, other.h2_rst_codes);
  attempts.add(other.attempts);
}

void per_second_load::add(const per_second_load& other) {
  for (auto [to, from] : {std::pair{&planned, &other.planned}, std::pair{&late, &other.late},
                          std::pair{&attempts, &other.attempts}, std::pair{&steps, &other.steps}}) {
    if (to->size() < from->size()) to->resize(from->size());
    for (std::size_t i = 0; i < from->size(); ++i) (*to)[i] += (*from)[i];
  }
}

}  // namespace punctual::record
