// The mode file's replacement, the two ways (docs/decisions.md, "The mode file's spare"): written in full (a
// temporary file created, its mode set, written, closed, renamed over the old one: what FileSystem.writeAtomically
// does without fsync) against one renameat2(RENAME_EXCHANGE) with a spare. Prints the mean per replacement.
//   cc -O2 -o /tmp/mode_swap bench/mode_swap.c && /tmp/mode_swap /dev/shm
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

int main(int argc, char **argv) {
    const char *base = argc > 1 ? argv[1] : "/dev/shm";
    char dir[4096], mode[4200], tmp[4200], spare[4200];
    snprintf(dir, sizeof dir, "%s/mode-swap-XXXXXX", base);
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    snprintf(mode, sizeof mode, "%s/mode", dir);
    snprintf(tmp, sizeof tmp, "%s/mode.tmp", dir);
    snprintf(spare, sizeof spare, "%s/.mode-other", dir);
    const int n = 20000;
    double t0 = now_us();
    for (int i = 0; i < n; i++) {
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0 || fchmod(fd, 0644) != 0 || write(fd, i & 1 ? "dark\n" : "light\n", i & 1 ? 5 : 6) < 0) {
            perror("write"); return 1;
        }
        close(fd);
        if (rename(tmp, mode) != 0) { perror("rename"); return 1; }
    }
    double t1 = now_us();
    int fd = open(spare, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, "dark\n", 5) < 0) { perror("spare"); return 1; }
    close(fd);
    for (int i = 0; i < n; i++) {
        if (renameat2(AT_FDCWD, spare, AT_FDCWD, mode, RENAME_EXCHANGE) != 0) { perror("renameat2"); return 1; }
    }
    double t2 = now_us();
    printf("written and renamed: %.2f us, exchanged with the spare: %.2f us (mean of %d, %s)\n",
           (t1 - t0) / n, (t2 - t1) / n, n, base);
    unlink(mode);
    unlink(spare);
    rmdir(dir);
    return 0;
}
