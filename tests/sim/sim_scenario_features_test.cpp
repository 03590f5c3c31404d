// Hybrid scenarios' per-user features in the simulation: expect_body_contains, csv rows and
// captures reaching the requests, a cookie jar per user and a connection per user. Each is
// judged request by request against what the scripted server received (each request's head)
// and what it answered. A connection per user over real TLS stays in test_scenario_features.py.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "checks.hpp"
#include "cli_run.hpp"
#include "sim_setups.hpp"

namespace punctual::sim::scenario_features_cases {
namespace {

using json = nlohmann::ordered_json;

// Runs scenario `text` (written as `name` in `dir`) and holds the run to every rule.
cli_result run_scenario(const scratch_dir& dir, const std::string& name, const std::string& text,
                        const surroundings& around = {}) {
  cli_result r = run_cli({"--scenario", dir.write(name, text)}, around);
  const auto problems = check_run(*r.sim);
  EXPECT_TRUE(problems.empty()) << describe(problems);
  return r;
}

// The request line's target of an HTTP/1.1 head ("/login?u=ann").
std::string path_of(std::string_view head) {
  const std::size_t from = head.find(' ') + 1;
  return std::string(head.substr(from, head.find(' ', from) - from));
}

// The value of header `name` (as the engine writes it) in a head, or empty.
std::string header_of(std::string_view head, std::string_view name) {
  const std::string key = "\r\n" + std::string(name) + ": ";
  const std::size_t at = head.find(key);
  if (at == std::string_view::npos) return {};
  const std::size_t from = at + key.size();
  return std::string(head.substr(from, head.find("\r\n", from) - from));
}

// A 200 with these extra header lines and this body.
std::string answer_200(const std::string& headers, const std::string& body) {
  return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + headers +
         "\r\n" + body;
}

// What the server did with each user's steps: the head it read, by user and step.
using heads_by_user = std::map<std::uint64_t, std::map<std::uint16_t, std::string>>;

heads_by_user heads_of(const simulation& sim) {
  heads_by_user out;
  for (const auto& f : sim.finals()) {
    if (const served_request* s = sim.server().find(f.sim_id)) out[f.t.index][f.t.step] = s->head;
  }
  return out;
}

std::uint64_t number(const json& j) {
  return j.get<std::uint64_t>();
}

const char* const body_scenario = R"(target: http://127.0.0.1:8080
phases:
  - {duration: 1s, arrival_rate: 20}
on_error: continue
graceful_stop: 5s
scenarios:
  - name: s
    steps:
      - {name: good, path: /, expect_body_contains: "ok"}
      - {name: bad, path: /, expect_body_contains: "not in the body"}
)";

// The server's body is "ok\n" and filler, so every good step is ok and every bad one an
// http_error counted as a body failure, its status 200 notwithstanding.
TEST(sim_scenario_features, expect_body_contains_judges_the_body) {
  const scratch_dir dir("scenario-body");
  const cli_result r = run_scenario(dir, "body.yaml", body_scenario);
  const json& good = r.doc["by_name"]["s.good"];
  const json& bad = r.doc["by_name"]["s.bad"];
  const std::uint64_t planned = number(good["planned"]);
  EXPECT_EQ(planned, 20u);
  EXPECT_EQ(number(bad["planned"]), planned);
  EXPECT_EQ(number(good["outcomes"]["ok"]), planned);
  EXPECT_EQ(number(bad["outcomes"]["http_error"]), planned);
  EXPECT_EQ(r.doc["http_errors"], json({{"status", 0}, {"body", planned}, {"capture", 0}}));
  EXPECT_EQ(r.doc["status_counts"], json({{"200", 2 * planned}}));
  EXPECT_EQ(number(r.doc["sessions"]["s"]["outcomes"]["http_error"]),
            number(r.doc["sessions"]["s"]["planned"]));
  // Request by request: each step was answered 200 with serve's body, which holds "ok" and not
  // the other text; the good step is ok and the bad one an http_error, whatever else happened.
  for (const auto& f : r.sim->finals()) {
    const served_request* s = r.sim->server().find(f.sim_id);
    ASSERT_TRUE(s && s->answered && s->status == 200) << "user " << f.t.index;
    EXPECT_EQ(f.outcome, f.t.step == 0 ? record::outcome::ok : record::outcome::http_error)
        << "user " << f.t.index << " step " << f.t.step;
  }
  EXPECT_EQ(r.sim->server().log().size(), 2 * planned);
}

const char* const capture_scenario = R"(target: http://127.0.0.1:8080
phases:
  - {duration: 1s, arrival_rate: 30}
csv: {file: users.csv}
scenarios:
  - name: shop
    steps:
      - name: login
        method: POST
        path: /login?u={{user}}
        body: '{"user": "{{user}}", "password": "{{password}}"}'
        capture:
          token: {json: /session/token}
          htoken: {header: X-Token}
      - name: orders
        path: /orders?u={{user}}&t={{token}}&h={{htoken}}
  - name: broken
    steps:
      - name: login
        path: /login?u={{user}}
        capture: {missing: {header: X-Missing}}
      - name: after
        path: /after?m={{missing}}
)";
const std::vector<std::string> csv_users{"ann", "bob", "cy"};

// A login answers a token of its own (named by the request's x-sim-id), in its JSON body and
// in a header; anything else a plain 200.
std::string login_answer(std::string_view head) {
  if (!path_of(head).starts_with("/login")) return answer_200("", "ok\n");
  const std::string id = header_of(head, "x-sim-id");
  return answer_200("X-Token: h-" + id + "\r\nContent-Type: application/json\r\n",
                    R"({"session": {"token": "t-)" + id + R"("}})");
}

// csv rows reach the requests (user i takes row i mod 3, into its path and its body), the
// tokens one login response gave, from its JSON body and a header, reach that user's next step,
// and a capture that finds nothing fails its step (http_errors.capture) and, under on_error
// abort, skips the rest, which never reaches the server.
TEST(sim_scenario_features, csv_rows_and_captures_reach_the_requests) {
  const scratch_dir dir("scenario-capture");
  std::string csv = "user,password\n";
  for (const auto& u : csv_users) csv += u + ",pw-" + u + "\n";
  dir.write("users.csv", csv);
  surroundings around;
  around.server.answer = login_answer;
  const cli_result r = run_scenario(dir, "capture.yaml", capture_scenario, around);
  const json& names = r.doc["by_name"];
  const std::uint64_t shops = number(r.doc["sessions"]["shop"]["planned"]);
  const std::uint64_t broken = number(r.doc["sessions"]["broken"]["planned"]);
  EXPECT_EQ(shops + broken, 30u);
  EXPECT_GT(shops, 0u);
  EXPECT_GT(broken, 0u);
  std::uint64_t orders = 0;
  for (const auto& [user, heads] : heads_of(*r.sim)) {
    const std::string& name = csv_users[user % csv_users.size()];
    const std::string& login = heads.at(0);
    EXPECT_EQ(path_of(login), "/login?u=" + name) << "user " << user;
    if (login.starts_with("GET")) {  // the broken scenario: its next step never went out
      EXPECT_EQ(heads.count(1), 0u) << "user " << user << " sent a step after a failed capture";
      continue;
    }
    const std::string body = R"({"user": ")" + name + R"(", "password": "pw-)" + name + R"("})";
    EXPECT_EQ(header_of(login, "Content-Length"), std::to_string(body.size())) << "user " << user;
    const std::string id = header_of(login, "x-sim-id");
    ASSERT_EQ(heads.count(1), 1u) << "user " << user;
    EXPECT_EQ(path_of(heads.at(1)), "/orders?u=" + name + "&t=t-" + id + "&h=h-" + id)
        << "user " << user;
    ++orders;
  }
  EXPECT_EQ(orders, shops);
  EXPECT_EQ(number(names["shop.orders"]["planned"]), shops);
  EXPECT_EQ(number(names["shop.orders"]["outcomes"]["ok"]), shops);
  EXPECT_EQ(number(names["broken.login"]["outcomes"]["http_error"]), broken);
  EXPECT_EQ(number(names["broken.after"]["outcomes"]["skipped"]), broken);
  EXPECT_EQ(r.doc["sessions"]["broken"]["failed_at"],
            json({{"broken.login", broken}, {"broken.after", 0}}));
  EXPECT_EQ(r.doc["sessions"]["shop"]["failed_at"], json({{"shop.login", 0}, {"shop.orders", 0}}));
  std::vector<std::string> failed_lines;
  for (std::size_t at = r.text.find("failed at:"); at != std::string::npos;
       at = r.text.find("failed at:", at + 1)) {
    failed_lines.push_back(r.text.substr(at, r.text.find('\n', at) - at));
  }
  EXPECT_EQ(failed_lines,
            std::vector<std::string>{fmt::format("failed at: broken.login {}", broken)});
  for (const auto& s : r.sim->server().log()) {
    EXPECT_FALSE(path_of(s.head).starts_with("/after")) << s.head;
  }
  EXPECT_EQ(r.doc["http_errors"], json({{"status", 0}, {"body", 0}, {"capture", broken}}));
}

const char* const cookie_scenario = R"(target: http://127.0.0.1:8080
phases:
  - {{duration: 1s, arrival_rate: {}}}
cookies: {}
scenarios:
  - name: c
    steps:
      - name: login
        path: /cookie-login
        capture: {{sid: {{header: X-Sid}}}}
      - name: whoami
        path: /whoami
        capture: {{seen: {{json: /cookie}}}}
      - name: check
        path: /check?seen={{{{seen}}}}&sid={{{{sid}}}}
)";

// A login sets a session cookie of its own (named by the request's x-sim-id) and names it in a
// header too; /whoami says, as JSON, which Cookie header it was sent.
std::string cookie_answer(std::string_view head) {
  const std::string path = path_of(head);
  if (path == "/cookie-login") {
    const std::string id = header_of(head, "x-sim-id");
    return answer_200("Set-Cookie: sid=" + id + "; Path=/; HttpOnly\r\nX-Sid: " + id + "\r\n",
                      "ok\n");
  }
  if (path == "/whoami") {
    return answer_200("", R"({"cookie": ")" + header_of(head, "Cookie") + R"("})");
  }
  return answer_200("", "ok\n");
}

// A cookie a user's login sets is what that user's later requests carry (its own, never another
// user's: each login's cookie is its own), and `cookies: false` carries none.
TEST(sim_scenario_features, each_user_carries_its_own_cookies) {
  const scratch_dir dir("scenario-cookies");
  surroundings around;
  around.server.answer = cookie_answer;
  for (const bool kept : {true, false}) {
    const int rate = kept ? 20 : 5;
    const std::string text =
        fmt::format(fmt::runtime(cookie_scenario), rate, kept ? "true" : "false");
    const cli_result r =
        run_scenario(dir, kept ? "cookies-true.yaml" : "cookies-false.yaml", text, around);
    EXPECT_EQ(number(r.doc["by_name"]["c.check"]["planned"]), static_cast<std::uint64_t>(rate));
    EXPECT_EQ(number(r.doc["by_name"]["c.check"]["outcomes"]["ok"]),
              static_cast<std::uint64_t>(rate));
    std::uint64_t checks = 0;
    for (const auto& [user, heads] : heads_of(*r.sim)) {
      ASSERT_EQ(heads.size(), 3u) << "user " << user;
      const std::string sid = header_of(heads.at(0), "x-sim-id");
      const std::string cookie = kept ? "sid=" + sid : "";
      EXPECT_EQ(header_of(heads.at(0), "Cookie"), "")
          << "user " << user << ": a new user's jar is empty";
      EXPECT_EQ(header_of(heads.at(1), "Cookie"), cookie) << "user " << user;
      EXPECT_EQ(header_of(heads.at(2), "Cookie"), cookie) << "user " << user;
      EXPECT_EQ(path_of(heads.at(2)), "/check?seen=" + cookie + "&sid=" + sid) << "user " << user;
      ++checks;
    }
    EXPECT_EQ(checks, static_cast<std::uint64_t>(rate));
  }
}

const char* const per_user_scenario = R"(target: http://127.0.0.1:8080
phases:
  - {duration: 1s, arrival_rate: 20}
scenarios:
  - name: u
    steps:
      - {name: first, path: /, think: 10ms}
      - {name: second, path: /x}
)";

// connection: per_user (the default): each user opens a connection of its own, its first step
// pays the connect (connect_time has one sample per user), its second reuses it, and the server
// accepts one connection per user and one per thread more (the check that the target answers,
// before the start).
TEST(sim_scenario_features, each_user_has_a_connection_of_its_own) {
  const scratch_dir dir("scenario-per-user");
  const cli_result r = run_scenario(dir, "per-user.yaml", per_user_scenario);
  const simulation& sim = *r.sim;
  const std::uint64_t users = number(r.doc["sessions"]["u"]["planned"]);
  EXPECT_EQ(users, 20u);
  EXPECT_EQ(number(r.doc["by_name"]["u.second"]["outcomes"]["ok"]), users);
  EXPECT_EQ(number(r.doc["latency"]["connect_time"]["count"]), users);
  EXPECT_EQ(sim.server().accepted(), users + number(r.doc["model"]["threads"]));
  EXPECT_EQ(r.doc["model"]["scenario"]["connection"], "per_user");
  EXPECT_NE(r.text.find("a connection per user"), std::string::npos) << r.text.substr(0, 400);
  std::map<std::uint64_t, std::set<std::uint64_t>> connections_of;  // by user
  std::set<std::uint64_t> used;
  for (const auto& f : sim.finals()) {
    const sent_attempt* a = sim.attempt(f.sim_id);
    ASSERT_TRUE(a) << "user " << f.t.index << " step " << f.t.step << " never went out";
    EXPECT_EQ(f.t.had_to_connect, f.t.step == 0) << "user " << f.t.index << " step " << f.t.step;
    connections_of[f.t.index].insert(a->connection);
    used.insert(a->connection);
  }
  for (const auto& [user, serials] : connections_of) {
    EXPECT_EQ(serials.size(), 1u) << "user " << user;
  }
  EXPECT_EQ(used.size(), users);  // no two users shared one
}

}  // namespace
}  // namespace punctual::sim::scenario_features_cases
