// The few glibc pieces Swift cannot see (declared only under _GNU_SOURCE, in malloc.h, or not wrapped before
// glibc 2.36), wrapped once in CPosix.c for AppearancePosix.
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

/// accept4(2) with SOCK_CLOEXEC, and SOCK_NONBLOCK when `nonblocking`. -1 with errno on failure.
int cposix_accept(int fd, int nonblocking);

/// pipe2(2) with O_CLOEXEC. 0, or -1 with errno.
int cposix_pipe(int fds[2]);

/// renameat2(2) with RENAME_EXCHANGE: swaps the two names atomically. 0, or -1 with errno.
int cposix_exchange(int dir, const char *a, const char *b);
/// sched_setattr(2) on the calling thread: SCHED_OTHER with a slice of `ns`, its nice value kept. 0 or -1.
int cposix_set_slice(unsigned long long ns);

/// pidfd_open(2) through syscall(2). -1 with errno (ENOSYS before Linux 5.3).
int cposix_pidfd_open(int32_t pid);

/// getsockopt(SO_PEERCRED). 0, or -1 with errno.
int cposix_peer_credentials(int fd, cposix_credentials *out);

/// malloc_trim(3): returns freed heap to the system. 1 if memory was released.
int cposix_malloc_trim(size_t pad);

/// mallopt(3) with M_ARENA_MAX and M_MMAP_THRESHOLD. 1 if both were taken.
int cposix_malloc_bound(int arenas, int mmap_threshold);

/// tzset(3) that reads the time zone again (TZ set to UTC and back around it, as tzset alone does not).
void cposix_reload_timezone(void);

/// A timerfd(2) whose read fails with ECANCELED whenever the realtime clock is set. -1 with errno on failure.

int cposix_clock_set_watch(void);

/// Arms `fd` again after it reported a set clock. 0, or -1 with errno.
int cposix_clock_set_rearm(int fd);

/// MADV_DONTNEED on the whole pages of every loaded object's read-only segments (code and read-only data),
/// the vDSO and objects with text relocations left out: what runs again faults its pages back from the file.
/// The bytes let go.
size_t cposix_release_readonly_pages(void);

#endif
