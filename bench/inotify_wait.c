/* The physical floor of a2a's wake path: a raw inotify waiter on the same rename protocol.
 *
 *   usage: inotify_wait DIR
 *
 * Watches DIR (a2a's ROOT/slots) for entries renamed or written into it. For every such
 * entry whose name does not start with '.', it opens and reads the whole file, then takes
 * CLOCK_MONOTONIC (the clock bench/lib/clock.ts reads through bun:ffi) and prints
 *
 *   got NAME MONO_MS NBYTES
 *   armed
 *
 * "armed" is printed once the watch exists and again after each report (the watch never
 * goes away, so the waiter is armed again at once). It exits on EOF of stdin or SIGTERM.
 * Built by bench/run.ts with `gcc -O2` when gcc exists.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

static char content[1 << 20];

static void say(const char *s) {
  size_t n = strlen(s), off = 0;
  while (off < n) {
    ssize_t w = write(1, s + off, n - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      exit(1);
    }
    off += (size_t)w;
  }
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: inotify_wait DIR\n");
    return 2;
  }
  const char *dir = argv[1];
  int fd = inotify_init1(IN_CLOEXEC);
  if (fd < 0 || inotify_add_watch(fd, dir, IN_MOVED_TO | IN_CLOSE_WRITE) < 0) {
    perror("inotify");
    return 1;
  }
  say("armed\n");
  char buf[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
  struct pollfd fds[2] = {{.fd = fd, .events = POLLIN}, {.fd = 0, .events = POLLIN}};
  for (;;) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return 1;
    }
    if (fds[1].revents) { /* stdin: EOF or a line means quit */
      return 0;
    }
    if (!(fds[0].revents & POLLIN)) continue;
    ssize_t len = read(fd, buf, sizeof buf);
    if (len <= 0) continue;
    for (char *p = buf; p < buf + len;) {
      struct inotify_event *ev = (struct inotify_event *)p;
      p += sizeof(struct inotify_event) + ev->len;
      if (!ev->len || ev->name[0] == '.') continue;
      char path[PATH_MAX];
      snprintf(path, sizeof path, "%s/%s", dir, ev->name);
      int f = open(path, O_RDONLY | O_CLOEXEC);
      if (f < 0) continue; /* gone again: not ours to report */
      ssize_t total = 0, r;
      while ((r = read(f, content + total, sizeof content - (size_t)total)) > 0) total += r;
      close(f);
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      char line[PATH_MAX + 96];
      snprintf(line, sizeof line, "got %s %.6f %zd\narmed\n", ev->name, ts.tv_sec * 1e3 + ts.tv_nsec / 1e6, total);
      say(line);
    }
  }
}
