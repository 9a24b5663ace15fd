/*
 * oqb-floor - the shared-memory floor of this machine: the round-trip time
 * of one cache line bounced between two threads (on two CPUs when there
 * are two).  No shm transport can commit faster than about half of it, so
 * bench/shm-targets.sh states the shm performance targets as ratios to it,
 * measured in the same run.
 *
 * Prints JSON: {"rtt_ns":{"p50":..,"p99":..,"min":..},"rounds":N,"cpus":[a,b]}
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "hist.h"

static _Atomic uint64_t ping __attribute__((aligned(64)));
static _Atomic uint64_t pong __attribute__((aligned(64)));
static long rounds = 200000;

static void pin(int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

static void *echo_thread(void *arg)
{
	pin(*(int *)arg);
	for (uint64_t i = 1; i <= (uint64_t)rounds; i++) {
		while (atomic_load_explicit(&ping, memory_order_acquire) != i)
			__builtin_ia32_pause();
		atomic_store_explicit(&pong, i, memory_order_release);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("usage: oqb-floor [ROUNDS]\n  cache-line ping-pong RTT between two threads, as JSON\n");
		return 0;
	}
	if (argc > 1)
		rounds = atol(argv[1]);
	if (rounds < 1000) {
		fprintf(stderr, "oqb-floor: ROUNDS must be >= 1000\n");
		return 2;
	}
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int cpu_a = 0, cpu_b = ncpu > 1 ? 1 : 0;
	struct hist *h = hist_new();
	pthread_t th;
	pin(cpu_a);
	pthread_create(&th, NULL, echo_thread, &cpu_b);
	for (uint64_t i = 1; i <= (uint64_t)rounds; i++) {
		uint64_t t0 = clock_ns();
		atomic_store_explicit(&ping, i, memory_order_release);
		while (atomic_load_explicit(&pong, memory_order_acquire) != i)
			__builtin_ia32_pause();
		if (i > (uint64_t)rounds / 10)   /* first 10 %: warm-up */
			hist_record(h, clock_ns() - t0);
	}
	pthread_join(th, NULL);
	printf("{\"rtt_ns\":{\"p50\":%llu,\"p99\":%llu,\"min\":%llu},\"rounds\":%ld,\"cpus\":[%d,%d]}\n",
	       (unsigned long long)hist_percentile(h, 50), (unsigned long long)hist_percentile(h, 99),
	       (unsigned long long)h->min, rounds, cpu_a, cpu_b);
	hist_free(h);
	return 0;
}
