#include "platform/host_cpu.hpp"

#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <fstream>
#include <string>

namespace punctual::platform {

std::vector<int> allowed_cpus() {
  std::vector<int> out;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) out.push_back(cpu);
  }
  return out;
}

bool pin_thread_to(int cpu) noexcept {
  if (cpu < 0 || cpu >= CPU_SETSIZE) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

namespace {

// The kernel's struct sched_attr (version 1, 56 bytes): its header clashes with <sched.h>.
struct sched_attributes {
  std::uint32_t size = sizeof(sched_attributes);
  std::uint32_t sched_policy = 0;
  std::uint64_t sched_flags = 0;
  std::int32_t sched_nice = 0;
  std::uint32_t sched_priority = 0;
  std::uint64_t sched_runtime = 0;
  std::uint64_t sched_deadline = 0;
  std::uint64_t sched_period = 0;
  std::uint32_t sched_util_min = 0;
  std::uint32_t sched_util_max = 0;
};

}  // namespace

std::optional<nanoseconds> request_slice(nanoseconds slice) noexcept {
  sched_attributes attr;
  const auto tid = static_cast<pid_t>(syscall(SYS_gettid));
  if (syscall(SYS_sched_getattr, tid, &attr, sizeof attr, 0) != 0) return std::nullopt;
  // Only the normal policy has slices; a thread someone put in a real-time class keeps it.
  if (attr.sched_policy != SCHED_OTHER) return std::nullopt;
  attr.size = sizeof attr;
  attr.sched_flags = 0;
  attr.sched_runtime = static_cast<std::uint64_t>(slice.count());
  if (syscall(SYS_sched_setattr, tid, &attr, 0) != 0) return std::nullopt;
  sched_attributes back;
  if (syscall(SYS_sched_getattr, tid, &back, sizeof back, 0) != 0) return std::nullopt;
  return nanoseconds{static_cast<std::int64_t>(back.sched_runtime)};
}

void name_thread(const std::string& name) noexcept {
  constexpr std::size_t kernel_limit = 15;  // TASK_COMM_LEN less the terminating zero
  char cut[kernel_limit + 1] = {};
  name.copy(cut, kernel_limit);
  pthread_setname_np(pthread_self(), cut);
}

std::optional<nanoseconds> parse_steal(std::string_view text, long ticks_per_second) noexcept {
  // "cpu  user nice system idle iowait irq softirq steal ...": the first line, "cpu" then
  // blanks (the per-CPU lines are "cpu0", "cpu1", ...).
  if (ticks_per_second <= 0 || text.substr(0, 4) != "cpu ") return std::nullopt;
  text = text.substr(0, text.find('\n'));
  std::size_t at = 3;
  std::uint64_t value = 0;
  for (int field = 0; field < 8; ++field) {
    at = text.find_first_not_of(' ', at);
    if (at == std::string_view::npos) return std::nullopt;
    const auto [end, ec] = std::from_chars(text.data() + at, text.data() + text.size(), value);
    if (ec != std::errc{}) return std::nullopt;
    at = static_cast<std::size_t>(end - text.data());
  }
  const auto per_tick = 1'000'000'000 / static_cast<std::uint64_t>(ticks_per_second);
  return nanoseconds{static_cast<std::int64_t>(value * per_tick)};
}

std::optional<nanoseconds> host_steal() {
  std::ifstream in("/proc/stat");
  if (!in) return std::nullopt;
  std::string line;
  std::getline(in, line);
  const std::optional<nanoseconds> steal = parse_steal(line, sysconf(_SC_CLK_TCK));
  // A hypervisor that pauses vCPUs without telling the guest (seen on Firecracker, where a
  // vCPU loses milliseconds at a time) leaves the counter at zero for good: zero since boot is
  // no report, not a report of nothing taken.
  if (steal && steal->count() == 0) return std::nullopt;
  return steal;
}

}  // namespace punctual::platform
