// CPU spent on purpose: `serve --cpu-per-request` burns this much of its thread's CPU time on
// every request, so a server thread answers at most 1 / DURATION requests per second and the
// server's capacity is known (threads / DURATION) to whoever measures it.
#pragma once

#include <chrono>

namespace punctual::server {

// Spins until the calling thread's CPU clock has advanced by `amount`: CPU time, not wall time,
// so a thread the host preempts still does the whole amount of work.
void burn_cpu(std::chrono::nanoseconds amount) noexcept;

}  // namespace punctual::server
