#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

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

bool zeroed_counts::release() noexcept {
  // MADV_DONTNEED on a private anonymous mapping: the next read of a page gives zeros again.
  return size_ != 0 && mapped(size_) && madvise(data_, bytes_of(size_), MADV_DONTNEED) == 0;
}

// A page counts once written: /proc/self/pagemap marks it present and mapped by this process
// alone. A page only ever read maps the kernel's shared zero page, which costs nothing (and which
// mincore would count as resident).
std::size_t zeroed_counts::resident_bytes() const noexcept {
  if (size_ == 0) return 0;
  if (!mapped(size_)) return bytes_of(size_);
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const auto first = reinterpret_cast<std::uintptr_t>(data_) / page;
  const std::size_t pages = (bytes_of(size_) + page - 1) / page;
  std::vector<std::uint64_t> entries(pages);
  const int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return bytes_of(size_);
  const auto want = static_cast<ssize_t>(pages * sizeof(std::uint64_t));
  const bool read_all = pread(fd, entries.data(), static_cast<std::size_t>(want),
                              static_cast<off_t>(first * sizeof(std::uint64_t))) == want;
  close(fd);
  if (!read_all) return bytes_of(size_);
  constexpr std::uint64_t present = 1ULL << 63, exclusive = 1ULL << 56;
  std::size_t resident = 0;
  for (const std::uint64_t e : entries) resident += (e & present) && (e & exclusive) ? page : 0;
  return resident;
}

}  // namespace punctual::hdr
