/*
 * log.c - one-line diagnostics on stderr, tagged "[host:role:rank]".
 *
 * The prefix is built once by log_set_prefix(); log_msg() only reads it.
 * The level is read from OQB_LOG exactly once (pthread_once), the first
 * time anything asks for it, so an explicit log_set_level() made after
 * that always wins over the environment.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <pthread.h>

#include "log.h"

#define LOG_LINE_MAX 1024

static char log_prefix[256] = "";
static int log_level = LOG_INFO;
static pthread_once_t log_env_once = PTHREAD_ONCE_INIT;

static void log_read_env(void)
{
	const char *s = getenv("OQB_LOG");
	int l;

	if (s == NULL || *s == '\0')
		return;
	l = log_level_from_name(s);
	if (l >= 0) {
		log_level = l;
		return;
	}
	/* Say so once rather than silently ignoring a typo like "degub". */
	fprintf(stderr, "warning: OQB_LOG=\"%s\" is not a log level; use one of "
		"error, warn, info, debug (using info)\n", s);
}

int log_level_option(const char *prog, const char *name)
{
	if (!name)
		return 0;
	int lv = log_level_from_name(name);
	if (lv < 0) {
		fprintf(stderr, "%s: --log %s: expected error, warn, info or debug\n", prog, name);
		return -1;
	}
	log_set_level(lv);
	return 0;
}

int log_level_from_name(const char *s)
{
	if (s == NULL)
		return -1;
	if (!strcasecmp(s, "error") || !strcasecmp(s, "err"))
		return LOG_ERR;
	if (!strcasecmp(s, "warn") || !strcasecmp(s, "warning"))
		return LOG_WARN;
	if (!strcasecmp(s, "info"))
		return LOG_INFO;
	if (!strcasecmp(s, "debug"))
		return LOG_DEBUG;
	return -1;
}

void log_set_level(int level)
{
	pthread_once(&log_env_once, log_read_env);
	if (level < LOG_ERR)
		level = LOG_ERR;
	if (level > LOG_DEBUG)
		level = LOG_DEBUG;
	log_level = level;
}

int log_get_level(void)
{
	pthread_once(&log_env_once, log_read_env);
	return log_level;
}

void log_set_prefix(const char *host, const char *role, int rank)
{
	char hostbuf[128];
	size_t n;

	if (host == NULL) {
		if (gethostname(hostbuf, sizeof hostbuf) != 0)
			strcpy(hostbuf, "?");
		hostbuf[sizeof hostbuf - 1] = '\0';
		host = hostbuf;
	}
	n = (size_t)snprintf(log_prefix, sizeof log_prefix, "[%s", host);
	if (role != NULL && n < sizeof log_prefix)
		n += (size_t)snprintf(log_prefix + n, sizeof log_prefix - n, ":%s", role);
	if (rank >= 0 && n < sizeof log_prefix)
		n += (size_t)snprintf(log_prefix + n, sizeof log_prefix - n, ":%d", rank);
	if (n < sizeof log_prefix)
		snprintf(log_prefix + n, sizeof log_prefix - n, "] ");
}

void log_vmsg(int level, const char *fmt, va_list ap)
{
	char line[LOG_LINE_MAX];
	const char *tag = "";
	size_t n, cap = sizeof line - 2;   /* room for "\n" and NUL */
	int r;

	if (level > log_get_level())
		return;
	if (level <= LOG_ERR)
		tag = "error: ";
	else if (level == LOG_WARN)
		tag = "warning: ";

	r = snprintf(line, cap, "%s%s", log_prefix, tag);
	n = r < 0 ? 0 : ((size_t)r < cap ? (size_t)r : cap - 1);
	r = vsnprintf(line + n, cap - n, fmt, ap);
	if (r < 0) {
		line[n] = '\0';
	} else if ((size_t)r >= cap - n) {
		/* Cut short: mark it so nobody mistakes it for the whole line. */
		n = cap - 1;
		memcpy(line + n - 3, "...", 3);
		line[n] = '\0';
	} else {
		n += (size_t)r;
	}
	n = strlen(line);
	if (n == 0 || line[n - 1] != '\n') {
		line[n++] = '\n';
		line[n] = '\0';
	}
	/* One call: stdio locks the stream, so lines never interleave. */
	fputs(line, stderr);
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

void err_set(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}
