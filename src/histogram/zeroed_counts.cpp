#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "punctual/histogram/histogram.hpp"

namespace punctual::hdr {

zeroed_counts::zeroed_counts(std::size_t size) : size_(size) {
  if (size == 0) return;
  // calloc's memory holds zero-valued int64 objects (C++20 implicit object creation); for a
  // large block it comes straight from the kernel's zeroed pages, which stay unmapped until used.
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
  std::free(data_);
}

void zeroed_counts::clear(std::size_t first, std::size_t last) noexcept {
  if (first > last || last >= size_) return;
  std::memset(data_ + first, 0, (last - first + 1) * sizeof(std::int64_t));
}

}  // namespace punctual::hdr
