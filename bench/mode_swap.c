// The mode file's replacement, the ways it was done (docs/decisions.md, "The mode file's spare"): written in full
// (a temporary file created, its mode set, written, closed, renamed over the old one: what
// FileSystem.writeAtomically does without fsync) against one renameat2(RENAME_EXCHANGE) with a spare; and the
// spare's check and swap as the daemon does them, by paths from the root (lstat, renameat2 on the paths) against
// by names in the directory opened once (fstatat and renameat2 on its descriptor). The files are as deep as in
// /run/user/UID/appearanced. Prints the mean per replacement.
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
    char top[4096], dir[4200], mode[4300], tmp[4300], spare[4300];
    snprintf(top, sizeof top, "%s/mode-swap-XXXXXX", base);
    if (!mkdtemp(top)) { perror("mkdtemp"); return 1; }
    snprintf(dir, sizeof dir, "%s/user", top);
    mkdir(dir, 0700);
    snprintf(dir, sizeof dir, "%s/user/1000", top);
    mkdir(dir, 0700);
    snprintf(dir, sizeof dir, "%s/user/1000/appearanced", top);
    if (mkdir(dir, 0700) != 0) { perror("mkdir"); return 1; }
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
    struct stat st;
    for (int i = 0; i < n; i++) {
        if (lstat(spare, &st) != 0 || renameat2(AT_FDCWD, spare, AT_FDCWD, mode, RENAME_EXCHANGE) != 0) {
            perror("by path"); return 1;
        }
    }
    double t3 = now_us();
    int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d < 0) { perror("open dir"); return 1; }
    for (int i = 0; i < n; i++) {
        if (fstatat(d, ".mode-other", &st, AT_SYMLINK_NOFOLLOW) != 0 || renameat2(d, ".mode-other", d, "mode", RENAME_EXCHANGE) != 0) {
            perror("in the directory"); return 1;
        }
    }
    double t4 = now_us();
    close(d);
    printf("written and renamed: %.2f us, exchanged with the spare: %.2f us; checked and exchanged by paths: %.2f us, "
           "in the directory: %.2f us (mean of %d, %s)\n", (t1 - t0) / n, (t2 - t1) / n, (t3 - t2) / n, (t4 - t3) / n, n, dir);
    unlink(mode);
    unlink(spare);
    rmdir(dir);
    snprintf(dir, sizeof dir, "%s/user/1000", top);
    rmdir(dir);
    snprintf(dir, sizeof dir, "%s/user", top);
    rmdir(dir);
    rmdir(top);
    return 0;
}
