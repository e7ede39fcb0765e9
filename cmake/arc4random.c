/* The static libstdc++ (std::random_device) calls arc4random when the glibc
 * it was built on has one. Debian 12's glibc does (2.36), which would raise
 * the portable binaries' glibc floor from 2.34 to 2.36 and rule out Ubuntu
 * 22.04 and RHEL 9. Defining it here, in the executable, binds those calls
 * to this version instead: the same contract (uniform 32 random bits from
 * the kernel's CSPRNG) through getrandom(2), which glibc has had since 2.25.
 * Linked only into gpuctld and gpuctl of the portable build. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/random.h>

uint32_t arc4random(void);

uint32_t arc4random(void) {
  uint32_t value = 0;
  for (;;) {
    ssize_t n = getrandom(&value, sizeof value, 0);
    if (n == (ssize_t)sizeof value) return value;
    /* EINTR: a signal came before any byte was read; anything else means
       the kernel has no getrandom (before Linux 3.17), which glibc 2.34's
       own floor already rules out. */
    if (n < 0 && errno != EINTR) abort();
  }
}
