#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <malloc.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "CPosix.h"

int cposix_accept(int fd, int nonblocking) {
    return accept4(fd, NULL, NULL, SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0));
}

int cposix_pipe(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}

int cposix_exchange(int dir, const char *a, const char *b) {
    return renameat2(dir, a, dir, b, RENAME_EXCHANGE);
}

int cposix_peer_credentials(int fd, cposix_credentials *out) {
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
    out->pid = cred.pid;
    out->uid = cred.uid;
    out->gid = cred.gid;
    return 0;
}

int cposix_malloc_trim(size_t pad) {
    return malloc_trim(pad);
}

int cposix_malloc_bound(int arenas, int mmap_threshold) {
    int arenas_taken = mallopt(M_ARENA_MAX, arenas);
    return arenas_taken && mallopt(M_MMAP_THRESHOLD, mmap_threshold);
}

void cposix_reload_timezone(void) {
    const char *tz = getenv("TZ");
    char *saved = tz ? strdup(tz) : NULL;
    setenv("TZ", "UTC0", 1);
    tzset();
    if (saved) {
        setenv("TZ", saved, 1);
        free(saved);
    } else {
        unsetenv("TZ");
    }
    tzset();
}

int cposix_clock_set_rearm(int fd) {
    struct itimerspec far = {{0, 0}, {(time_t)1 << 40, 0}};
    return timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &far, NULL);
}

int cposix_clock_set_watch(void) {
    int fd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
    if (fd < 0) return -1;
    if (cposix_clock_set_rearm(fd) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

#include <errno.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>

int cposix_set_slice(unsigned long long ns) {
    struct {
        uint32_t size;
        uint32_t sched_policy;
        uint64_t sched_flags;
        int32_t sched_nice;
        uint32_t sched_priority;
        uint64_t sched_runtime;
        uint64_t sched_deadline;
        uint64_t sched_period;
    } attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.sched_policy = 0;  /* SCHED_OTHER */
    /* sched_setattr sets the nice value too: the thread's own (inherited from its creator, per thread on
       Linux) is kept, where 0 would raise a niced daemon's priority (refused) or lower a favoured one's. */
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, 0);
    if (nice == -1 && errno != 0) return -1;
    attr.sched_nice = nice;
    attr.sched_runtime = ns;
    return (int)syscall(SYS_sched_setattr, 0, &attr, 0);
}

int cposix_pidfd_open(int32_t pid) {
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, (pid_t)pid, 0u);
#else
    errno = ENOSYS;
    return -1;
#endif
}

// Whether the object's code was written to at load (text relocations): its pages are then its own, not the file's.
static int has_text_relocations(const struct dl_phdr_info *info) {
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
        for (const ElfW(Dyn) *d = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr); d->d_tag != DT_NULL; d++)
            if (d->d_tag == DT_TEXTREL || (d->d_tag == DT_FLAGS && (d->d_un.d_val & DF_TEXTREL))) return 1;
    }
    return 0;
}

static int release_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    size_t *released = data;
    if (info->dlpi_addr == (ElfW(Addr))getauxval(AT_SYSINFO_EHDR) || has_text_relocations(info)) return 0;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W)) continue;
        // Whole pages inside the segment only: a page shared with a writable segment keeps what was written.
        uintptr_t start = (info->dlpi_addr + ph->p_vaddr + page - 1) & ~(page - 1);
        uintptr_t end = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz) & ~(page - 1);
        if (end <= start) continue;
        // MADV_RANDOM first: no read-ahead when a page is needed again.
        madvise((void *)start, end - start, MADV_RANDOM);
        if (madvise((void *)start, end - start, MADV_DONTNEED) == 0) *released += end - start;
    }
    return 0;
}

size_t cposix_release_readonly_pages(void) {
    size_t released = 0;
    dl_iterate_phdr(release_object, &released);
    return released;
}
