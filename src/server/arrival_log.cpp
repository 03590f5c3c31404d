#include "server/arrival_log.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace punctual::server {

arrival_recorder::arrival_recorder(bool enabled) : enabled_(enabled) {
  if (enabled_) add_chunk();
}

void arrival_recorder::add_chunk() {
  chunks_.push_back(std::make_unique<arrival_entry[]>(chunk_entries));
  used_ = 0;
}

std::size_t arrival_recorder::size() const {
  if (chunks_.empty()) return 0;
  return (chunks_.size() - 1) * chunk_entries + used_;
}

void arrival_recorder::append_to(std::vector<arrival_entry>& out) const {
  for (std::size_t c = 0; c < chunks_.size(); ++c) {
    const std::size_t n = c + 1 == chunks_.size() ? used_ : chunk_entries;
    out.insert(out.end(), chunks_[c].get(), chunks_[c].get() + n);
  }
}

void write_arrival_log(const std::string& path, std::vector<arrival_entry> entries) {
  std::stable_sort(entries.begin(), entries.end(),
                   [](const arrival_entry& a, const arrival_entry& b) {
                     return a.arrival_mono_ns < b.arrival_mono_ns;
                   });
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
  std::fputs("# arrival_mono_ns answered_mono_ns\n", f);
  for (const arrival_entry& e : entries) {
    std::fprintf(f, "%lld %lld\n", static_cast<long long>(e.arrival_mono_ns),
                 static_cast<long long>(e.answered_mono_ns));
  }
  const bool failed = std::ferror(f) != 0;
  if (std::fclose(f) != 0 || failed) throw std::runtime_error("cannot write " + path);
}

}  // namespace punctual::server
