// Writes a whole file through a temporary beside it and a rename: readers never see half a
// file, and nothing is left behind when anything fails (including two writers of one path).
#pragma once

#include <string>

namespace punctual::cli {

// Throws run_error with one line naming the path and the reason.
void write_file_atomically(const std::string& path, const std::string& text);

// Async-signal-safe: removes the temporary file of a write in progress (before _exit).
void remove_pending_temp_file() noexcept;

}  // namespace punctual::cli
