/*
 * log.h - one-line diagnostics on stderr, tagged with who wrote them.
 *
 * Every process of an experiment (driver, servers, clients, possibly on
 * several hosts) writes to its own stderr, and the launcher gathers those
 * streams into per-process logs.  Each line therefore carries a prefix
 * "[host:role:rank]" so a merged log still says where a line came from:
 *
 *   [node3:server:1] warning: ring 2 full, client waits
 *
 * Levels are the syslog numbers (so this header can sit next to
 * <syslog.h>): LOG_ERR < LOG_WARN < LOG_INFO < LOG_DEBUG.  Lines above the
 * current level are dropped.  The level starts at LOG_INFO, or at what the
 * environment variable OQB_LOG names ("error", "warn", "info", "debug").
 *
 * log_msg() is thread-safe: each line is formatted into a stack buffer and
 * written with a single stdio call, so lines from different threads never
 * interleave.
 */
#ifndef OQB_LOG_H
#define OQB_LOG_H

#include <stdarg.h>
#include <stddef.h>

/* Same values as <syslog.h>; identical redefinitions are harmless. */
#ifndef LOG_ERR
#define LOG_ERR 3
#endif
#ifndef LOG_INFO
#define LOG_INFO 6
#endif
#ifndef LOG_DEBUG
#define LOG_DEBUG 7
#endif
#define LOG_WARN 4

/*
 * Sets the "[host:role:rank]" prefix.  host NULL means this machine's host
 * name; role NULL leaves the role out; rank < 0 leaves the rank out.  Call
 * it once at start-up, before other threads log.
 */
void log_set_prefix(const char *host, const char *role, int rank);

/* Sets the most verbose level that is printed (LOG_ERR .. LOG_DEBUG). */
void log_set_level(int level);

/* The current level (after OQB_LOG was read). */
int log_get_level(void);

/*
 * The level named by s ("error"/"err", "warn"/"warning", "info", "debug",
 * any case), or -1 if s names none of them.  For --log style options.
 */
int log_level_from_name(const char *s);

/*
 * A program's --log option: with name NULL nothing changes; else the level
 * it names is set, or "PROG: --log NAME: expected error, warn, info or
 * debug" goes to stderr and -1 comes back (the caller exits 2).
 */
int log_level_option(const char *prog, const char *name);

/*
 * Prints one line "[prefix] fmt..." to stderr if level is enabled.  Error
 * and warning lines get "error: " / "warning: " after the prefix.  A
 * trailing newline in fmt is optional; lines longer than about 1 KiB are
 * cut short and end in "...".
 */
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_vmsg(int level, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/*
 * Writes a formatted message into a caller's error buffer, the Redis
 * anet.c way (functions return -1 and say why in err).  Does nothing when
 * err is NULL or errlen is 0; a long message is cut to fit.
 */
void err_set(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
