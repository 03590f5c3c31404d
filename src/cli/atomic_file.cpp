#include "cli/atomic_file.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "cli/command.hpp"

namespace punctual::cli {
namespace {

// The temporary file being written, for remove_pending_temp_file() in a signal handler.
char pending_temp[4096] = {};
std::atomic<bool> pending{false};

void set_pending(const std::string& temp) noexcept {
  if (temp.size() < sizeof pending_temp) {
    std::memcpy(pending_temp, temp.c_str(), temp.size() + 1);
    pending.store(true);
  }
}

struct pending_scope {
  explicit pending_scope(const std::string& temp) { set_pending(temp); }
  ~pending_scope() { pending.store(false); }
  pending_scope(const pending_scope&) = delete;
  pending_scope& operator=(const pending_scope&) = delete;
};

}  // namespace

void remove_pending_temp_file() noexcept {
  if (pending.load()) ::unlink(pending_temp);
}

namespace {

// A temporary beside `path`, with the permissions a plain create would give; -1 on failure.
int open_temp(const std::string& path, std::string& temp) {
  temp = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) return -1;
  // mkstemp creates 0600; give the file the permissions a plain create would have.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0) {
    const int saved = errno;
    ::close(fd);
    std::remove(temp.c_str());
    errno = saved;
    return -1;
  }
  return fd;
}

// 0, or the errno of the failed write.
int write_all(int fd, std::string_view text) noexcept {
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    written += static_cast<std::size_t>(n);
  }
  return 0;
}

// Closes the temporary and renames it into place; on failure removes it and throws.
void close_and_rename(int fd, const std::string& temp, const std::string& path, int error) {
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && std::rename(temp.c_str(), path.c_str()) == 0) return;
  if (error == 0) error = errno;
  std::remove(temp.c_str());
  throw run_error(fmt::format("cannot write '{}': {}", path, std::strerror(error)));
}

}  // namespace

// Temp file beside the target, then rename: readers never see half a file, and nothing is
// left behind when anything fails.
void write_file_atomically(const std::string& path, const std::string& text) {
  std::string temp;
  const int fd = open_temp(path, temp);
  if (fd < 0) throw run_error(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
  const pending_scope scope(temp);
  close_and_rename(fd, temp, path, write_all(fd, text));
}

atomic_file_writer::atomic_file_writer(std::string path) : path_(std::move(path)) {
  fd_ = open_temp(path_, temp_);
  if (fd_ < 0) throw run_error(fmt::format("cannot write '{}': {}", path_, std::strerror(errno)));
  set_pending(temp_);
}

atomic_file_writer::~atomic_file_writer() {
  if (fd_ < 0) return;
  pending.store(false);
  ::close(fd_);
  std::remove(temp_.c_str());
}

void atomic_file_writer::write(std::string_view text) noexcept {
  if (error_ == 0) error_ = write_all(fd_, text);
}

void atomic_file_writer::commit() {
  const int fd = std::exchange(fd_, -1);
  const pending_scope scope(temp_);  // until renamed or removed
  close_and_rename(fd, temp_, path_, error_);
}

}  // namespace punctual::cli
