/*
 * test_log.c - log line format, level filtering and whole lines under threads.
 *
 * stderr is pointed at a temporary file while a case runs, then read back.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "unit.h"

static char cap_path[256];
static int cap_fd = -1, cap_saved = -1;

static int capture_start(void)
{
	const char *dir = getenv("TMPDIR");

	snprintf(cap_path, sizeof cap_path, "%s/oqb_log_XXXXXX", dir && *dir ? dir : P_tmpdir);
	cap_fd = mkstemp(cap_path);
	if (cap_fd < 0)
		return -1;
	fflush(stderr);
	cap_saved = dup(2);
	dup2(cap_fd, 2);
	return 0;
}

/* Restores stderr; returns what was written (malloc'd, caller frees). */
static char *capture_end(void)
{
	char *buf;
	off_t n;

	fflush(stderr);
	dup2(cap_saved, 2);
	close(cap_saved);
	n = lseek(cap_fd, 0, SEEK_END);
	buf = calloc(1, (size_t)n + 1);
	if (buf != NULL && n > 0 && pread(cap_fd, buf, (size_t)n, 0) != n)
		buf[0] = '\0';
	close(cap_fd);
	unlink(cap_path);
	return buf;
}

TEST(prefix_and_tags)
{
	char *out;

	log_set_level(LOG_INFO);
	REQUIRE(capture_start() == 0);
	log_set_prefix("node3", "server", 1);
	log_msg(LOG_INFO, "ring %d ready", 2);
	log_msg(LOG_WARN, "ring %d full\n", 2);
	log_msg(LOG_ERR, "cannot map %s", "x.pmem");
	log_set_prefix("h", NULL, -1);
	log_msg(LOG_INFO, "bare");
	log_set_prefix("h", "driver", -1);
	log_msg(LOG_INFO, "no rank");
	out = capture_end();
	REQUIRE(out != NULL);
	CHECK(strcmp(out, "[node3:server:1] ring 2 ready\n"
		     "[node3:server:1] warning: ring 2 full\n"
		     "[node3:server:1] error: cannot map x.pmem\n"
		     "[h] bare\n"
		     "[h:driver] no rank\n") == 0, "got:\n%s", out);
	free(out);
}

TEST(levels_filter)
{
	char *out;

	REQUIRE(capture_start() == 0);
	log_set_prefix("h", "c", 0);
	log_set_level(LOG_WARN);
	log_msg(LOG_INFO, "hidden");
	log_msg(LOG_DEBUG, "hidden");
	log_msg(LOG_WARN, "shown");
	log_set_level(LOG_DEBUG);
	log_msg(LOG_DEBUG, "now shown");
	log_set_level(LOG_INFO);
	out = capture_end();
	REQUIRE(out != NULL);
	CHECK(strcmp(out, "[h:c:0] warning: shown\n[h:c:0] now shown\n") == 0, "got:\n%s", out);
	free(out);
}

TEST(level_names)
{
	CHECK(log_level_from_name("debug") == LOG_DEBUG);
	CHECK(log_level_from_name("INFO") == LOG_INFO);
	CHECK(log_level_from_name("warn") == LOG_WARN);
	CHECK(log_level_from_name("warning") == LOG_WARN);
	CHECK(log_level_from_name("error") == LOG_ERR);
	CHECK(log_level_from_name("degub") == -1);
	CHECK(log_level_from_name(NULL) == -1);
	CHECK(LOG_ERR < LOG_WARN && LOG_WARN < LOG_INFO && LOG_INFO < LOG_DEBUG);
}

TEST(long_lines_are_cut)
{
	char big[3000], *out;

	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	REQUIRE(capture_start() == 0);
	log_set_prefix("h", "c", 0);
	log_msg(LOG_INFO, "%s", big);
	out = capture_end();
	REQUIRE(out != NULL);
	size_t n = strlen(out);
	CHECK(n > 500 && n < 1100, "length %zu", n);
	CHECK(n > 4 && strcmp(out + n - 4, "...\n") == 0, "tail: %s", out + (n > 8 ? n - 8 : 0));
	CHECK(strchr(out, '\n') == out + n - 1, "one line");
	free(out);
}

static void *spam(void *arg)
{
	for (int i = 0; i < 200; i++)
		log_msg(LOG_INFO, "thread %ld line %d %s", (long)(intptr_t)arg, i,
			"padding padding padding padding padding padding");
	return NULL;
}

TEST(threads_write_whole_lines)
{
	pthread_t t[4];
	char *out, *line, *save;
	int lines = 0, bad = 0;

	REQUIRE(capture_start() == 0);
	log_set_prefix("h", "c", 0);
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, spam, (void *)(intptr_t)i);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	out = capture_end();
	REQUIRE(out != NULL);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lines++;
		if (strncmp(line, "[h:c:0] thread ", 15) != 0 ||
		    strstr(line, "padding padding padding padding padding padding") == NULL)
			bad++;
	}
	CHECK(lines == 800, "%d lines", lines);
	CHECK(bad == 0, "%d torn lines", bad);
	free(out);
}

UNIT_MAIN(prefix_and_tags, levels_filter, level_names, long_lines_are_cut,
	  threads_write_whole_lines)
