#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "platform/sanitizers.hpp"
#include "punctual/histogram/histogram.hpp"

namespace punctual::hdr {
namespace {

// Blocks this large are mapped from the kernel here rather than left to malloc. glibc's calloc
// maps them too, but only while its dynamic mmap threshold stays below their size: once such a
// block is freed the threshold moves above it, later ones come from the heap, and calloc writes
// every zero, so a histogram costs all its ~270 KB of pages at once (a fraction of a millisecond
// of page faults each: docs/design.md, "Host measurements"). The sanitizer builds keep calloc, so
// that ASan still sees every slot.
#if defined(PUNCTUAL_SANITIZED)
constexpr bool map_large_blocks = false;
#else
constexpr bool map_large_blocks = true;
#endif
constexpr std::size_t map_at_least = 64 * 1024;  // bytes

std::size_t bytes_of(std::size_t size) noexcept {
  return size * sizeof(std::int64_t);
}
bool mapped(std::size_t size) noexcept {
  return map_large_blocks && bytes_of(size) >= map_at_least;
}

}  // namespace

zeroed_counts::zeroed_counts(std::size_t size) : size_(size) {
  if (size == 0) return;
  if (mapped(size)) {
    // Anonymous pages read as zero and are backed by memory only once written.
    void* p =
        mmap(nullptr, bytes_of(size), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    data_ = static_cast<std::int64_t*>(p);
    return;
  }
  // calloc's memory holds zero-valued int64 objects (C++20 implicit object creation).
  data_ = static_cast<std::int64_t*>(std::calloc(size, sizeof(std::int64_t)));
  if (data_ == nullptr) throw std::bad_alloc();
}

zeroed_counts::zeroed_counts(const zeroed_counts& other) : zeroed_counts(other.size_) {
  if (size_ != 0) std::memcpy(data_, other.data_, size_ * sizeof(std::int64_t));
}

zeroed_counts::zeroed_counts(zeroed_counts&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

zeroed_counts& zeroed_counts::operator=(zeroed_counts other) noexcept {
  std::swap(data_, other.data_);
  std::swap(size_, other.size_);
  return *this;
}

zeroed_counts::~zeroed_counts() {
  if (data_ == nullptr) return;
  if (mapped(size_)) {
    munmap(data_, bytes_of(size_));
  } else {
    std::free(data_);
  }
}

void zeroed_counts::clear(std::size_t first, std::size_t last) noexcept {
  if (first > last || last >= size_) return;
  std::memset(data_ + first, 0, (last - first + 1) * sizeof(std::int64_t));
}

}  // namespace punctual::hdr
