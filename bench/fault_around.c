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
