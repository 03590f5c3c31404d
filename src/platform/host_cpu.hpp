// What the host tells the process about its CPUs: which ones it may run on, and how much time
// the hypervisor took from the guest's vCPUs (steal), where the kernel reports it; and what the
// process tells the kernel of its threads: the CPU each runs on, and its name.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace punctual::platform {

using nanoseconds = std::chrono::nanoseconds;

// The CPUs this process may run on (sched_getaffinity), in increasing order; empty when the
// kernel would not say.
std::vector<int> allowed_cpus();

// Pins the calling thread to `cpu`; false when the kernel refused.
bool pin_thread_to(int cpu) noexcept;

// Asks the kernel to give the calling thread slices of `slice` (sched_setattr's sched_runtime,
// Linux 6.12 and later; older kernels ignore it): a thread with a shorter slice than the one
// running on its CPU takes the CPU as soon as it wakes. With the default slice it may wait for
// that thread's slice to end, up to the next scheduler tick (docs/design.md, "Who waits for
// whom"). The thread's policy and nice value are kept. Returns the slice the kernel reports
// back (0 where it keeps none), or nothing when it refused.
std::optional<nanoseconds> request_slice(nanoseconds slice) noexcept;

// Names the calling thread (/proc/PID/task/TID/comm), cut to the kernel's 15 bytes.
void name_thread(const std::string& name) noexcept;

// The steal time of every CPU together since boot: the aggregate "cpu" line of /proc/stat, its
// eighth value, in ticks of `ticks_per_second`. None when the line or the value is missing
// (kernels before 2.6.11 and systems without /proc).
std::optional<nanoseconds> parse_steal(std::string_view proc_stat, long ticks_per_second) noexcept;
// This machine's, from /proc/stat; also none while it is zero since boot, which is how a host
// that does not report steal (or bare metal) shows.
std::optional<nanoseconds> host_steal();

}  // namespace punctual::platform
