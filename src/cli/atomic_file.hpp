// Writes a whole file through a temporary beside it and a rename: readers never see half a
// file, and nothing is left behind when anything fails (including two writers of one path).
#pragma once

#include <string>
#include <string_view>

namespace punctual::cli {

// Throws run_error with one line naming the path and the reason.
void write_file_atomically(const std::string& path, const std::string& text);

// The same, piece by piece: a long run's .hlog goes to disk as each interval ends instead of
// waiting in memory for the end (an hour of it is ~35 MB). The temporary is renamed into place
// by commit(); a writer destroyed without commit() removes it.
class atomic_file_writer {
 public:
  explicit atomic_file_writer(std::string path);  // throws run_error
  ~atomic_file_writer();
  atomic_file_writer(const atomic_file_writer&) = delete;
  atomic_file_writer& operator=(const atomic_file_writer&) = delete;

  // Never throws (it runs on the thread collecting intervals): the first failure is kept and
  // reported by commit().
  void write(std::string_view text) noexcept;
  void commit();  // throws run_error

 private:
  std::string path_;
  std::string temp_;
  int fd_ = -1;
  int error_ = 0;
};

// Async-signal-safe: removes the temporary file of a write in progress (before _exit).
void remove_pending_temp_file() noexcept;

}  // namespace punctual::cli
