#include "http/h2_memory.hpp"

#include <nghttp2/nghttp2.h>

#include <cstdlib>
#include <cstring>
#include <new>

namespace punctual::http {

// Blocks come from operator new, so that whatever counts the program's allocations (the
// allocation test) sees the pool grow, and sees that it stops growing.

// Precedes each block: the pool's list of its blocks, and the block's size class (or, for a
// block too large to pool, `large` and its size).
struct h2_memory::header {
  header* next_all;
  std::uint32_t size_class;
  std::uint32_t large_size;  // large blocks: their size, to copy on reallocation
  header* next_free;
  std::uint64_t pad;  // keeps the payload 16-byte aligned
};

namespace {

constexpr std::uint32_t large = ~std::uint32_t{0};

// The plain operator new (not the nothrow one), so that one replacement of operator new and
// delete sees both ends of every block; nghttp2 takes a null return for out of memory.
void* new_block(std::size_t size) noexcept {
  try {
    return ::operator new(size);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
constexpr std::size_t smallest = 32;

// The smallest k with (smallest << k) >= size.
std::uint32_t class_of(std::size_t size) noexcept {
  if (size <= smallest) return 0;
  return static_cast<std::uint32_t>(64 - __builtin_clzll(size - 1)) - 5;  // smallest is 1 << 5
}

void* on_malloc(std::size_t size, void* self) {
  return static_cast<h2_memory*>(self)->allocate(size);
}
void on_free(void* p, void* self) {
  static_cast<h2_memory*>(self)->release(p);
}
void* on_calloc(std::size_t n, std::size_t size, void* self) {
  if (size != 0 && n > SIZE_MAX / size) return nullptr;
  void* p = static_cast<h2_memory*>(self)->allocate(n * size);
  if (p) std::memset(p, 0, n * size);
  return p;
}
void* on_realloc(void* p, std::size_t size, void* self) {
  return static_cast<h2_memory*>(self)->reallocate(p, size);
}

}  // namespace

h2_memory::h2_memory() noexcept {
  mem_.mem_user_data = this;
  mem_.malloc = on_malloc;
  mem_.free = on_free;
  mem_.calloc = on_calloc;
  mem_.realloc = on_realloc;
}

h2_memory::~h2_memory() {
  while (all_) {
    header* next = all_->next_all;
    ::operator delete(all_);
    all_ = next;
  }
}

void* h2_memory::allocate(std::size_t size) noexcept {
  const std::uint32_t k = class_of(size);
  if (k >= class_count) {
    auto* h = static_cast<header*>(new_block(sizeof(header) + size));
    if (!h) return nullptr;
    h->size_class = large;
    h->large_size = static_cast<std::uint32_t>(size);
    return h + 1;
  }
  header* h = free_[k];
  if (h) {
    free_[k] = h->next_free;
  } else {
    h = static_cast<header*>(new_block(sizeof(header) + (smallest << k)));
    if (!h) return nullptr;
    h->size_class = k;
    h->next_all = all_;
    all_ = h;
  }
  return h + 1;
}

void h2_memory::release(void* p) noexcept {
  if (!p) return;
  header* h = static_cast<header*>(p) - 1;
  if (h->size_class == large) return ::operator delete(h);
  h->next_free = free_[h->size_class];
  free_[h->size_class] = h;
}

void* h2_memory::reallocate(void* p, std::size_t size) noexcept {
  if (!p) return allocate(size);
  header* h = static_cast<header*>(p) - 1;
  const std::size_t have = h->size_class == large ? h->large_size : smallest << h->size_class;
  if (size <= have && h->size_class != large) return p;
  void* q = allocate(size);
  if (!q) return nullptr;
  std::memcpy(q, p, have < size ? have : size);
  release(p);
  return q;
}

}  // namespace punctual::http
