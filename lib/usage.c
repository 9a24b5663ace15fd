/*
 * usage.c - see usage.h.  getrusage for memory and CPU time; /proc/self
 * for the descriptors and threads (Linux; left out elsewhere).
 */
#include "usage.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

/* Entries of a /proc/self directory, not counting . and .. (-1: none). */
static long count_entries(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return -1;
	long n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

const char *file_first_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	buf[0] = '\0';
	if (f) {
		if (!fgets(buf, (int)len, f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

const char *proc_status_field(const char *name, char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	size_t n = strlen(name);
	buf[0] = '\0';
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, name, n) && line[n] == ':') {
			snprintf(buf, len, "%s", line + n + 1);
			break;
		}
	if (f)
		fclose(f);
	return buf;
}

/* A "Name:   N kB" line of /proc/self/status, in KiB (-1: not there). */
static long status_kb(const char *name)
{
	char v[64];
	long kb;
	return sscanf(proc_status_field(name, v, sizeof v), "%ld", &kb) == 1 ? kb : -1;
}

json_t *usage_json(void)
{
	json_t *o = json_object();
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		json_object_set_new(o, "maxrss_kb", json_integer(ru.ru_maxrss));
		json_object_set_new(o, "user_s", json_real((double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6));
		json_object_set_new(o, "sys_s", json_real((double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6));
	}
	/* VmPin: what ibv_reg_mr pinned (the kernel's pinned_vm), which
	 * RLIMIT_MEMLOCK bounds (lib/proclimits.c) */
	long pin = status_kb("VmPin");
	if (pin >= 0)
		json_object_set_new(o, "pinned_kb", json_integer(pin));
	/* the directory stream's own descriptor is one of the entries */
	long fds = count_entries("/proc/self/fd");
	if (fds > 0)
		json_object_set_new(o, "fds", json_integer(fds - 1));
	long th = count_entries("/proc/self/task");
	if (th > 0)
		json_object_set_new(o, "threads", json_integer(th));
	return o;
}
