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

namespace {

// The tag as one whitespace-free word (write_arrival_log says how).
void write_tag(std::FILE* f, std::string_view tag) {
  if (tag.empty()) {
    std::fputs(" -", f);
    return;
  }
  std::fputc(' ', f);
  for (const char c : tag) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f || c == '%') {
      std::fprintf(f, "%%%02X", u);
    } else {
      std::fputc(c, f);
    }
  }
}

}  // namespace

void write_arrival_log(const std::string& path, std::vector<arrival_entry> entries,
                       std::string_view id_header) {
  std::stable_sort(entries.begin(), entries.end(),
                   [](const arrival_entry& a, const arrival_entry& b) {
                     return a.arrival_mono_ns < b.arrival_mono_ns;
                   });
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
  std::fputs("# arrival_mono_ns answered_mono_ns", f);
  if (!id_header.empty())
    std::fprintf(f, " %.*s", static_cast<int>(id_header.size()), id_header.data());
  std::fputc('\n', f);
  for (const arrival_entry& e : entries) {
    std::fprintf(f, "%lld %lld", static_cast<long long>(e.arrival_mono_ns),
                 static_cast<long long>(e.answered_mono_ns));
    if (!id_header.empty()) write_tag(f, e.tag.view());
    std::fputc('\n', f);
  }
  const bool failed = std::ferror(f) != 0;
  if (std::fclose(f) != 0 || failed) throw std::runtime_error("cannot write " + path);
}

}  // namespace punctual::server
