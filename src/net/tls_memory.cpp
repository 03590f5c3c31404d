// OpenSSL 3.0 allocates and frees a few small blocks for every record it reads or writes. A
// request path that allocates nothing is one of the engine's promises (the allocation test
// counts), so OpenSSL's allocations go through this cache: blocks up to a size are kept on a
// per-thread free list when freed and handed out again, so the steady state reuses the same few
// blocks and calls no allocator. Larger blocks go straight to the underlying functions.
#include <openssl/crypto.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "net/tls.hpp"

namespace punctual::net {
namespace {

constexpr std::size_t small_block = 64;  // bytes a cached block can hold
constexpr std::size_t header = 16;       // keeps the block's user part 16-byte aligned
constexpr std::size_t max_cached = 256;  // per thread

struct block_header {
  std::size_t size;  // requested size; <= small_block: a cached-size block
};

allocator_functions underlying{};

// Trivially destructible, so it stays usable to the end of the thread: OpenSSL may still
// allocate and free on it after the thread's destructors (its exit handlers run late).
struct free_list {
  void* blocks[max_cached];
  std::size_t count;
  bool closed;  // the reaper has run: hand nothing out, keep nothing
};
thread_local free_list cache{};

// Returns a thread's cached blocks when it exits, and closes its list.
struct reaper {
  ~reaper() {
    for (std::size_t i = 0; i < cache.count; ++i) underlying.free(cache.blocks[i]);
    cache.count = 0;
    cache.closed = true;
  }
};
thread_local reaper reap;

void* to_user(void* raw) {
  return static_cast<char*>(raw) + header;
}
void* to_raw(void* user) {
  return static_cast<char*>(user) - header;
}

void* cached_malloc(std::size_t n, const char*, int) {
  void* raw = nullptr;
  if (n <= small_block && cache.count > 0 && !cache.closed) {
    raw = cache.blocks[--cache.count];
  } else {
    raw = underlying.malloc(header + (n <= small_block ? small_block : n));
    if (!raw) return nullptr;
  }
  static_cast<block_header*>(raw)->size = n;
  return to_user(raw);
}

void cached_free(void* user, const char*, int) {
  if (!user) return;
  void* raw = to_raw(user);
  if (static_cast<block_header*>(raw)->size <= small_block && cache.count < max_cached &&
      !cache.closed) {
    if (cache.count == 0) static_cast<void>(&reap);  // registers the reaper on this thread
    cache.blocks[cache.count++] = raw;
  } else {
    underlying.free(raw);
  }
}

void* cached_realloc(void* user, std::size_t n, const char* file, int line) {
  if (!user) return cached_malloc(n, file, line);
  if (n == 0) {
    cached_free(user, file, line);
    return nullptr;
  }
  const std::size_t old = static_cast<block_header*>(to_raw(user))->size;
  if (old <= small_block && n <= small_block) {  // the block has room up to small_block
    static_cast<block_header*>(to_raw(user))->size = n;
    return user;
  }
  void* fresh = cached_malloc(n, file, line);
  if (!fresh) return nullptr;
  std::memcpy(fresh, user, old < n ? old : n);
  cached_free(user, file, line);
  return fresh;
}

void* plain_malloc(std::size_t n) {
  return std::malloc(n);
}
void* plain_realloc(void* p, std::size_t n) {
  return std::realloc(p, n);
}
void plain_free(void* p) {
  std::free(p);
}

}  // namespace

bool install_tls_allocator(const allocator_functions& next) noexcept {
  underlying = next.malloc ? next : allocator_functions{plain_malloc, plain_realloc, plain_free};
  return CRYPTO_set_mem_functions(cached_malloc, cached_realloc, cached_free) == 1;
}

}  // namespace punctual::net
