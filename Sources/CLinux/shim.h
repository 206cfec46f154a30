#ifndef CLINUX_SHIM_H
#define CLINUX_SHIM_H
/* Linux calls Glibc does not expose to Swift, wrapped so Swift sees plain C types. */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/sendfile.h>
#include <sys/statvfs.h>
#include <sys/inotify.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/resource.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <signal.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdint.h>
#include <time.h>
#include <malloc.h>

/* epoll_event is packed on x86_64; this unpacked twin is what Swift sees. */
typedef struct { uint32_t events; uint64_t data; } clinux_event;

static const uint32_t CLINUX_EPOLLIN = EPOLLIN;
static const uint32_t CLINUX_EPOLLOUT = EPOLLOUT;
static const uint32_t CLINUX_EPOLLERR = EPOLLERR;
static const uint32_t CLINUX_EPOLLHUP = EPOLLHUP;
static const uint32_t CLINUX_EPOLLRDHUP = EPOLLRDHUP;
static const uint32_t CLINUX_EPOLLEXCLUSIVE = EPOLLEXCLUSIVE;

static inline int clinux_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

static inline int clinux_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data) {
    struct epoll_event ev;
    ev.events = events;
    ev.data.u64 = data;
    return epoll_ctl(epfd, op, fd, &ev);
}
static inline int clinux_epoll_add(int epfd, int fd, uint32_t events, uint64_t data) {
    return clinux_epoll_ctl(epfd, EPOLL_CTL_ADD, fd, events, data);
}
static inline int clinux_epoll_mod(int epfd, int fd, uint32_t events, uint64_t data) {
    return clinux_epoll_ctl(epfd, EPOLL_CTL_MOD, fd, events, data);
}
static inline int clinux_epoll_del(int epfd, int fd) {
    return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
}

/* Waits and copies the packed events into `out` (at most `max`, at most 256). */
static inline int clinux_epoll_wait(int epfd, clinux_event *out, int max, int timeout_ms) {
    struct epoll_event evs[256];
    if (max > 256) max = 256;
    int n = epoll_wait(epfd, evs, max, timeout_ms);
    for (int i = 0; i < n; i++) { out[i].events = evs[i].events; out[i].data = evs[i].data.u64; }
    return n;
}

static inline int clinux_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

static inline int clinux_accept(int fd, struct sockaddr_storage *addr, socklen_t *len) {
    return accept4(fd, (struct sockaddr *)addr, len, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

static inline int clinux_socket(int family) {
    return socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
}

static inline ssize_t clinux_sendfile(int out_fd, int in_fd, int64_t *offset, size_t count) {
    off_t off = (off_t)*offset;
    ssize_t n = sendfile(out_fd, in_fd, &off, count);
    *offset = (int64_t)off;
    return n;
}

/* Free bytes for an unprivileged user on the volume holding `path`; -1 on error. */
static inline int64_t clinux_free_bytes(const char *path) {
    struct statvfs s;
    if (statvfs(path, &s) != 0) return -1;
    return (int64_t)s.f_bavail * (int64_t)s.f_frsize;
}

static inline int clinux_set_int_option(int fd, int level, int name, int value) {
    return setsockopt(fd, level, name, &value, sizeof(value));
}
static inline int clinux_nodelay(int fd) { return clinux_set_int_option(fd, IPPROTO_TCP, TCP_NODELAY, 1); }
static inline int clinux_reuseaddr(int fd) { return clinux_set_int_option(fd, SOL_SOCKET, SO_REUSEADDR, 1); }

/* Monotonic milliseconds (coarse: cheap enough to read per loop iteration). */
static inline uint64_t clinux_monotonic_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)(ts.tv_nsec / 1000000);
}

/* Monotonic nanoseconds. */
static inline uint64_t clinux_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Blocks the given signals in the calling thread (threads created later inherit the mask). */
static inline int clinux_block_signals(const int *signals, int count) {
    sigset_t set;
    sigemptyset(&set);
    for (int i = 0; i < count; i++) sigaddset(&set, signals[i]);
    return pthread_sigmask(SIG_BLOCK, &set, NULL);
}
/* Waits for one of the given signals; returns its number. */
static inline int clinux_wait_signal(const int *signals, int count) {
    sigset_t set;
    sigemptyset(&set);
    for (int i = 0; i < count; i++) sigaddset(&set, signals[i]);
    int sig = 0;
    if (sigwait(&set, &sig) != 0) return -1;
    return sig;
}
/* Peak resident set size of this process, in KiB. */
static inline long clinux_peak_rss_kib(void) {
    struct rusage u;
    if (getrusage(RUSAGE_SELF, &u) != 0) return -1;
    return u.ru_maxrss;
}
/* inotify: a non-blocking instance, and a watch for the changes that matter to a directory of files. */
static inline int clinux_inotify_open(void) { return inotify_init1(IN_NONBLOCK | IN_CLOEXEC); }
static inline int clinux_inotify_watch_directory(int fd, const char *path) {
    return inotify_add_watch(fd, path, IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB | IN_MODIFY);
}
/* Waits up to timeout_ms for events, then discards them; returns 1 if there were any, 0 on timeout, -1 on error. */
static inline int clinux_inotify_wait(int fd, int timeout_ms) {
    struct pollfd p = { .fd = fd, .events = POLLIN, .revents = 0 };
    int n = poll(&p, 1, timeout_ms);
    if (n <= 0) return n;
    char buffer[8192];
    while (read(fd, buffer, sizeof(buffer)) > 0) {}
    return 1;
}

/* Sets the calling thread's nice value (Linux: per thread). Returns 0, or -1 when not permitted. */
static inline int clinux_set_thread_nice(int nice) {
    return setpriority(PRIO_PROCESS, (id_t)gettid(), nice);
}

/* Keeps allocations up to `bytes` in the heap instead of fresh mmap/munmap each time (large buffers that are
   freed and allocated again then reuse memory instead of faulting in new pages). */
static inline void clinux_keep_large_allocations_in_heap(int bytes) {
    mallopt(M_MMAP_THRESHOLD, bytes);
    mallopt(M_TRIM_THRESHOLD, bytes * 2);
}
/* Lets every thread allocate from at most `count` malloc arenas (glibc otherwise gives threads arenas of their own,
   up to 8 per core, and a buffer freed in one arena is not reused by a thread of another: fresh pages each time). */
static inline void clinux_limit_malloc_arenas(int count) { (void)mallopt(M_ARENA_MAX, count); }
/* Serves allocations of at least `bytes` with their own mappings, always (a fixed threshold: glibc otherwise
   raises it after each free, and large freed buffers then stay in the heap). */
static inline void clinux_map_large_allocations(int bytes) { (void)mallopt(M_MMAP_THRESHOLD, bytes); }
/* Returns the free pages of every malloc arena to the system (after a peak of buffered request bodies). */
static inline void clinux_release_free_memory(void) { (void)malloc_trim(0); }
#endif
