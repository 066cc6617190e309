/* The physical floor of `appearancectl get`: the same question on the same socket in a few lines of C
 * (socket, connect, one request line, one reply line, print the mode). bench/cli_floor.py counts its
 * instructions and times it beside appearancectl. Not part of the product: no deadline, no checks beyond
 * what it needs to print the answer. */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 2) return 64;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    strncpy(a.sun_path, argv[1], sizeof a.sun_path - 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) return 69;
    static const char req[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"get\"}\n";
    if (write(fd, req, sizeof req - 1) != sizeof req - 1) return 69;
    char buf[4096];
    size_t n = 0;
    while (n < sizeof buf - 1) {
        ssize_t r = read(fd, buf + n, sizeof buf - 1 - n);
        if (r <= 0) return 69;
        n += (size_t)r;
        if (memchr(buf, '\n', n)) break;
    }
    buf[n] = 0;
    char *m = strstr(buf, "\"mode\":\"");
    if (!m) return 76;
    m += 8;
    char *end = strchr(m, '"');
    if (!end) return 76;
    *end = 0;
    puts(m);
    return 0;
}
