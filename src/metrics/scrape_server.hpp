// The scrape endpoint: a tiny HTTP/1.1 server for GET /metrics, served from the thread that
// collects the run (never a worker's). Non-blocking and polled: poll() accepts, reads and
// writes what the sockets take at once and returns; a slow scraper gets the rest on later
// polls, so it can never hold up the collector.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/series.hpp"

namespace punctual::metrics {

struct listen_address {
  std::string host;  // numeric or a name; 127.0.0.1 when --metrics-listen gave only :PORT
  std::uint16_t port = 0;
};

// "HOST:PORT", ":PORT", "[::1]:PORT". Nothing when malformed (the port must be 0..65535; 0
// lets the kernel choose).
std::optional<listen_address> parse_listen_address(std::string_view text);

class scrape_server final : public sink {
 public:
  // Binds and listens; throws std::runtime_error with a one-line reason.
  explicit scrape_server(const listen_address& where);
  ~scrape_server() override;
  scrape_server(const scrape_server&) = delete;
  scrape_server& operator=(const scrape_server&) = delete;

  // The snapshot rendered once here, and served to every scrape until the next.
  void publish(const snapshot& s) override;
  void finish(const snapshot& s) override { publish(s); }

  // Serves what can be served now without waiting.
  void poll();
  std::uint16_t port() const noexcept { return port_; }
  // Whether it listens on a loopback address only.
  bool loopback() const noexcept { return loopback_; }
  std::string address() const;
  // Scrapes answered with the metrics so far.
  std::uint64_t scrapes() const noexcept { return scrapes_; }

 private:
  struct client {
    int fd = -1;
    std::string request;
    std::shared_ptr<const std::string> response;  // the head and body, once the request is read
    std::size_t written = 0;
    std::chrono::steady_clock::time_point since;
  };
  void accept_clients();
  bool serve(client& c);  // false: done with it (close)
  std::shared_ptr<const std::string> answer(std::string_view request);

  int fd_ = -1;
  std::uint16_t port_ = 0;
  bool loopback_ = true;
  std::string host_;
  std::shared_ptr<const std::string> body_;
  std::vector<client> clients_;
  std::uint64_t scrapes_ = 0;
};

}  // namespace punctual::metrics
