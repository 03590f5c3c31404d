// `punctual run --http 2` against a hostile h2c server in the simulation: GOAWAY, RST_STREAM,
// a zero stream window, frames that break the protocol, one stream at a time. Each case holds
// the report to what the server and the wire saw: the outcomes against the server's log, and
// the bytes against the frames themselves (a tap on the wire parses what the client wrote; the
// response frames are rebuilt with nghttp2's own HPACK and checked against the bytes the
// network carried).
#include <gtest/gtest.h>
#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/interval_series.hpp"
#include "checks.hpp"
#include "cli/app.hpp"
#include "cli/command.hpp"
#include "cli/run_command.hpp"
#include "cli_run.hpp"
#include "record/view_set.hpp"
#include "sim_setups.hpp"

namespace punctual::sim::h2_hostile_cases {
namespace {

using std::chrono::milliseconds;
using json = nlohmann::ordered_json;

constexpr std::uint64_t rst_frame_bytes = 9 + 4;  // RST_STREAM: a header and an error code

// The frames the client wrote on one connection, as the server received them.
struct wire {
  std::size_t preface_left = 24;  // "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
  std::string head;               // a frame header not yet complete
  std::uint64_t payload_left = 0;
  std::uint64_t request_bytes = 0;  // 9 + length of every HEADERS, CONTINUATION and DATA frame
  std::uint64_t streams = 0;        // HEADERS frames: the streams the client opened
  std::uint64_t data_frames = 0;
  std::uint64_t resets = 0;  // RST_STREAM frames

  void take(std::string_view bytes) {
    const std::size_t skip = std::min(preface_left, bytes.size());
    preface_left -= skip;
    bytes.remove_prefix(skip);
    while (!bytes.empty()) {
      if (payload_left == 0 && head.size() < 9) {
        const std::size_t n = std::min(bytes.size(), 9 - head.size());
        head.append(bytes.substr(0, n));
        bytes.remove_prefix(n);
        if (head.size() == 9) frame_begins();
        continue;
      }
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(bytes.size(), payload_left));
      bytes.remove_prefix(n);
      payload_left -= n;
      if (payload_left == 0) head.clear();
    }
  }

  void frame_begins() {
    const auto* h = reinterpret_cast<const unsigned char*>(head.data());
    const std::uint64_t length = (std::uint64_t{h[0]} << 16) | (std::uint64_t{h[1]} << 8) | h[2];
    const std::uint8_t type = h[3];
    const std::uint32_t stream = ((h[5] & 0x7fU) << 24) | (h[6] << 16) | (h[7] << 8) | h[8];
    const bool on_stream = stream != 0;
    if (on_stream &&
        (type == NGHTTP2_HEADERS || type == NGHTTP2_CONTINUATION || type == NGHTTP2_DATA)) {
      request_bytes += 9 + length;
    }
    streams += type == NGHTTP2_HEADERS ? 1 : 0;
    data_frames += type == NGHTTP2_DATA ? 1 : 0;
    resets += type == NGHTTP2_RST_STREAM ? 1 : 0;
    payload_left = length;
    if (length == 0) head.clear();
  }
};

// Sits between the network and the scripted server and reads what reaches the server. The
// simulation hands out its parts as const for the checks; they are not, and the tap is set
// before the run starts.
class wire_tap final : public server_end {
 public:
  explicit wire_tap(simulation& sim) : server_(const_cast<scripted_server&>(sim.server())) {
    const_cast<network&>(sim.net()).serve(*this);
  }

  accept_fate on_accept(connection& c) override { return server_.on_accept(c); }
  void on_data(connection& c, std::string_view bytes) override {
    wires_[c.serial].take(bytes);
    server_.on_data(c, bytes);
  }
  void on_closed_by_client(connection& c) override { server_.on_closed_by_client(c); }

  const std::map<std::uint64_t, wire>& wires() const noexcept { return wires_; }
  std::uint64_t total(std::uint64_t wire::*field) const {
    std::uint64_t n = 0;
    for (const auto& [serial, w] : wires_) n += w.*field;
    return n;
  }

 private:
  scripted_server& server_;
  std::map<std::uint64_t, wire> wires_;  // by connection serial
};

// run_cli with the tap on the wire. The tap is declared first so it outlives the simulation.
struct tapped_run {
  std::unique_ptr<wire_tap> tap;
  cli_result r;
};

tapped_run run_tapped(std::vector<std::string> args, const server_script& server,
                      nanoseconds delay = {}, std::vector<pause> pauses = {}) {
  args.push_back(target);
  tapped_run out;
  cli_result& r = out.r;
  std::vector<std::string> command_line{"punctual", "run"};
  command_line.insert(command_line.end(), args.begin(), args.end());
  r.setup = cli::build_run(cli::parse_run_options(args), command_line);
  setup s;
  s.config = r.setup.config;
  s.server = server;
  s.server.http2 = true;
  if (delay.count() != 0) s.up.delay = s.down.delay = delay;
  s.pauses = std::move(pauses);
  r.sim = std::make_unique<simulation>(std::move(s));
  out.tap = std::make_unique<wire_tap>(*r.sim);
  analysis::interval_series series(analysis::slo_percentiles(r.setup.slos));
  r.sim->set_sink([&](std::int64_t, const record::view_set& v) { series.add(v); });
  if (!r.sim->run()) {
    r.exit_code = cli::exit_run_failed;
    return out;
  }
  // What the client wrote last is still on its way when its run ends: a server outliving the
  // client still reads it (a cancelling RST_STREAM, say).
  world& w = r.sim->sim();
  w.run_until([] { return false; }, w.now() + milliseconds(10));
  r.verdicts = cli::judge(r.setup, r.sim->result(), series);
  r.exit_code = cli::exit_code_for(r.sim->result(), r.verdicts);
  std::ostringstream text;
  report::write_json(text, r.sim->settings().config, r.sim->result(), r.verdicts, r.text);
  r.json = text.str();
  r.doc = json::parse(r.json);
  return out;
}

// The bytes of one answer's frames: HEADERS (":status 200" and the content-length, HPACK-coded
// by nghttp2 as the server codes them) and one DATA frame with the body.
std::uint64_t response_bytes(std::size_t body) {
  nghttp2_hd_deflater* deflater = nullptr;
  nghttp2_hd_deflate_new(&deflater, 4096);
  std::string status = "200";
  std::string length = std::to_string(body);
  const auto nv = [](const char* n, std::string& v) {
    return nghttp2_nv{reinterpret_cast<std::uint8_t*>(const_cast<char*>(n)),
                      reinterpret_cast<std::uint8_t*>(v.data()), std::strlen(n), v.size(),
                      NGHTTP2_NV_FLAG_NONE};
  };
  nghttp2_nv headers[] = {nv(":status", status), nv("content-length", length)};
  std::uint8_t block[256];
  const auto coded = nghttp2_hd_deflate_hd(deflater, block, sizeof block, headers, 2);
  nghttp2_hd_deflate_del(deflater);
  return 9 + static_cast<std::uint64_t>(coded) + 9 + body;
}

std::uint64_t number(const json& j) {
  return j.get<std::uint64_t>();
}

std::map<std::string, std::uint64_t> nonzero_errors(const json& doc) {
  std::map<std::string, std::uint64_t> out;
  for (const auto& [k, v] : doc["socket_errors"].items()) {
    if (v.get<std::uint64_t>() != 0) out[k] = v.get<std::uint64_t>();
  }
  return out;
}

// What every case holds: every rule of checks.hpp; a verdict the case accepts (`excused`:
// gating checks it expects to fail; a short run cannot resolve p99's samples); the run over by
// its duration and timeout; the socket errors adding up; nothing unfinished or dropped; h2 only.
void expect_sound(const cli_result& r, nanoseconds duration, nanoseconds timeout,
                  const std::set<std::string>& excused = {}) {
  const auto problems = check_run(*r.sim);
  EXPECT_TRUE(problems.empty()) << describe(problems);
  ASSERT_FALSE(r.doc.is_null()) << "the run did not start";
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 4) << r.exit_code;
  for (const auto& check : r.doc["validity"]["checks"]) {
    const std::string name = check["name"].get<std::string>();
    const bool failed = check["level"] == "gating" && !check["pass"].get<bool>();
    if (failed && !name.starts_with("samples_beyond_")) {
      EXPECT_TRUE(excused.count(name)) << "judged invalid by " << name;
    }
  }
  EXPECT_LE(r.sim->result().elapsed, duration + timeout);
  const json& outcomes = r.doc["outcomes"];
  std::uint64_t errors = 0;
  for (const auto& [k, v] : r.doc["socket_errors"].items()) errors += v.get<std::uint64_t>();
  EXPECT_EQ(errors, number(outcomes["socket_error"]));
  EXPECT_EQ(number(outcomes["unfinished"]), 0u);
  EXPECT_EQ(number(outcomes["dropped"]), 0u);
  EXPECT_EQ(r.doc["protocol"]["name"], "h2");
  EXPECT_EQ(number(r.doc["protocol"]["connections"]["http/1.1"]), 0u);
  EXPECT_GE(number(r.doc["protocol"]["connections"]["h2"]), 1u);
}

// bytes.sent is every request frame the server received (every attempt, whatever its end);
// bytes.received the frames of the answers and resets the server sent on the streams.
void expect_bytes(const tapped_run& t, std::uint64_t received) {
  EXPECT_EQ(number(t.r.doc["bytes"]["sent"]), t.tap->total(&wire::request_bytes));
  EXPECT_EQ(number(t.r.doc["bytes"]["received"]), received);
}

std::uint64_t answered(const simulation& sim) {
  return static_cast<std::uint64_t>(
      std::count_if(sim.server().log().begin(), sim.server().log().end(),
                    [](const served_request& s) { return s.answered; }));
}

std::uint64_t met(const simulation& sim, fate what) {
  return static_cast<std::uint64_t>(
      std::count_if(sim.server().log().begin(), sim.server().log().end(),
                    [&](const served_request& s) { return s.what == what; }));
}

// A load at the target: one thread, `connections` connections, `rate` requests a second.
std::vector<std::string> load_args(int rate, const char* duration, int connections,
                                   const char* timeout) {
  std::vector<std::string> args{"--http", "2", "-t", "1", "-d", duration, "--timeout", timeout};
  args.insert(args.end(), {"-c", std::to_string(connections), "-R", std::to_string(rate)});
  return args;
}

// Every request answered; the bytes are exactly the frames, and the response frames as rebuilt
// are what each connection carried besides the server's SETTINGS and its ACK of the client's.
TEST(sim_h2_hostile, a_plain_server_every_byte_counted) {
  server_script server;
  const tapped_run t = run_tapped(load_args(500, "1s", 2, "1s"), server);
  const cli_result& r = t.r;
  const simulation& sim = *r.sim;
  expect_sound(r, std::chrono::seconds(1), std::chrono::seconds(1));
  const std::uint64_t planned = number(r.doc["schedule"]["planned"]);
  EXPECT_EQ(planned, 500u);
  EXPECT_EQ(number(r.doc["outcomes"]["ok"]), planned);
  EXPECT_TRUE(nonzero_errors(r.doc).empty());
  EXPECT_EQ(t.tap->total(&wire::streams), planned);
  EXPECT_EQ(answered(sim), planned);
  EXPECT_EQ(number(r.doc["protocol"]["h2"]["unprocessed"]), 0u);
  const std::uint64_t each = response_bytes(server.body_bytes);
  expect_bytes(t, planned * each);
  std::map<std::uint64_t, std::uint64_t> answers;
  for (const auto& s : sim.server().log()) answers[s.connection]++;
  const std::uint64_t settings = 9 + 6;  // one entry: SETTINGS_MAX_CONCURRENT_STREAMS
  for (const auto& c : sim.net().connections()) {
    EXPECT_EQ(c->server_sent, settings + 9 + answers[c->serial] * each)
        << "connection " << c->serial;
  }
}

// A POST's body goes in DATA frames, which bytes.sent counts as the server received them.
TEST(sim_h2_hostile, a_post_body_is_counted_in_its_data_frames) {
  server_script server;
  std::vector<std::string> args = load_args(500, "1s", 2, "1s");
  args.insert(args.end(), {"-m", "POST", "--body", std::string(100, 'x')});
  const tapped_run t = run_tapped(args, server);
  expect_sound(t.r, std::chrono::seconds(1), std::chrono::seconds(1));
  const std::uint64_t planned = number(t.r.doc["schedule"]["planned"]);
  EXPECT_EQ(number(t.r.doc["outcomes"]["ok"]), planned);
  EXPECT_EQ(t.tap->total(&wire::data_frames), planned);
  expect_bytes(t, planned * response_bytes(server.body_bytes));
}

// RST_STREAM(INTERNAL_ERROR) on a fifth of the streams: each is one socket error h2_rst, named
// in protocol.h2.rst_codes, never retried; the others are ok.
TEST(sim_h2_hostile, reset_streams_are_socket_errors_once_each) {
  server_script server;
  server.shares[static_cast<std::size_t>(fate::stream_reset)] = 0.2;
  const tapped_run t = run_tapped(load_args(500, "1s", 2, "1s"), server);
  const cli_result& r = t.r;
  const simulation& sim = *r.sim;
  expect_sound(r, std::chrono::seconds(1), std::chrono::seconds(1));
  const std::uint64_t planned = number(r.doc["schedule"]["planned"]);
  const std::uint64_t reset = met(sim, fate::stream_reset);
  EXPECT_GT(reset, planned / 10);
  EXPECT_EQ(nonzero_errors(r.doc), (std::map<std::string, std::uint64_t>{{"h2_rst", reset}}));
  EXPECT_EQ(r.doc["protocol"]["h2"]["rst_codes"], json({{"INTERNAL_ERROR", reset}}));
  EXPECT_EQ(number(r.doc["outcomes"]["ok"]), answered(sim));
  EXPECT_EQ(answered(sim) + reset, planned);
  EXPECT_EQ(t.tap->total(&wire::streams), planned);
  EXPECT_EQ(sim.sent().size(), planned);
  expect_bytes(t, answered(sim) * response_bytes(server.body_bytes) + reset * rst_frame_bytes);
}

// What GOAWAY left, by the GOAWAY's own terms: on each connection the server took its first
// `after` requests (its log is in stream order) and left every other stream the client opened
// (the wire). The scripted server still logs and answers streams that reach it in the same read
// as the request that triggered its GOAWAY (nghttp2 refuses new streams only once the GOAWAY is
// sent); the client rightly treats those as unprocessed, so they count as left here.
struct goaway_count {
  std::set<std::uint64_t> taken;  // sim ids
  std::uint64_t goaways = 0;
  std::uint64_t abandoned = 0;
  std::uint64_t answered = 0;  // of the taken ones
};

goaway_count goaways_of(const tapped_run& t, std::uint32_t after) {
  goaway_count out;
  std::map<std::uint64_t, std::uint64_t> taken;
  for (const auto& s : t.r.sim->server().log()) {
    if (++taken[s.connection] > after) continue;
    out.taken.insert(s.sim_id);
    out.answered += s.answered ? 1 : 0;
  }
  for (const auto& [serial, w] : t.tap->wires()) {
    out.goaways += taken[serial] >= after ? 1 : 0;
    out.abandoned += w.streams - std::min<std::uint64_t>(taken[serial], after);
  }
  return out;
}

// No request the server took was sent again: of each request's attempts, the server took one.
void expect_each_taken_once(const simulation& sim, const std::set<std::uint64_t>& taken) {
  std::map<std::pair<std::uint32_t, std::uint64_t>, int> times;
  for (const auto& a : sim.sent()) {
    if (taken.count(a.sim_id)) times[{a.worker, a.t.index}]++;
  }
  for (const auto& f : sim.finals()) {
    if (f.outcome != record::outcome::ok) continue;
    EXPECT_EQ((times[{f.worker, f.t.index}]), 1) << "request " << f.t.index;
  }
}

// A server that sends GOAWAY with the 20th request of each connection and closes it 100 ms
// later. Its GOAWAY takes 5 ms to reach the client, and meanwhile the client opens a few
// streams more, which the GOAWAY leaves above its last stream.
server_script goaway_server() {
  server_script server;
  server.goaway_after = 20;
  server.close_after_goaway = milliseconds(100);
  return server;
}
constexpr milliseconds goaway_delay{5};

// GOAWAY on one connection (a stream sent again then waits for the next connection, where it
// is among the first): the streams above the GOAWAY's last stream are sent again once
// (protocol.h2.unprocessed counts them), nothing the server took is sent twice, and every
// request ends ok.
TEST(sim_h2_hostile, goaway_streams_are_sent_again_once) {
  const server_script server = goaway_server();
  const tapped_run t = run_tapped(load_args(500, "1s", 1, "1s"), server, goaway_delay);
  const cli_result& r = t.r;
  const simulation& sim = *r.sim;
  expect_sound(r, std::chrono::seconds(1), std::chrono::seconds(1));
  const std::uint64_t planned = number(r.doc["schedule"]["planned"]);
  const goaway_count g = goaways_of(t, 20);
  EXPECT_EQ(g.goaways, planned / 20);
  EXPECT_GT(g.abandoned, 0u);
  EXPECT_EQ(number(r.doc["protocol"]["h2"]["unprocessed"]), g.abandoned);
  EXPECT_TRUE(nonzero_errors(r.doc).empty());
  EXPECT_EQ(number(r.doc["outcomes"]["ok"]), planned);
  EXPECT_EQ(g.answered, planned);
  EXPECT_EQ(t.tap->total(&wire::streams), planned + g.abandoned);
  // Each connection took 20 requests at most: the client went on to a new one each time.
  EXPECT_EQ(number(r.doc["protocol"]["connections"]["h2"]), (planned + 19) / 20);
  EXPECT_EQ(sim.net().connections().size(), (planned + 19) / 20);
  expect_each_taken_once(sim, g.taken);
  expect_bytes(t, planned * response_bytes(server.body_bytes));
  // A resend is neither a first attempt nor a retry: every request had one first attempt.
  const json& a = r.doc["attempts"];
  EXPECT_EQ(number(a["first"]), planned);
  EXPECT_EQ(number(a["never_sent"]), 0u);
  EXPECT_EQ(number(a["resent"]), g.abandoned);
  EXPECT_EQ(number(a["retries"]), 0u);
  EXPECT_EQ(number(a["total"]), planned + g.abandoned);
}

// A server that refuses every stream: each request goes out, is refused, is sent again once
// (protocol.h2.unprocessed), is refused again, and that second refusal is final as an h2_rst
// socket error (REFUSED_STREAM is a reset; only a stream left above a GOAWAY counts as goaway).
TEST(sim_h2_hostile, a_second_refusal_is_a_reset) {
  server_script server;
  server.shares[static_cast<std::size_t>(fate::refused)] = 1;
  const tapped_run t = run_tapped(load_args(200, "1s", 2, "1s"), server);
  const cli_result& r = t.r;
  expect_sound(r, std::chrono::seconds(1), std::chrono::seconds(1));
  const std::uint64_t planned = number(r.doc["schedule"]["planned"]);
  EXPECT_EQ(nonzero_errors(r.doc), (std::map<std::string, std::uint64_t>{{"h2_rst", planned}}));
  EXPECT_EQ(r.doc["protocol"]["h2"]["rst_codes"], json({{"REFUSED_STREAM", planned}}));
  EXPECT_EQ(number(r.doc["protocol"]["h2"]["unprocessed"]), planned);
  EXPECT_EQ(t.tap->total(&wire::streams), 2 * planned);
  const json& a = r.doc["attempts"];
  EXPECT_EQ(number(a["first"]), planned);
  EXPECT_EQ(number(a["resent"]), planned);
  EXPECT_EQ(number(a["total"]), 2 * planned);
}

// The same with the generator held back 100 ms (50 requests' worth): more than 20 requests wait
// for the next connection, so some are left a second time, and that is final (socket error
// goaway). Each stream the server left is then exactly one of protocol.h2.unprocessed and
// socket_errors.goaway, and the hold-up shows in the send lag.
TEST(sim_h2_hostile, a_stream_left_twice_is_an_error_after_a_hold_up) {
  const server_script server = goaway_server();
  const std::vector<pause> held{{0, milliseconds(500), milliseconds(100)}};
  const tapped_run t = run_tapped(load_args(500, "1s", 1, "1s"), server, goaway_delay, held);
  const cli_result& r = t.r;
  const simulation& sim = *r.sim;
  expect_sound(r, std::chrono::seconds(1), std::chrono::seconds(1), {"send_lag_p99"});
  const std::uint64_t planned = number(r.doc["schedule"]["planned"]);
  const goaway_count g = goaways_of(t, 20);
  const std::uint64_t unprocessed = number(r.doc["protocol"]["h2"]["unprocessed"]);
  const std::uint64_t twice = number(r.doc["socket_errors"]["goaway"]);
  EXPECT_GT(twice, 0u);
  EXPECT_EQ(unprocessed + twice, g.abandoned);
  EXPECT_EQ(nonzero_errors(r.doc), (std::map<std::string, std::uint64_t>{{"goaway", twice}}));
  EXPECT_EQ(number(r.doc["outcomes"]["ok"]) + twice, planned);
  EXPECT_EQ(g.answered, number(r.doc["outcomes"]["ok"]));
  EXPECT_EQ(t.tap->total(&wire::streams), planned + g.abandoned - twice);
  expect_each_taken_once(sim, g.taken);
  // More than 20 requests waited for one connection: some was held back 20 requests' worth.
  const auto& latency = r.doc["latency"];
  EXPECT_GE(
      std::max(number(latency["send_lag"]["max_ns"]), number(latency["queue_wait"]["max_ns"])),
      static_cast<std::uint64_t>(nanoseconds(milliseconds(40)).count()));
  expect_bytes(t, g.answered * response_bytes(server.body_bytes));
}

// A zero initial stream window, never a WINDOW_UPDATE: a GET needs none and is answered.
TEST(sim_h2_hostile, a_zero_window_still_answers_a_get) {
  server_script server;
  server.zero_window = true;
  const tapped_run t = run_tapped(load_args(200, "500ms", 2, "300ms"), server);
  expect_sound(t.r, milliseconds(500), milliseconds(300));
  const std::uint64_t planned = number(t.r.doc["schedule"]["planned"]);
  EXPECT_EQ(planned, 100u);
  EXPECT_EQ(number(t.r.doc["outcomes"]["ok"]), planned);
  expect_bytes(t, planned * response_bytes(server.body_bytes));
}

// A POST can never send its body into a zero window: each one times out at exactly its
// deadline (checks.hpp), its stream cancelled by the client then, and the run ends on time.
TEST(sim_h2_hostile, a_zero_window_times_out_every_post) {
  server_script server;
  server.zero_window = true;
  std::vector<std::string> args = load_args(200, "1s", 2, "300ms");
  args.insert(args.end(), {"-m", "POST", "--body", "xyz"});
  const tapped_run t = run_tapped(args, server);
  expect_sound(t.r, std::chrono::seconds(1), milliseconds(300));
  const std::uint64_t planned = number(t.r.doc["schedule"]["planned"]);
  EXPECT_EQ(planned, 200u);
  EXPECT_EQ(number(t.r.doc["outcomes"]["timeout"]), planned);
  EXPECT_EQ(t.tap->total(&wire::data_frames), 0u);
  EXPECT_EQ(t.tap->total(&wire::streams), planned);
  EXPECT_EQ(t.tap->total(&wire::resets), planned);
  EXPECT_EQ(answered(*t.r.sim), 0u);
  expect_bytes(t, 0);
}

// A frame that breaks the protocol instead of an answer, for 4% of the requests: the broken
// connection's streams fail at once, once each, as h2_protocol (not at their deadline, not as a
// close), at the instant the frame reached the client (nothing holds the generator back here);
// the client reconnects and goes on.
void expect_broken_connections_fail_at_once(const tapped_run& t) {
  const cli_result& r = t.r;
  const simulation& sim = *r.sim;
  expect_sound(r, std::chrono::seconds(1), std::chrono::seconds(1));
  const std::uint64_t planned = number(r.doc["schedule"]["planned"]);
  std::map<std::uint64_t, nanoseconds> broke;  // connection: when the frame reached the client
  for (const auto& s : sim.server().log()) {
    if (s.what != fate::malformed) continue;
    const connection& c = *sim.net().connections()[s.connection - 1];
    broke[s.connection] = c.arrival_of(c.server_sent - 1);
  }
  ASSERT_GT(broke.size(), 3u);
  nanoseconds first_break = nanoseconds::max();
  for (const auto& [serial, at] : broke) first_break = std::min(first_break, at);
  std::uint64_t abandoned = 0;
  std::uint64_t ok_after = 0;
  for (const auto& f : sim.finals()) {
    const served_request* s = sim.server().find(f.sim_id);
    if (f.outcome == record::outcome::ok) {
      ok_after += f.t.intended > first_break ? 1 : 0;
      continue;
    }
    ++abandoned;
    EXPECT_TRUE(s == nullptr || !s->answered)
        << "request " << f.t.index << " failed, yet was answered";
    const auto it = broke.find(sim.attempt(f.sim_id)->connection);
    ASSERT_NE(it, broke.end()) << "request " << f.t.index << " failed on a connection nobody broke";
    EXPECT_EQ(f.at, it->second) << "request " << f.t.index << " did not fail as the frame came";
  }
  EXPECT_EQ(nonzero_errors(r.doc),
            (std::map<std::string, std::uint64_t>{{"h2_protocol", abandoned}}));
  EXPECT_EQ(number(r.doc["outcomes"]["timeout"]), 0u);
  EXPECT_EQ(number(r.doc["outcomes"]["ok"]), answered(sim));
  EXPECT_EQ(answered(sim) + abandoned, planned);
  EXPECT_GT(abandoned, broke.size());  // streams in flight beside the one the frame replaced
  EXPECT_GT(ok_after, 0u);
  EXPECT_GE(number(r.doc["protocol"]["connections"]["h2"]), broke.size());
  expect_bytes(t, answered(sim) * response_bytes(sim.settings().server.body_bytes));
}

// DATA on stream 0, the connection left open by the server.
TEST(sim_h2_hostile, data_on_stream_0_fails_its_connection_at_once) {
  server_script server;
  server.shares[static_cast<std::size_t>(fate::malformed)] = 0.04;
  server.service.a = milliseconds(5);  // streams in flight when the frame comes
  expect_broken_connections_fail_at_once(run_tapped(load_args(500, "1s", 2, "1s"), server));
}

// A SETTINGS frame whose length is not a multiple of 6, the connection closed 100 ms later.
TEST(sim_h2_hostile, a_bad_settings_length_fails_its_connection_at_once) {
  server_script server;
  server.shares[static_cast<std::size_t>(fate::malformed)] = 0.04;
  server.service.a = milliseconds(5);
  server.malformed_frame =
      std::string("\x00\x00\x05\x04\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00", 14);
  server.close_after_break = milliseconds(100);
  expect_broken_connections_fail_at_once(run_tapped(load_args(500, "1s", 2, "1s"), server));
}

// SETTINGS_MAX_CONCURRENT_STREAMS 1, answers 3 ms late, a request every 2 ms: the client never
// opens a second stream at once; the others wait in its queue, and every one ends ok.
TEST(sim_h2_hostile, one_stream_at_a_time_and_the_rest_queue) {
  server_script server;
  server.max_streams = 1;
  server.service.a = milliseconds(3);
  const tapped_run t = run_tapped(load_args(500, "500ms", 1, "2s"), server);
  const cli_result& r = t.r;
  const simulation& sim = *r.sim;
  expect_sound(r, milliseconds(500), std::chrono::seconds(2), {"connection_cap"});
  const std::uint64_t planned = number(r.doc["schedule"]["planned"]);
  std::vector<std::pair<nanoseconds, nanoseconds>> client;
  std::vector<std::pair<nanoseconds, nanoseconds>> server_side;
  std::vector<std::int64_t> queue_wait;
  for (const auto& f : sim.finals()) {
    client.emplace_back(f.t.sent, f.at);
    const served_request* s = sim.server().find(f.sim_id);
    ASSERT_TRUE(s && s->answered);
    server_side.emplace_back(s->read_at, s->answer_at);
    queue_wait.push_back((f.t.assigned - f.t.dispatched).count());
  }
  EXPECT_EQ(most_at_once(client), 1u);
  EXPECT_EQ(most_at_once(server_side), 1u);
  EXPECT_EQ(number(r.doc["outcomes"]["ok"]), planned);
  EXPECT_EQ(answered(sim), planned);
  EXPECT_EQ(t.tap->total(&wire::streams), planned);
  hdr::histogram h(record::latency_params());
  for (const auto v : queue_wait) h.record(v);
  const auto p99 = number(r.doc["latency"]["queue_wait"]["percentiles_ns"]["99"]);
  EXPECT_EQ(p99, static_cast<std::uint64_t>(h.value_at_percentile(99)));
  EXPECT_GT(p99, static_cast<std::uint64_t>(nanoseconds(milliseconds(50)).count()));
  expect_bytes(t, planned * response_bytes(server.body_bytes));
}

}  // namespace
}  // namespace punctual::sim::h2_hostile_cases
