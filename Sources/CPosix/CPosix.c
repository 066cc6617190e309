#define _GNU_SOURCE
#include <fcntl.h>
#include <malloc.h>
#include <sys/socket.h>
#include <unistd.h>

#include "CPosix.h"

int cposix_accept(int fd, int nonblocking) {
    return accept4(fd, NULL, NULL, SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0));
}

int cposix_pipe(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
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
