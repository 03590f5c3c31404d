#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
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

std::size_t page_bytes() noexcept {
  static const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// The page policy's state, touched only when a block is mapped, freed or released: never per
// recorded value.
std::atomic<page_policy> policy{page_policy::give_back};
struct block_pool {
  std::mutex m;
  std::vector<std::int64_t*> blocks;  // freed blocks of `slots` slots, their pages as left
  std::size_t slots = 0;
  std::size_t capacity = 0;
  int pagemap = -1;  // /proc/self/pagemap, opened once
};
block_pool& pool() {
  static auto* p = new block_pool;  // never destroyed: a histogram may outlive static destructors
  return *p;
}
int pagemap_fd() {
  auto& p = pool();
  const std::lock_guard lock(p.m);
  if (p.pagemap < 0) p.pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  return p.pagemap;
}

// Flags of a page's /proc/self/pagemap entry.
constexpr std::uint64_t page_present = 1ULL << 63, page_swapped = 1ULL << 62,
                        page_exclusive = 1ULL << 56;

// The pagemap entries of a block's pages, one per page; empty if they could not be read.
std::vector<std::uint64_t> page_entries(const std::int64_t* data, std::size_t size, int pagemap) {
  const std::size_t page = page_bytes();
  const std::size_t first = reinterpret_cast<std::uintptr_t>(data) / page;
  std::vector<std::uint64_t> entries((bytes_of(size) + page - 1) / page);
  const auto want = static_cast<ssize_t>(entries.size() * sizeof(std::uint64_t));
  if (pagemap < 0 || pread(pagemap, entries.data(), static_cast<std::size_t>(want),
                           static_cast<off_t>(first * sizeof(std::uint64_t))) != want) {
    entries.clear();
  }
  return entries;
}

// Zeroes every page of a block that may hold data: present, or swapped out (all of them when
// pagemap cannot be read). A page never touched reads zero already. A present page may also be
// the kernel's shared zero page (read, never written), which costs one fault here, and then is
// a page like the others.
void zero_pages_in_use(std::int64_t* data, std::size_t size) {
  const std::vector<std::uint64_t> entries = page_entries(data, size, pagemap_fd());
  if (entries.empty()) {
    std::memset(data, 0, bytes_of(size));
    return;
  }
  const std::size_t page = page_bytes(), bytes = bytes_of(size);
  auto* base = reinterpret_cast<unsigned char*>(data);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if ((entries[i] & (page_present | page_swapped)) == 0) continue;
    std::memset(base + i * page, 0, std::min(page, bytes - i * page));
  }
}

std::int64_t* take_pooled(std::size_t size) {
  if (policy.load(std::memory_order_relaxed) != page_policy::keep_and_zero) return nullptr;
  auto& p = pool();
  std::int64_t* block = nullptr;
  {
    const std::lock_guard lock(p.m);
    if (p.slots != size || p.blocks.empty()) return nullptr;
    block = p.blocks.back();
    p.blocks.pop_back();
  }
  zero_pages_in_use(block, size);
  return block;
}

bool pool_freed(std::int64_t* block, std::size_t size) noexcept {
  if (policy.load(std::memory_order_relaxed) != page_policy::keep_and_zero) return false;
  auto& p = pool();
  const std::lock_guard lock(p.m);
  if (p.slots == 0) p.slots = size;
  if (p.slots != size || p.blocks.size() >= p.capacity) return false;
  p.blocks.push_back(block);  // capacity reserved by set_page_policy: no allocation here
  return true;
}

}  // namespace

zeroed_counts::zeroed_counts(std::size_t size) : size_(size) {
  if (size == 0) return;
  if (mapped(size)) {
    if (auto* block = take_pooled(size)) {
      data_ = block;
      return;
    }
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
    if (!pool_freed(data_, size_)) munmap(data_, bytes_of(size_));
  } else {
    std::free(data_);
  }
}

void zeroed_counts::clear(std::size_t first, std::size_t last) noexcept {
  if (first > last || last >= size_) return;
  std::memset(data_ + first, 0, (last - first + 1) * sizeof(std::int64_t));
}

bool zeroed_counts::release() noexcept {
  if (size_ == 0 || !mapped(size_)) return false;
  if (policy.load(std::memory_order_relaxed) == page_policy::keep_and_zero) {
    zero_pages_in_use(data_, size_);
    return true;
  }
  // MADV_DONTNEED on a private anonymous mapping: the next read of a page gives zeros again.
  return madvise(data_, bytes_of(size_), MADV_DONTNEED) == 0;
}

void set_page_policy(page_policy p, std::size_t pooled_blocks) {
  auto& pool_state = pool();
  const std::lock_guard lock(pool_state.m);
  policy.store(p, std::memory_order_relaxed);
  pool_state.capacity = p == page_policy::keep_and_zero ? pooled_blocks : 0;
  pool_state.blocks.reserve(pool_state.capacity);
  if (p == page_policy::give_back) {
    for (auto* block : pool_state.blocks) munmap(block, bytes_of(pool_state.slots));
    pool_state.blocks.clear();
    pool_state.slots = 0;
  }
}

page_policy current_page_policy() noexcept {
  return policy.load(std::memory_order_relaxed);
}

// A page counts once written: /proc/self/pagemap marks it present and mapped by this process
// alone. A page only ever read maps the kernel's shared zero page, which costs nothing (and which
// mincore would count as resident).
std::size_t zeroed_counts::resident_bytes() const noexcept {
  if (size_ == 0) return 0;
  if (!mapped(size_)) return bytes_of(size_);
  const std::vector<std::uint64_t> entries = page_entries(data_, size_, pagemap_fd());
  if (entries.empty()) return bytes_of(size_);
  std::size_t resident = 0;
  for (const std::uint64_t e : entries) {
    resident += (e & page_present) && (e & page_exclusive) ? page_bytes() : 0;
  }
  return resident;
}

}  // namespace punctual::hdr
