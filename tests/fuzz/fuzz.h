/*
 * fuzz.h - what the libFuzzer targets in tests/fuzz/ share.
 *
 * Each fuzz_<name>.c defines LLVMFuzzerTestOneInput over one parser's real
 * entry point.  The same file links either with libFuzzer (make fuzz,
 * clang, build/fuzz/) or with replay_main.c (make test, the project's
 * compiler), which feeds it every file of tests/fuzz/corpus/<name>/ and
 * tests/fuzz/regress/<name>-*.bin; so a target must be deterministic, keep
 * no state between inputs, free what it allocates, and never write to the
 * source tree.
 *
 * Parsers that only take a path get the bytes through an anonymous memory
 * file (memfd) named by its /proc/self/fd path: no disk, no clean-up, and
 * nothing left behind when a target crashes.
 */
#ifndef OQB_FUZZ_H
#define OQB_FUZZ_H

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define FUZZ_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUZZ_SANITIZED 1
#endif
#endif
#ifdef FUZZ_SANITIZED
#include <sanitizer/common_interface_defs.h>
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A property the parser promises does not hold: report and crash, so
 * libFuzzer keeps the input and the replay names the file. */
#define FUZZ_ASSERT(cond, ...)							\
	do {									\
		if (!(cond)) {							\
			fprintf(stderr, "fuzz: %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);				\
			fputc('\n', stderr);					\
			abort();						\
		}								\
	} while (0)

/*
 * Puts size bytes in a new memfd (offset back at 0) and its path in
 * path[cap].  Returns the fd (close it when done), or -1.
 */
static inline int fuzz_memfd(const uint8_t *data, size_t size, char *path, size_t cap)
{
	int fd = memfd_create("oqb-fuzz", MFD_CLOEXEC);
	size_t done = 0;

	if (fd < 0)
		return -1;
	while (done < size) {
		ssize_t w = write(fd, data + done, size - done);
		if (w <= 0) {
			close(fd);
			return -1;
		}
		done += (size_t)w;
	}
	if (lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	snprintf(path, cap, "/proc/self/fd/%d", fd);
	return fd;
}

/* A failure must come with a message, terminated within its buffer. */
static inline void fuzz_check_msg(const char *err, size_t cap)
{
	size_t n = 0;

	while (n < cap && err[n])
		n++;
	FUZZ_ASSERT(n < cap, "error message not terminated");
	FUZZ_ASSERT(n > 0, "failure without a message");
}

/*
 * Whole commands (oqb compare, oqb plot) print tables and messages; over
 * thousands of inputs that is noise.  fuzz_quiet(1) points stdout and
 * stderr at /dev/null, fuzz_quiet(0) puts them back.  Sanitizer reports
 * keep going to the real stderr (a copy taken on first use).
 */
static inline void fuzz_quiet(int on)
{
	static int saved_out = -1, saved_err = -1, nul = -1;

	if (nul < 0) {
		nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
		saved_out = fcntl(1, F_DUPFD_CLOEXEC, 10);
		saved_err = fcntl(2, F_DUPFD_CLOEXEC, 10);
#ifdef FUZZ_SANITIZED
		__sanitizer_set_report_fd((void *)(intptr_t)saved_err);
#endif
	}
	if (nul < 0 || saved_out < 0 || saved_err < 0)
		return;
	fflush(stdout);
	fflush(stderr);
	dup2(on ? nul : saved_out, 1);
	dup2(on ? nul : saved_err, 2);
}

#endif
