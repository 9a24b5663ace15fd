/*
 * ctl.h - the control channel between the driver and each process.
 *
 * TCP, newline-delimited JSON, every message carries "v": CTL_VERSION and
 * "type".  One connection per process, opened by the process to the
 * driver's --ctl HOST:PORT.  The sequence for one measurement point:
 *
 *   process -> driver  {"v":1,"type":"HELLO","role":"server","rank":0,
 *                       "host":"h1","pid":123,"endpoint":"...", ...}
 *                      sent once the process is ready to serve/send.
 *   driver -> process  {"v":1,"type":"GO","start_in_ns":N}   (clients)
 *                      start the measured run N ns after receipt.
 *   driver -> process  {"v":1,"type":"GO","start_in_ns":N,"warmup_ns":W,
 *                       "duration_ns":D}                     (servers)
 *                      the clients' measured window, [N + W, N + W + D)
 *                      after receipt (D = 0: open-ended); servers that
 *                      do not use it ignore it.
 *   process -> driver  {"v":1,"type":"DONE","result":{...}}
 *   driver -> process  {"v":1,"type":"STOP"}                 (servers)
 *                      finish, answer with DONE (server stats), exit.
 *   driver -> process  {"v":1,"type":"BYE"}  or EOF: exit now.
 *   process -> driver  {"v":1,"type":"ERROR","message":"..."}  at any time,
 *                      also before HELLO (then the process exits).
 *
 * Every message a process sends carries its "role" and "rank" (ctl_send
 * adds them), so the driver can attribute an ERROR sent before HELLO.
 *
 * A process whose control connection closes (driver killed, host gone)
 * exits by itself: ctl_start_watch() runs a thread that reads the socket
 * and sets ctl_lost on EOF; the owner polls it and exits within
 * CTL_LOST_GRACE_MS, or the watcher ends the process itself after that.
 * Nothing is ever killed by name.
 */
#ifndef OQB_CTL_H
#define OQB_CTL_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define CTL_VERSION 1
#define CTL_LOST_GRACE_MS 2000
#define CTL_EXIT_LOST 3          /* exit status of a process whose driver went away */

struct ctl;

/* Connects to HOST:PORT (retrying for up to timeout_ms). NULL + err on failure. */
struct ctl *ctl_connect(const char *hostport, const char *role, unsigned rank,
			int timeout_ms, char *err, size_t errlen);

/* Nanoseconds since this process started (its constructors ran). */
uint64_t ctl_uptime_ns(void);

/* Sends HELLO; `info` (may be NULL) is merged into the message.  HELLO
 * carries up_ns, ctl_uptime_ns() at the time it is sent. */
int ctl_hello(struct ctl *c, const json_t *info, char *err, size_t errlen);

/* Waits for the next message from the driver (GO/STOP/BYE...).  Returns
 * the message (caller decrefs), or NULL on timeout / EOF with err set. */
json_t *ctl_recv(struct ctl *c, int timeout_ms, char *err, size_t errlen);

/* Sends DONE with the result object (not stolen). */
int ctl_done(struct ctl *c, const json_t *result, char *err, size_t errlen);

/* Sends any message (adds "v"); for ERROR reports:
 * {"type":"ERROR","message":"..."} */
int ctl_send(struct ctl *c, json_t *msg /* stolen */, char *err, size_t errlen);

/*
 * After the handshake: a thread that reads the socket.  Messages are queued
 * for ctl_recv; EOF sets *lost_flag (if not NULL) and, if the process has
 * not exited CTL_LOST_GRACE_MS later, calls on_lost(arg) (cleanup) and
 * _exit(CTL_EXIT_LOST).
 */
int ctl_start_watch(struct ctl *c, volatile int *lost_flag, void (*on_lost)(void *), void *arg);

void ctl_close(struct ctl *c);

/*
 * Driver side.  The driver listens once per run and accepts one connection
 * per process; it multiplexes them with poll() on ctl_fd() and, when a fd
 * is readable, calls ctl_pump() and then ctl_pop() until it returns NULL.
 */

/* Listens on host (NULL or "0.0.0.0": all addresses) and *port (0: any
 * free port; the chosen port is written back).  Returns the fd, or -1. */
int ctl_listen(const char *host, unsigned *port, char *err, size_t errlen);

/* Accepts one pending connection (non-blocking socket).  NULL + err. */
struct ctl *ctl_accept(int lfd, char *err, size_t errlen);

/*
 * Wraps fd, already connected, as the driver's end of a control channel
 * (ctl_accept does this after accept; tests and the fuzz target pass any
 * readable fd, e.g. a file of recorded messages).  The ctl owns fd from
 * here, also on failure.  NULL + err.
 */
struct ctl *ctl_from_fd(int fd, char *err, size_t errlen);

int ctl_fd(const struct ctl *c);

/* "ip:port" of the other end, for messages. */
const char *ctl_peer(const struct ctl *c);

/* Reads what is available and queues complete messages.  Returns 1 (read
 * something, maybe nothing complete), 0 on EOF (queued messages remain
 * poppable), -1 on a read or protocol error (err names the peer). */
int ctl_pump(struct ctl *c, char *err, size_t errlen);

/* Next queued message (caller decrefs), or NULL. */
json_t *ctl_pop(struct ctl *c);

#endif
