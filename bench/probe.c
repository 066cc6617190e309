// probe: the timing half of the benchmark harness (bench/bench.py drives it).
// All times are CLOCK_MONOTONIC nanoseconds, so they compare across processes.
//
//   probe sock SOCKET N ROUNDS portal|set|mixed    N socket subscribers; per round a change is triggered
//       (portal: `gsettings set` alternately prefer-dark/prefer-light, and a direct libdbus listener on
//       the session bus stamps the SettingChanged it sees; set: an `appearanced` set request on another
//       connection is stamped before it is written; mixed: the two in turn on the same subscribers, a
//       portal change, a `set` of the opposite mode, a `set` back to `system`, and again, all followed by
//       the same pause). Prints "round,t0,first,last,trigger" per round.
//   probe dbus ADDRESS N ROUNDS              N libdbus connections with a match rule on a private bus;
//       an emitter sends one signal per round (stamped before send). Same output.
//   probe floor N ROUNDS BYTES [uring]       the floor of a fan-out: one process writes a BYTES-long `changed`
//       line to N socket pairs with one send(2) each, on a pipe's signal (stamped before it is written);
//       the same receiving loop as `sock`. Same output as `dbus`. `uring` (a probe built with -DPROBE_URING
//       and -luring): the N sends go to the kernel in one io_uring_enter, on registered descriptors.
//   probe hold SOCKET N                      N subscribers that stay connected and drain what they get,
//       until stdin closes. Prints "ready" once subscribed.
//   probe readrtt ROUNDS                     Read(org.freedesktop.appearance, color-scheme) round trips
//       to the portal on the session bus, one per line (ns). The first is printed as "first,NS".
//   probe startup SOCKET ROUNDS -- CMD...    exec CMD, connect to SOCKET until it answers a get; prints
//       exec-to-reply ns per round; SIGTERMs and reaps CMD each round.
//   probe setload SOCKET CLIENTS SECONDS     CLIENTS processes, each on one connection, send `set`
//       (dark/light alternately) and wait for each reply; prints the total replies and seconds.
//   probe busflood ADDRESS SECONDS WINDOW    one bus connection keeps WINDOW calls of Properties.Get(Mode) to
//       appearanced's D-Bus service outstanding for SECONDS (a new call for each reply); prints calls answered,
//       errors and seconds.
//   probe bustoggle ADDRESS COUNT WINDOW SECONDS   one bus connection keeps WINDOW calls of Toggle({}) to
//       appearanced's D-Bus service outstanding until COUNT are answered (or SECONDS pass): a new call for each
//       reply; prints calls answered, errors and seconds.
#define _GNU_SOURCE
#include <dbus/dbus.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int64_t now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char *what) { perror(what); exit(2); }

static int connect_unix(const char *path) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) die("socket");
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    strncpy(a.sun_path, path, sizeof a.sun_path - 1);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) { close(fd); return -1; }
    return fd;
}

static void write_all(int fd, const char *s) {
    size_t n = strlen(s);
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0) { if (errno == EINTR) continue; die("write"); }
        s += w; n -= (size_t)w;
    }
}

// Reads until a full line is in; returns its length (the buffer keeps the line).
static ssize_t read_line(int fd, char *buf, size_t cap) {
    size_t have = 0;
    while (have < cap - 1) {
        ssize_t r = read(fd, buf + have, cap - 1 - have);
        if (r <= 0) { if (r < 0 && errno == EINTR) continue; return -1; }
        have += (size_t)r;
        buf[have] = 0;
        if (memchr(buf, '\n', have)) return (ssize_t)have;
    }
    return (ssize_t)have;
}

static const char *SUBSCRIBE = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"subscribe\"}\n";

// Connects n subscribers; returns their fds (blocking sockets, replies read).
static int *subscribe_n(const char *path, int n) {
    int *fds = calloc((size_t)n, sizeof(int));
    char buf[4096];
    // PROBE_APPS=K: subscriber i speaks for app "appI%K" (per-app overrides; none set, so all follow).
    const char *apps_env = getenv("PROBE_APPS");
    int apps = apps_env ? atoi(apps_env) : 0;
    for (int i = 0; i < n; i++) {
        fds[i] = connect_unix(path);
        if (fds[i] < 0) die("connect subscriber");
        if (apps > 0) {
            char msg[160];
            snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"subscribe\",\"params\":{\"app\":\"app%d\"}}\n", i % apps);
            write_all(fds[i], msg);
        } else {
            write_all(fds[i], SUBSCRIBE);
        }
    }
    for (int i = 0; i < n; i++)
        if (read_line(fds[i], buf, sizeof buf) < 0 || !strstr(buf, "\"result\"")) { fprintf(stderr, "subscribe %d: %s\n", i, buf); exit(2); }
    return fds;
}

static DBusConnection *bus_open(const char *address) {
    DBusError err; dbus_error_init(&err);
    DBusConnection *c = address ? dbus_connection_open_private(address, &err) : dbus_bus_get_private(DBUS_BUS_SESSION, &err);
    if (!c) { fprintf(stderr, "bus: %s\n", err.message); exit(2); }
    dbus_connection_set_exit_on_disconnect(c, 0);
    if (address && !dbus_bus_register(c, &err)) { fprintf(stderr, "register: %s\n", err.message); exit(2); }
    return c;
}

static void bus_match(DBusConnection *c, const char *rule) {
    DBusError err; dbus_error_init(&err);
    dbus_bus_add_match(c, rule, &err);
    if (dbus_error_is_set(&err)) { fprintf(stderr, "match: %s\n", err.message); exit(2); }
}

static int bus_fd(DBusConnection *c) {
    int fd = -1;
    if (!dbus_connection_get_unix_fd(c, &fd)) { fprintf(stderr, "no fd\n"); exit(2); }
    return fd;
}

static void drain(int fd) {
    char buf[65536];
    while (recv(fd, buf, sizeof buf, MSG_DONTWAIT) > 0) {}
}

static pid_t spawn(char *const argv[], int quiet) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (quiet) {
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    }
    pid_t pid;
    if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0) die("posix_spawn");
    posix_spawn_file_actions_destroy(&fa);
    return pid;
}

// An epoll set of the n fds, each with its index as data.
static int epoll_of(int *fds, int n) {
    int ep = epoll_create1(EPOLL_CLOEXEC);
    for (int i = 0; i < n; i++) {
        struct epoll_event e = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &e) != 0) die("epoll_ctl");
    }
    return ep;
}

// Waits until every subscriber fd has a complete `changed` line (with `any`: any data; one event per fd per
// round); `direct`, when not NULL, is a libdbus connection (epoll index n) whose SettingChanged stamps t0 when
// `stamp` is set (otherwise what it receives is drained).
static int round_wait(int ep, int *fds, int n, DBusConnection *direct, int stamp, int64_t *t0, int64_t *first,
                      int64_t *last, int any) {
    static unsigned char *seen;
    static int seen_n;
    if (seen_n < n) { free(seen); seen = calloc((size_t)n, 1); seen_n = n; }
    memset(seen, 0, (size_t)n);
    int got = 0, direct_done = direct == NULL || !stamp;
    *first = 0; *last = 0;
    struct epoll_event ev[256];
    char buf[65536];
    int64_t deadline = now() + 5LL * 1000000000;
    while (got < n || !direct_done) {
        int k = epoll_wait(ep, ev, 256, 1000);
        if (k < 0) { if (errno == EINTR) continue; die("epoll_wait"); }
        if (now() > deadline) { fprintf(stderr, "round timed out: %d/%d subscribers, direct %d\n", got, n, direct_done); return 0; }
        for (int i = 0; i < k; i++) {
            int idx = (int)ev[i].data.u32;
            if (idx == n) {  // the direct listener
                dbus_connection_read_write(direct, 0);
                DBusMessage *m;
                while ((m = dbus_connection_pop_message(direct))) {
                    if (stamp && !direct_done && dbus_message_is_signal(m, "org.freedesktop.portal.Settings", "SettingChanged")) {
                        *t0 = now();
                        direct_done = 1;
                    }
                    dbus_message_unref(m);
                }
                continue;
            }
            ssize_t r = recv(fds[idx], buf, sizeof buf, MSG_DONTWAIT);
            if (r <= 0) continue;
            int64_t t = now();
            // A subscriber has the notification once its line is complete and says "changed".
            if (!seen[idx] && (any || (memmem(buf, (size_t)r, "\"changed\"", 9) && memchr(buf, '\n', (size_t)r)))) {
                seen[idx] = 1; got++;
                if (!*first) *first = t;
                *last = t;
            }
        }
    }
    return 1;
}

static int cmd_sock(const char *path, int n, int rounds, const char *trigger) {
    int mixed = strcmp(trigger, "mixed") == 0;
    if (!mixed && strcmp(trigger, "portal") != 0 && strcmp(trigger, "set") != 0) { fprintf(stderr, "trigger: portal, set or mixed\n"); return 64; }
    DBusConnection *direct = NULL;
    if (mixed || strcmp(trigger, "portal") == 0) {
        direct = bus_open(NULL);
        bus_match(direct, "type='signal',interface='org.freedesktop.portal.Settings',member='SettingChanged',"
                          "arg0='org.freedesktop.appearance',arg1='color-scheme'");
    }
    int *fds = subscribe_n(path, n);
    int ep = epoll_of(fds, n);
    if (direct) {
        struct epoll_event e = {.events = EPOLLIN, .data.u32 = (uint32_t)n};
        epoll_ctl(ep, EPOLL_CTL_ADD, bus_fd(direct), &e);
    }
    int ctl = connect_unix(path);
    char buf[4096];
    printf("round,t0,first,last,trigger\n");
    for (int r = 0; r < rounds; r++) {
        // switch to the opposite of what the daemon says now, so a missed change cannot put rounds out of step
        write_all(ctl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"get\"}\n");
        if (read_line(ctl, buf, sizeof buf) < 0) die("get");
        int dark = strstr(buf, "\"mode\":\"dark\"") != NULL;
        const char *value = dark ? "light" : "dark";
        // mixed: portal, set to the opposite, set back to the system's mode (the opposite again), ...
        int portal = mixed ? r % 3 == 0 : direct != NULL;
        if (mixed && r % 3 == 2) value = "system";
        int64_t t0 = 0, first, last;
        pid_t child = 0;
        if (portal) {
            char *argv[] = {"/usr/bin/gsettings", "set", "org.gnome.desktop.interface", "color-scheme",
                            dark ? "prefer-light" : "prefer-dark", NULL};
            child = spawn(argv, 1);
        } else {
            char req[256];
            snprintf(req, sizeof req, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"set\",\"params\":{\"override\":\"%s\"}}\n", r + 2, value);
            t0 = now();
            write_all(ctl, req);
        }
        int ok = round_wait(ep, fds, n, direct, portal, &t0, &first, &last, 0);
        if (child) waitpid(child, NULL, 0);
        if (!portal) read_line(ctl, buf, sizeof buf);
        if (!ok) {
            write_all(ctl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"status\"}\n");
            read_line(ctl, buf, sizeof buf);
            fprintf(stderr, "round %d (%s) timed out; daemon status: %s", r, value, buf);
            t0 = first = last = -1;
            for (int i = 0; i < n; i++) drain(fds[i]);
        }
        printf("%d,%lld,%lld,%lld,%s\n", r, (long long)t0, (long long)first, (long long)last, portal ? "portal" : "set");
        fflush(stdout);
        usleep(portal || mixed ? 60000 : 20000);  // let the second portal signal, dconf and the daemon settle
        if (direct) { dbus_connection_read_write(direct, 0); DBusMessage *m; while ((m = dbus_connection_pop_message(direct))) dbus_message_unref(m); }
    }
    if (direct == NULL || mixed) {
        write_all(ctl, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"set\",\"params\":{\"override\":\"system\"}}\n");
        read_line(ctl, buf, sizeof buf);
    }
    return 0;
}

#ifdef PROBE_URING
#include <liburing.h>
// The N sends of one round submitted together: one system call for all of them.
static void send_all_uring(int *out, int n, const char *line, int bytes) {
    static struct io_uring ring;
    static int ready;
    if (!ready) {
        if (io_uring_queue_init(4096, &ring, 0) < 0 || io_uring_register_files(&ring, out, (unsigned)n) < 0) die("io_uring");
        ready = 1;
    }
    for (int i = 0; i < n;) {
        int batch = 0;
        for (; i < n && batch < 4096; i++, batch++) {
            struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
            io_uring_prep_send(sqe, i, line, (size_t)bytes, MSG_DONTWAIT | MSG_NOSIGNAL);
            sqe->flags |= IOSQE_FIXED_FILE;
        }
        io_uring_submit_and_wait(&ring, (unsigned)batch);
        struct io_uring_cqe *cqe;
        unsigned head, seen = 0;
        io_uring_for_each_cqe(&ring, head, cqe) seen++;
        io_uring_cq_advance(&ring, seen);
    }
}
#endif

static int cmd_floor(int n, int rounds, int bytes, int uring) {
#ifndef PROBE_URING
    (void)uring;
#endif
    int *fds = calloc((size_t)n, sizeof(int)), *out = calloc((size_t)n, sizeof(int)), go[2];
    for (int i = 0; i < n; i++) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0) die("socketpair");
        fds[i] = sv[0];
        out[i] = sv[1];
    }
    if (pipe(go) != 0) die("pipe");
    char *line = malloc((size_t)bytes);
    memset(line, ' ', (size_t)bytes);
    memcpy(line, "{\"method\":\"changed\"}", 20);
    line[bytes - 1] = '\n';
    pid_t writer = fork();
    if (writer == 0) {
        close(go[1]);
        char c;
        while (read(go[0], &c, 1) == 1) {
#ifdef PROBE_URING
            if (uring) { send_all_uring(out, n, line, bytes); continue; }
#endif
            for (int i = 0; i < n; i++) send(out[i], line, (size_t)bytes, MSG_DONTWAIT | MSG_NOSIGNAL);
        }
        _exit(0);
    }
    for (int i = 0; i < n; i++) close(out[i]);
    int ep = epoll_of(fds, n);
    printf("round,t0,first,last\n");
    for (int r = 0; r < rounds; r++) {
        int64_t t0 = now(), first, last;
        if (write(go[1], "x", 1) != 1) die("write");
        if (!round_wait(ep, fds, n, NULL, 0, &t0, &first, &last, 0)) exit(3);
        printf("%d,%lld,%lld,%lld\n", r, (long long)t0, (long long)first, (long long)last);
        fflush(stdout);
        usleep(20000);
    }
    close(go[1]);
    waitpid(writer, NULL, 0);
    return 0;
}

static int cmd_dbus(const char *address, int n, int rounds) {
    int *fds = calloc((size_t)n, sizeof(int));
    for (int i = 0; i < n; i++) {
        DBusConnection *c = bus_open(address);
        bus_match(c, "type='signal',interface='org.example.Bench',member='Changed'");
        fds[i] = bus_fd(c);
    }
    DBusConnection *emitter = bus_open(address);
    for (int i = 0; i < n; i++) drain(fds[i]);  // NameAcquired and anything else that came after registration
    int ep = epoll_of(fds, n);
    printf("round,t0,first,last\n");
    for (int r = 0; r < rounds; r++) {
        DBusMessage *m = dbus_message_new_signal("/org/example/Bench", "org.example.Bench", "Changed");
        const char *s = r % 2 == 0 ? "dark" : "light";
        dbus_message_append_args(m, DBUS_TYPE_STRING, &s, DBUS_TYPE_INVALID);
        int64_t t0 = now(), first, last;
        dbus_connection_send(emitter, m, NULL);
        dbus_connection_flush(emitter);
        dbus_message_unref(m);
        // Any data is the signal: the listeners' connections carry nothing else.
        if (!round_wait(ep, fds, n, NULL, 0, &t0, &first, &last, 1)) exit(3);
        printf("%d,%lld,%lld,%lld\n", r, (long long)t0, (long long)first, (long long)last);
        fflush(stdout);
        usleep(20000);
        for (int i = 0; i < n; i++) drain(fds[i]);
    }
    return 0;
}

static int cmd_hold(const char *path, int n) {
    int *fds = subscribe_n(path, n);
    int ep = epoll_of(fds, n);
    struct epoll_event e = {.events = EPOLLIN, .data.u32 = (uint32_t)n};
    epoll_ctl(ep, EPOLL_CTL_ADD, 0, &e);
    printf("ready\n");
    fflush(stdout);
    char buf[65536];
    struct epoll_event ev[256];
    for (;;) {
        int k = epoll_wait(ep, ev, 256, -1);
        if (k < 0) { if (errno == EINTR) continue; die("epoll_wait"); }
        for (int i = 0; i < k; i++) {
            int idx = (int)ev[i].data.u32;
            if (idx == n) { if (read(0, buf, sizeof buf) <= 0) return 0; continue; }
            if (recv(fds[idx], buf, sizeof buf, MSG_DONTWAIT) == 0) { fprintf(stderr, "subscriber %d closed\n", idx); return 1; }
        }
    }
}

static int cmd_readrtt(int rounds) {
    DBusConnection *c = bus_open(NULL);
    for (int r = 0; r < rounds; r++) {
        DBusMessage *m = dbus_message_new_method_call("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop",
                                                      "org.freedesktop.portal.Settings", "Read");
        const char *ns = "org.freedesktop.appearance", *key = "color-scheme";
        dbus_message_append_args(m, DBUS_TYPE_STRING, &ns, DBUS_TYPE_STRING, &key, DBUS_TYPE_INVALID);
        DBusError err; dbus_error_init(&err);
        int64_t t0 = now();
        DBusMessage *reply = dbus_connection_send_with_reply_and_block(c, m, 30000, &err);
        int64_t t1 = now();
        if (!reply) { fprintf(stderr, "Read: %s\n", err.message); exit(2); }
        printf(r == 0 ? "first,%lld\n" : "%lld\n", (long long)(t1 - t0));
        dbus_message_unref(reply);
        dbus_message_unref(m);
    }
    return 0;
}

static int cmd_startup(const char *path, int rounds, char **argv) {
    const char *get = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"get\"}\n";
    char buf[4096];
    for (int r = 0; r < rounds; r++) {
        unlink(path);
        int64_t t0 = now();
        pid_t pid = spawn(argv, 1);
        int fd;
        for (;;) {
            fd = connect_unix(path);
            if (fd >= 0) break;
            if (now() - t0 > 10LL * 1000000000) { fprintf(stderr, "no socket after 10 s\n"); exit(3); }
            usleep(50);
        }
        write_all(fd, get);
        ssize_t n = read_line(fd, buf, sizeof buf);
        int64_t t1 = now();
        if (n < 0 || !strstr(buf, "\"result\"")) { fprintf(stderr, "get failed: %s\n", n < 0 ? "eof" : buf); exit(2); }
        close(fd);
        printf("%lld\n", (long long)(t1 - t0));
        fflush(stdout);
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
    }
    return 0;
}

static int cmd_setload(const char *path, int clients, double seconds) {
    int pipes[2];
    if (pipe(pipes) != 0) die("pipe");
    for (int c = 0; c < clients; c++) {
        if (fork() == 0) {
            int fd = connect_unix(path);
            if (fd < 0) die("connect");
            char req[256], buf[4096];
            long done = 0;
            int64_t end = now() + (int64_t)(seconds * 1e9);
            while (now() < end) {
                snprintf(req, sizeof req, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"set\",\"params\":{\"override\":\"%s\"}}\n",
                         done, (done + c) % 2 ? "dark" : "light");
                write_all(fd, req);
                if (read_line(fd, buf, sizeof buf) < 0 || !strstr(buf, "\"result\"")) { fprintf(stderr, "set: %s\n", buf); _exit(2); }
                done++;
            }
            if (write(pipes[1], &done, sizeof done) != sizeof done) _exit(2);
            _exit(0);
        }
    }
    long total = 0;
    for (int c = 0; c < clients; c++) { long d; if (read(pipes[0], &d, sizeof d) == sizeof d) total += d; }
    while (wait(NULL) > 0) {}
    printf("%ld,%.3f\n", total, seconds);
    return 0;
}

static DBusMessage *mode_get(void) {
    DBusMessage *m = dbus_message_new_method_call("io.github.appearanced.Appearance1", "/io/github/appearanced/Appearance1",
                                                  "org.freedesktop.DBus.Properties", "Get");
    const char *iface = "io.github.appearanced.Appearance1", *prop = "Mode";
    dbus_message_append_args(m, DBUS_TYPE_STRING, &iface, DBUS_TYPE_STRING, &prop, DBUS_TYPE_INVALID);
    return m;
}

static DBusMessage *toggle(void) {
    DBusMessage *m = dbus_message_new_method_call("io.github.appearanced.Appearance1", "/io/github/appearanced/Appearance1",
                                                  "io.github.appearanced.Appearance1", "Toggle");
    DBusMessageIter args, options;
    dbus_message_iter_init_append(m, &args);
    dbus_message_iter_open_container(&args, DBUS_TYPE_ARRAY, "{sv}", &options);
    dbus_message_iter_close_container(&args, &options);
    return m;
}

static volatile sig_atomic_t calls_stop;
static void on_term(int sig) { (void)sig; calls_stop = 1; }

// One bus connection keeps `window` calls made by `make` outstanding, a new one for each reply, until `count`
// are answered (count < 0: no bound), `seconds` pass or SIGTERM comes (with the figures printed); prints calls
// answered, errors and seconds; with `report`, the first error's name to stderr.
static int bus_calls(const char *what, DBusMessage *(*make)(void), const char *address, long count, int window,
                     double seconds, int report) {
    signal(SIGTERM, on_term);
    DBusConnection *c = bus_open(address);
    long answered = 0, errors = 0, sent = 0;
    int64_t t0 = now(), end = t0 + (int64_t)(seconds * 1e9);
    for (; sent < window && (count < 0 || sent < count); sent++) {
        DBusMessage *m = make(); dbus_connection_send(c, m, NULL); dbus_message_unref(m);
    }
    while ((count < 0 || answered + errors < sent) && now() < end && !calls_stop) {
        if (!dbus_connection_read_write(c, 100)) { fprintf(stderr, "%s: disconnected\n", what); exit(2); }
        DBusMessage *reply;
        while ((reply = dbus_connection_pop_message(c))) {
            int type = dbus_message_get_type(reply);
            if (type == DBUS_MESSAGE_TYPE_METHOD_RETURN || type == DBUS_MESSAGE_TYPE_ERROR) {
                if (type == DBUS_MESSAGE_TYPE_METHOD_RETURN) answered++;
                else if (errors++ == 0 && report) fprintf(stderr, "%s: %s\n", what, dbus_message_get_error_name(reply));
                if ((count < 0 || sent < count) && now() < end) {
                    DBusMessage *m = make(); dbus_connection_send(c, m, NULL); dbus_message_unref(m); sent++;
                }
            }
            dbus_message_unref(reply);
        }
    }
    dbus_connection_flush(c);
    printf("%ld,%ld,%.3f\n", answered, errors, (now() - t0) / 1e9);
    return 0;
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    if (argc >= 6 && !strcmp(argv[1], "sock")) return cmd_sock(argv[2], atoi(argv[3]), atoi(argv[4]), argv[5]);
    if (argc >= 5 && !strcmp(argv[1], "dbus")) return cmd_dbus(argv[2], atoi(argv[3]), atoi(argv[4]));
    if (argc >= 5 && !strcmp(argv[1], "floor")) {
        int uring = argc >= 6 && !strcmp(argv[5], "uring");
#ifndef PROBE_URING
        if (uring) { fprintf(stderr, "floor uring: this probe was built without -DPROBE_URING\n"); return 64; }
#endif
        return cmd_floor(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), uring);
    }
    if (argc >= 4 && !strcmp(argv[1], "hold")) return cmd_hold(argv[2], atoi(argv[3]));
    if (argc >= 3 && !strcmp(argv[1], "readrtt")) return cmd_readrtt(atoi(argv[2]));
    if (argc >= 6 && !strcmp(argv[1], "startup") && !strcmp(argv[4], "--")) return cmd_startup(argv[2], atoi(argv[3]), argv + 5);
    if (argc >= 5 && !strcmp(argv[1], "setload")) return cmd_setload(argv[2], atoi(argv[3]), atof(argv[4]));
    if (argc >= 5 && !strcmp(argv[1], "busflood"))
        return bus_calls("busflood", mode_get, argv[2], -1, atoi(argv[4]), atof(argv[3]), 0);
    if (argc >= 6 && !strcmp(argv[1], "bustoggle"))
        return bus_calls("bustoggle", toggle, argv[2], atol(argv[3]), atoi(argv[4]), atof(argv[5]), 1);
    fprintf(stderr, "usage: see the comment at the top of bench/probe.c\n");
    return 64;
}
