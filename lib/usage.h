/*
 * usage.h - what a process used, for its result JSON: peak resident
 * memory, CPU time, pinned (registered) memory, open file descriptors and
 * threads at the time of the
 * call (docs/scale.md reads them per point to show how each grows).
 */
#ifndef OQB_USAGE_H
#define OQB_USAGE_H

#include <stddef.h>
#include <jansson.h>

/* {"maxrss_kb", "user_s", "sys_s", "pinned_kb", "fds", "threads"}; a figure that
 * cannot be read is left out, never reported as 0. */
json_t *usage_json(void);

/* The first line of a small file (/proc, /sys), without its newline, in
 * buf; "" when it cannot be read.  Returns buf. */
const char *file_first_line(const char *path, char *buf, size_t len);

/* The value of a "Name: value" line of /proc/self/status (after the
 * colon, spaces and newline kept) in buf; "" when there is none. */
const char *proc_status_field(const char *name, char *buf, size_t len);

#endif
