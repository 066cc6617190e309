// Does MADV_RANDOM stop the kernel's fault-around on a file mapping? Maps 4 MiB of FILE read-only, touches every
// page, lets them go (MADV_DONTNEED), touches one, and prints the mapping's Rss; then the same after MADV_RANDOM.
// 64 KiB both times on Linux 6.18: fault-around maps the cached pages around a fault whatever the advice
// (docs/decisions.md, "Idle memory").  cc -O1 -o /tmp/fa bench/fault_around.c && /tmp/fa FILE  (FILE >= 4 MiB)
#include <stdio.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>
#include <string.h>
#include <stdlib.h>
static long rss_of(void *p) {
    FILE *f = fopen("/proc/self/smaps", "r"); char line[512]; unsigned long a, b; int in = 0; long r = -1;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' ')) in = (a == (unsigned long)p);
        else if (in && !strncmp(line, "Rss:", 4)) { r = atol(line + 4); break; }
    }
    fclose(f); return r;
}
int main(int argc, char **argv) {
    int fd = open(argv[1], O_RDONLY); size_t len = 4 << 20;
    volatile char *p = mmap(0, len, PROT_READ, MAP_PRIVATE, fd, 0); char s = 0;
    for (size_t i = 0; i < len; i += 4096) s += p[i];
    printf("all touched: %ld KiB\n", rss_of((void*)p));
    madvise((void*)p, len, MADV_DONTNEED);
    s += p[1 << 20];
    printf("DONTNEED, one touch: %ld KiB\n", rss_of((void*)p));
    madvise((void*)p, len, MADV_RANDOM); madvise((void*)p, len, MADV_DONTNEED);
    s += p[1 << 20];
    printf("RANDOM+DONTNEED, one touch: %ld KiB\n", rss_of((void*)p));
    return s == 123;
}
