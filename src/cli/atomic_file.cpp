#include "cli/atomic_file.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cli/command.hpp"

namespace punctual::cli {
namespace {

// The temporary file being written, for remove_pending_temp_file() in a signal handler.
char pending_temp[4096] = {};
std::atomic<bool> pending{false};

struct pending_scope {
  explicit pending_scope(const std::string& temp) {
    if (temp.size() < sizeof pending_temp) {
      std::memcpy(pending_temp, temp.c_str(), temp.size() + 1);
      pending.store(true);
    }
  }
  ~pending_scope() { pending.store(false); }
  pending_scope(const pending_scope&) = delete;
  pending_scope& operator=(const pending_scope&) = delete;
};

}  // namespace

void remove_pending_temp_file() noexcept {
  if (pending.load()) ::unlink(pending_temp);
}

// Temp file beside the target, then rename: readers never see half a file, and nothing is
// left behind when anything fails.
void write_file_atomically(const std::string& path, const std::string& text) {
  std::string temp = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) throw run_error(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
  const pending_scope scope(temp);
  // mkstemp creates 0600; give the log the permissions a plain create would have.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  bool ok = ::fchmod(fd, 0666 & ~mask) == 0;
  std::size_t written = 0;
  while (ok && written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) written += static_cast<std::size_t>(n);
  }
  const int saved = ok ? 0 : errno;
  ok = ::close(fd) == 0 && ok;
  if (ok && std::rename(temp.c_str(), path.c_str()) == 0) return;
  const int error = saved != 0 ? saved : errno;
  std::remove(temp.c_str());
  throw run_error(fmt::format("cannot write '{}': {}", path, std::strerror(error)));
}

}  // namespace punctual::cli
