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

#include "bits.h"
#include "clock.h"
#include "hist.h"

static _Atomic uint64_t ping __attribute__((aligned(64)));
static _Atomic uint64_t pong __attribute__((aligned(64)));
static long rounds = 200000;
#define STOP UINT64_MAX           /* ping value that ends the echo thread */

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
		uint64_t v;
		while ((v = atomic_load_explicit(&ping, memory_order_acquire)) != i && v != STOP)
			cpu_relax();
		if (v == STOP)
			break;
		atomic_store_explicit(&pong, i, memory_order_release);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int cpu_a = 0, cpu_b = ncpu > 1 ? 1 : 0;
	double max_ms = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: oqb-floor [--cpus A,B] [--max-ms MS] [ROUNDS]\n  cache-line ping-pong RTT between two "
			       "threads on CPUs A and B (default 0,1), as JSON; ROUNDS >= 1000 (default 200000);\n  --max-ms stops early after MS milliseconds (the JSON says how many rounds ran)\n");
			return 0;
		}
		if (!strcmp(argv[i], "--cpus") && i + 1 < argc) {
			if (sscanf(argv[++i], "%d,%d", &cpu_a, &cpu_b) != 2 || cpu_a < 0 || cpu_b < 0 ||
			    cpu_a >= CPU_SETSIZE || cpu_b >= CPU_SETSIZE) {
				fprintf(stderr, "oqb-floor: --cpus %s: expected two CPU numbers A,B\n", argv[i]);
				return 2;
			}
			continue;
		}
		if (!strcmp(argv[i], "--max-ms") && i + 1 < argc) {
			max_ms = atof(argv[++i]);
			continue;
		}
		char *end;
		rounds = strtol(argv[i], &end, 10);
		if (*end || rounds < 1000) {
			fprintf(stderr, "oqb-floor: ROUNDS must be a number >= 1000, not '%s'\n", argv[i]);
			return 2;
		}
	}
	struct hist *h = hist_new();
	pthread_t th;
	pin(cpu_a);
	pthread_create(&th, NULL, echo_thread, &cpu_b);
	uint64_t deadline = max_ms > 0 ? clock_ns() + (uint64_t)(max_ms * 1e6) : UINT64_MAX;
	long done = 0;
	for (uint64_t i = 1; i <= (uint64_t)rounds; i++) {
		uint64_t t0 = clock_ns();
		if (t0 >= deadline) {
			atomic_store_explicit(&ping, STOP, memory_order_release);
			break;
		}
		done = (long)i;
		atomic_store_explicit(&ping, i, memory_order_release);
		while (atomic_load_explicit(&pong, memory_order_acquire) != i)
			cpu_relax();
		if (i > 100 || (max_ms > 0 && i > 1))   /* warm-up: the first 100 rounds, or 1 when time-capped */
			hist_record(h, clock_ns() - t0);
	}
	pthread_join(th, NULL);
	printf("{\"rtt_ns\":{\"p50\":%llu,\"p99\":%llu,\"min\":%llu},\"rounds\":%ld,\"cpus\":[%d,%d]}\n",
	       (unsigned long long)hist_percentile(h, 50), (unsigned long long)hist_percentile(h, 99),
	       (unsigned long long)(h->n ? h->min : 0), done, cpu_a, cpu_b);
	hist_free(h);
	return 0;
}
