/*
 * unit.h - the smallest test harness that does the job.
 *
 * A test file defines cases with TEST(name) { ... } and lists them in
 * UNIT_MAIN(case1, case2, ...).  CHECK() records a failure and goes on;
 * REQUIRE() records a failure and leaves the case.  Output is one line per
 * case, "ok NAME" / "not ok NAME" / "skip NAME: why", which
 * tests/run-tests.sh counts.  The exit status is non-zero if any case failed.
 */
#ifndef OQB_UNIT_H
#define OQB_UNIT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

/* CHECK(cond) without a message prints the empty format "": intended. */
#pragma GCC diagnostic ignored "-Wformat-zero-length"

struct unit_case {
	const char *name;
	void (*fn)(void);
};

static int unit_failed_;   /* failures in the running case */
static int unit_skipped_;  /* the running case asked to be skipped */
static char unit_skip_why_[256];

#define TEST(name) static void name(void)

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		unit_failed_++; \
		fprintf(stderr, "  %s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
		fprintf(stderr, "" __VA_ARGS__); \
		fputc('\n', stderr); \
	} } while (0)

#define REQUIRE(cond, ...) do { \
	if (!(cond)) { \
		unit_failed_++; \
		fprintf(stderr, "  %s:%d: REQUIRE(%s) failed: ", __FILE__, __LINE__, #cond); \
		fprintf(stderr, "" __VA_ARGS__); \
		fputc('\n', stderr); \
		return; \
	} } while (0)

#define CHECK_EQ_U64(a, b) do { \
	unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b); \
	CHECK(a_ == b_, "%s = %llu, %s = %llu", #a, a_, #b, b_); } while (0)

#define CHECK_NEAR(a, b, tol) do { \
	double a_ = (double)(a), b_ = (double)(b), t_ = (double)(tol); \
	CHECK(fabs(a_ - b_) <= t_, "%s = %.9g, %s = %.9g, tolerance %.3g", #a, a_, #b, b_, t_); } while (0)

#define SKIP(...) do { \
	unit_skipped_ = 1; \
	snprintf(unit_skip_why_, sizeof unit_skip_why_, __VA_ARGS__); \
	return; } while (0)

static inline int unit_run_(const char *file, const struct unit_case *c, size_t n,
			    int argc, char **argv)
{
	int failed = 0;
	(void)file;
	for (size_t i = 0; i < n; i++) {
		if (argc > 1) {   /* optional filter: run only the named cases */
			int want = 0;
			for (int a = 1; a < argc; a++)
				if (strcmp(argv[a], c[i].name) == 0)
					want = 1;
			if (!want)
				continue;
		}
		unit_failed_ = 0;
		unit_skipped_ = 0;
		c[i].fn();
		if (unit_failed_) {
			printf("not ok %s\n", c[i].name);
			failed++;
		} else if (unit_skipped_) {
			printf("skip %s: %s\n", c[i].name, unit_skip_why_);
		} else {
			printf("ok %s\n", c[i].name);
		}
		fflush(stdout);
	}
	return failed ? 1 : 0;
}

#define UNIT_CASE_(f) { #f, f },
#define UNIT_MAIN(...) \
	int main(int argc, char **argv) { \
		static const struct unit_case cases_[] = { UNIT_FOREACH_(UNIT_CASE_, __VA_ARGS__) }; \
		return unit_run_(__FILE__, cases_, sizeof cases_ / sizeof cases_[0], argc, argv); \
	}

/* A small FOREACH for up to 32 cases. */
#define UNIT_N_(_1,_2,_3,_4,_5,_6,_7,_8,_9,_10,_11,_12,_13,_14,_15,_16,_17,_18,_19,_20,\
	_21,_22,_23,_24,_25,_26,_27,_28,_29,_30,_31,_32,N,...) N
#define UNIT_NARGS_(...) UNIT_N_(__VA_ARGS__,32,31,30,29,28,27,26,25,24,23,22,21,20,19,18,17,\
	16,15,14,13,12,11,10,9,8,7,6,5,4,3,2,1)
#define UNIT_CAT_(a, b) a##b
#define UNIT_CAT(a, b) UNIT_CAT_(a, b)
#define UNIT_FOREACH_(M, ...) UNIT_CAT(UNIT_FE_, UNIT_NARGS_(__VA_ARGS__))(M, __VA_ARGS__)
#define UNIT_FE_1(M,a) M(a)
#define UNIT_FE_2(M,a,...) M(a) UNIT_FE_1(M,__VA_ARGS__)
#define UNIT_FE_3(M,a,...) M(a) UNIT_FE_2(M,__VA_ARGS__)
#define UNIT_FE_4(M,a,...) M(a) UNIT_FE_3(M,__VA_ARGS__)
#define UNIT_FE_5(M,a,...) M(a) UNIT_FE_4(M,__VA_ARGS__)
#define UNIT_FE_6(M,a,...) M(a) UNIT_FE_5(M,__VA_ARGS__)
#define UNIT_FE_7(M,a,...) M(a) UNIT_FE_6(M,__VA_ARGS__)
#define UNIT_FE_8(M,a,...) M(a) UNIT_FE_7(M,__VA_ARGS__)
#define UNIT_FE_9(M,a,...) M(a) UNIT_FE_8(M,__VA_ARGS__)
#define UNIT_FE_10(M,a,...) M(a) UNIT_FE_9(M,__VA_ARGS__)
#define UNIT_FE_11(M,a,...) M(a) UNIT_FE_10(M,__VA_ARGS__)
#define UNIT_FE_12(M,a,...) M(a) UNIT_FE_11(M,__VA_ARGS__)
#define UNIT_FE_13(M,a,...) M(a) UNIT_FE_12(M,__VA_ARGS__)
#define UNIT_FE_14(M,a,...) M(a) UNIT_FE_13(M,__VA_ARGS__)
#define UNIT_FE_15(M,a,...) M(a) UNIT_FE_14(M,__VA_ARGS__)
#define UNIT_FE_16(M,a,...) M(a) UNIT_FE_15(M,__VA_ARGS__)
#define UNIT_FE_17(M,a,...) M(a) UNIT_FE_16(M,__VA_ARGS__)
#define UNIT_FE_18(M,a,...) M(a) UNIT_FE_17(M,__VA_ARGS__)
#define UNIT_FE_19(M,a,...) M(a) UNIT_FE_18(M,__VA_ARGS__)
#define UNIT_FE_20(M,a,...) M(a) UNIT_FE_19(M,__VA_ARGS__)
#define UNIT_FE_21(M,a,...) M(a) UNIT_FE_20(M,__VA_ARGS__)
#define UNIT_FE_22(M,a,...) M(a) UNIT_FE_21(M,__VA_ARGS__)
#define UNIT_FE_23(M,a,...) M(a) UNIT_FE_22(M,__VA_ARGS__)
#define UNIT_FE_24(M,a,...) M(a) UNIT_FE_23(M,__VA_ARGS__)
#define UNIT_FE_25(M,a,...) M(a) UNIT_FE_24(M,__VA_ARGS__)
#define UNIT_FE_26(M,a,...) M(a) UNIT_FE_25(M,__VA_ARGS__)
#define UNIT_FE_27(M,a,...) M(a) UNIT_FE_26(M,__VA_ARGS__)
#define UNIT_FE_28(M,a,...) M(a) UNIT_FE_27(M,__VA_ARGS__)
#define UNIT_FE_29(M,a,...) M(a) UNIT_FE_28(M,__VA_ARGS__)
#define UNIT_FE_30(M,a,...) M(a) UNIT_FE_29(M,__VA_ARGS__)
#define UNIT_FE_31(M,a,...) M(a) UNIT_FE_30(M,__VA_ARGS__)
#define UNIT_FE_32(M,a,...) M(a) UNIT_FE_31(M,__VA_ARGS__)

#endif
