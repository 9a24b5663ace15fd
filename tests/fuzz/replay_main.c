/*
 * replay_main.c - runs a fuzz target over saved inputs, without libFuzzer.
 *
 * Usage: fuzz-replay-NAME PATH...   (each PATH a file or a directory of
 * files, not recursive).  Calls LLVMFuzzerTestOneInput once per file, in
 * name order, and prints "ok fuzz-NAME: N inputs" at the end, or "not ok"
 * with the reason (a missing path, no input at all, a target that returned
 * non-zero).  A crash kills the process as it would under the fuzzer, after
 * naming the input on stderr, so tests/integration/fuzz-corpus.sh reports
 * which file broke which parser; under ASan (make check) the report comes
 * first.  This is how every committed corpus and crash reproducer runs in
 * `make test` with the project's own compiler.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

#ifndef FUZZ_NAME
#define FUZZ_NAME "target"
#endif

static char current[4096];   /* the input being run, for the crash note */
static int crash_fd = 2;     /* stderr as it was at start (targets may silence fd 2) */

static void on_crash(int sig)
{
	static const char pre[] = "fuzz-replay: crashed on input ";
	size_t n = strlen(current);

	/* write(2) only: this runs in a signal handler. */
	if (write(crash_fd, pre, sizeof pre - 1) < 0 || write(crash_fd, current, n) < 0 ||
	    write(crash_fd, "\n", 1) < 0)
		_exit(128 + sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

static int run_file(const char *path, size_t *count)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	int rc;

	if (!f) {
		printf("not ok fuzz-%s: cannot open %s: %s\n", FUZZ_NAME, path, strerror(errno));
		return -1;
	}
	for (;;) {
		if (cap - len < 65536) {
			uint8_t *nb = realloc(buf, cap ? cap * 2 : 65536);
			if (!nb) {
				fclose(f);
				free(buf);
				printf("not ok fuzz-%s: out of memory reading %s\n", FUZZ_NAME, path);
				return -1;
			}
			buf = nb;
			cap = cap ? cap * 2 : 65536;
		}
		size_t r = fread(buf + len, 1, cap - len, f);
		len += r;
		if (r == 0)
			break;
	}
	fclose(f);
	snprintf(current, sizeof current, "%s", path);
	/* A copy of exactly len bytes, so ASan sees any read past the input. */
	uint8_t *in = malloc(len ? len : 1);
	if (!in) {
		free(buf);
		printf("not ok fuzz-%s: out of memory reading %s\n", FUZZ_NAME, path);
		return -1;
	}
	memcpy(in, buf, len);
	free(buf);
	rc = LLVMFuzzerTestOneInput(in, len);
	free(in);
	if (rc != 0) {
		printf("not ok fuzz-%s: the target returned %d on %s\n", FUZZ_NAME, rc, path);
		return -1;
	}
	(*count)++;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, size_t *count)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (!d) {
		printf("not ok fuzz-%s: cannot open directory %s: %s\n", FUZZ_NAME, dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap ? cap * 2 : 64) * sizeof *names);
			if (!nn) {
				rc = -1;
				break;
			}
			names = nn;
			cap = cap ? cap * 2 : 64;
		}
		names[n] = malloc(strlen(dir) + strlen(e->d_name) + 2);
		if (!names[n]) {
			rc = -1;
			break;
		}
		sprintf(names[n], "%s/%s", dir, e->d_name);
		n++;
	}
	closedir(d);
	if (rc < 0)
		printf("not ok fuzz-%s: out of memory listing %s\n", FUZZ_NAME, dir);
	if (n > 1)   /* names is NULL for an empty directory */
		qsort(names, n, sizeof *names, cmp_str);
	for (size_t i = 0; i < n; i++) {
		if (rc == 0)
			rc = run_file(names[i], count);
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	size_t count = 0;
	struct stat st;

	crash_fd = fcntl(2, F_DUPFD_CLOEXEC, 10);
	if (crash_fd < 0)
		crash_fd = 2;
	signal(SIGSEGV, on_crash);
	signal(SIGBUS, on_crash);
	signal(SIGFPE, on_crash);
	signal(SIGILL, on_crash);
	signal(SIGABRT, on_crash);
	if (argc < 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
		printf("not ok fuzz-%s: no corpus given\n", FUZZ_NAME);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		int rc;

		if (stat(argv[i], &st) != 0) {
			printf("not ok fuzz-%s: %s: %s\n", FUZZ_NAME, argv[i], strerror(errno));
			return 1;
		}
		rc = S_ISDIR(st.st_mode) ? run_dir(argv[i], &count) : run_file(argv[i], &count);
		if (rc < 0)
			return 1;
	}
	if (count == 0) {
		printf("not ok fuzz-%s: no inputs in %s; a corpus that is empty tests nothing\n",
		       FUZZ_NAME, argv[1]);
		return 1;
	}
	printf("ok fuzz-%s: %zu inputs\n", FUZZ_NAME, count);
	return 0;
}
