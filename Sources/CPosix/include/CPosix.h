// The few glibc pieces Swift cannot see: they are declared only under _GNU_SOURCE (accept4, pipe2,
// renameat2, struct ucred), live in a header the Glibc module leaves out (malloc.h), or have no wrapper before
// glibc 2.36 (pidfd_open). Each is wrapped once, in CPosix.c, which is compiled with _GNU_SOURCE;
// AppearancePosix is the only caller.
#ifndef CPOSIX_H
#define CPOSIX_H

#include <stddef.h>
#include <stdint.h>

/// The peer of a Unix socket, from getsockopt(SO_PEERCRED) into a real `struct ucred`.
typedef struct {
    int32_t pid;
    uint32_t uid;
    uint32_t gid;
} cposix_credentials;

/// accept4(2) with SOCK_CLOEXEC, and SOCK_NONBLOCK when `nonblocking`: the new descriptor is never
/// inheritable, not even for the moment between accept and fcntl. -1 with errno on failure.
int cposix_accept(int fd, int nonblocking);

/// pipe2(2) with O_CLOEXEC. 0, or -1 with errno.
int cposix_pipe(int fds[2]);

/// renameat2(2) with RENAME_EXCHANGE: swaps the two names atomically (both must exist). 0, or -1 with errno
/// (EINVAL where the file system cannot exchange, ENOSYS before Linux 3.15).
int cposix_exchange(int dir, const char *a, const char *b);
/// sched_setattr(2) on the calling thread: SCHED_OTHER with a slice of `ns` (EEVDF's request size), its nice
/// value kept. 0 or -1.
int cposix_set_slice(unsigned long long ns);

/// pidfd_open(2) through syscall(2) (glibc wraps it only from 2.36): a descriptor that becomes readable when
/// the process ends, close-on-exec. -1 with errno (ENOSYS before Linux 5.3).
int cposix_pidfd_open(int32_t pid);

/// getsockopt(SO_PEERCRED). 0, or -1 with errno.
int cposix_peer_credentials(int fd, cposix_credentials *out);

/// malloc_trim(3): returns freed heap to the system. 1 if memory was released.
int cposix_malloc_trim(size_t pad);

/// mallopt(3): at most `arenas` heaps (M_ARENA_MAX), and blocks of `mmap_threshold` bytes or more mapped on
/// their own (M_MMAP_THRESHOLD, which also stops glibc from raising it). 1 if both were taken.
int cposix_malloc_bound(int arenas, int mmap_threshold);

/// Makes the C library read the time zone again: tzset(3) alone does not re-read /etc/localtime (or the
/// file TZ names) once loaded while TZ is unchanged, so TZ is set to UTC and back (or unset again) around
/// it. Touches the environment: call it where nothing else reads the environment at the same time.
void cposix_reload_timezone(void);

/// A timerfd(2) on CLOCK_REALTIME, armed for the far future with TFD_TIMER_CANCEL_ON_SET: reading it fails
/// with ECANCELED whenever the realtime clock is set (not when it merely runs). -1 with errno on failure.
int cposix_clock_set_watch(void);

/// Arms `fd` again after it reported a set clock. 0, or -1 with errno.
int cposix_clock_set_rearm(int fd);

/// MADV_DONTNEED on the whole pages of every loaded object's read-only segments (code and read-only data),
/// the vDSO and objects with text relocations left out: what runs again faults its pages back from the file.
/// The bytes let go.
size_t cposix_release_readonly_pages(void);

#endif
