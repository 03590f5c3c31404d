// A pool of memory blocks for one worker's HTTP/2 sessions (nghttp2_mem), so that streams,
// header blocks and frame buffers reuse blocks freed earlier and the steady state asks the
// system allocator for nothing. One thread uses it at a time; it takes no locks. It must outlive
// every session that uses it.
#pragma once

#include <nghttp2/nghttp2.h>

#include <array>
#include <cstddef>
#include <cstdint>

namespace punctual::http {

class h2_memory {
 public:
  h2_memory() noexcept;
  ~h2_memory();
  h2_memory(const h2_memory&) = delete;
  h2_memory& operator=(const h2_memory&) = delete;

  void* allocate(std::size_t size) noexcept;
  void* reallocate(void* p, std::size_t size) noexcept;
  void release(void* p) noexcept;

  // The allocator to hand nghttp2 (it points into this pool).
  nghttp2_mem* nghttp2() noexcept { return &mem_; }

 private:
  // Blocks of 32 << k bytes for k < class_count; larger ones come from the system each time.
  static constexpr std::size_t class_count = 13;  // up to 128 KiB
  struct header;
  std::array<header*, class_count> free_{};
  header* all_ = nullptr;  // every pooled block, to give back when the pool goes
  nghttp2_mem mem_{};
};

}  // namespace punctual::http
