// The switch that really pauses answering on every server thread.
//
// A writer announces itself (begin_write), then checks the gate; the controller closes the
// gate, then waits until no writer is inside. With sequentially consistent atomics on both
// sides (Dekker), either the writer sees the gate closed or the controller waits for its
// write to finish, so no response is written after a stall's logged start. Writers read
// the clock only after the gate check passed, so none is stamped before a stall's logged end.
#pragma once

#include <atomic>
#include <thread>

namespace punctual::server {

class stall_gate {
 public:
  // One per thread that writes responses.
  struct alignas(64) writer_slot {
    std::atomic<bool> inside{false};
  };

  // Returns true if the caller may write now; it must then call end_write().
  static bool begin_write(const stall_gate& gate, writer_slot& slot) {
    slot.inside.store(true, std::memory_order_seq_cst);
    if (gate.closed_.load(std::memory_order_seq_cst)) {
      slot.inside.store(false, std::memory_order_release);
      return false;
    }
    return true;
  }
  static void end_write(writer_slot& slot) { slot.inside.store(false, std::memory_order_release); }

  bool closed() const { return closed_.load(std::memory_order_seq_cst); }

  // Closes the gate and returns once no writer is inside.
  template <typename Slots>
  void close_and_drain(const Slots& slots) {
    closed_.store(true, std::memory_order_seq_cst);
    for (const writer_slot* slot : slots) {
      while (slot->inside.load(std::memory_order_seq_cst)) std::this_thread::yield();
    }
  }
  void open() { closed_.store(false, std::memory_order_seq_cst); }

 private:
  std::atomic<bool> closed_{false};
};

}  // namespace punctual::server
