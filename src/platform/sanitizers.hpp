// Whether this translation unit is built with AddressSanitizer or ThreadSanitizer. Code that
// goes around libc for speed (raw system calls, memory mapped by hand) takes libc's way in those
// builds instead, so that the sanitizers still see what it does.
#pragma once

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PUNCTUAL_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define PUNCTUAL_SANITIZED 1
#endif
#endif
