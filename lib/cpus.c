/*
 * cpus.c - thread placement (cpus.h).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpus.h"

int cpus_parse(const char *s, int *out, int cap, char *err, size_t errlen)
{
	int n = 0;
	const char *p = s;

	if (!s || !*s) {
		snprintf(err, errlen, "empty CPU list (write e.g. \"0-3,8\", \"auto\" or \"none\")");
		return -1;
	}
	while (*p) {
		char *end;
		errno = 0;
		long a = strtol(p, &end, 10), b;
		if (end == p || errno || a < 0 || a >= CPUS_MAX)
			goto bad;
		b = a;
		if (*end == '-') {
			const char *q = end + 1;
			b = strtol(q, &end, 10);
			if (end == q || errno || b < a || b >= CPUS_MAX)
				goto bad;
		}
		for (long c = a; c <= b; c++) {
			if (n >= cap) {
				snprintf(err, errlen, "CPU list \"%s\" names more than %d CPUs", s, cap);
				return -1;
			}
			out[n++] = (int)c;
		}
		if (*end == ',')
			end++;
		else if (*end)
			goto bad;
		p = end;
	}
	return n;
bad:
	snprintf(err, errlen, "CPU list \"%s\" is malformed at \"%s\" (write e.g. \"0-3,8\": CPU numbers "
		 "below %d, ranges low-high)", s, p, CPUS_MAX);
	return -1;
}

int cpus_allowed(int *out, int cap)
{
	cpu_set_t set;
	int n = 0;

	if (sched_getaffinity(0, sizeof set, &set) == 0)
		for (int c = 0; c < CPU_SETSIZE && n < cap; c++)
			if (CPU_ISSET(c, &set))
				out[n++] = c;
	if (n == 0)
		out[n++] = 0;
	return n;
}

/* The CPUs of NUMA node `node`, from sysfs; 0 if unknown. */
static int node_cpus(int node, int *out, int cap)
{
	char path[128], line[4096], e[128];
	FILE *f;

	snprintf(path, sizeof path, "/sys/devices/system/node/node%d/cpulist", node);
	if (!(f = fopen(path, "r")))
		return 0;
	int n = 0;
	if (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		n = cpus_parse(line, out, cap, e, sizeof e);
	}
	fclose(f);
	return n > 0 ? n : 0;
}

/* The CPUs of the NUMA node of RDMA device dev, from sysfs; 0 if unknown. */
static int numa_cpus(const char *dev, int *out, int cap, int *node)
{
	char path[512], line[64];
	FILE *f;

	snprintf(path, sizeof path, "/sys/class/infiniband/%s/device/numa_node", dev);
	if (!(f = fopen(path, "r")))
		return 0;
	if (!fgets(line, sizeof line, f) || sscanf(line, "%d", node) != 1 || *node < 0) {
		fclose(f);
		return 0;      /* -1: the platform does not say (virtual devices, rxe) */
	}
	fclose(f);
	return node_cpus(*node, out, cap);
}

int cpus_pin_self_node(int cpu, char *err, size_t errlen)
{
	char path[64];
	int node = -1;
	snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d", cpu);
	DIR *d = opendir(path);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d)) && node < 0)
			if (strncmp(e->d_name, "node", 4) == 0 && isdigit((unsigned char)e->d_name[4]))
				node = atoi(e->d_name + 4);
		closedir(d);
	}
	cpu_set_t now, set;
	if (node < 0 || sched_getaffinity(0, sizeof now, &now) != 0)
		return 0;   /* no NUMA node known: the thread keeps the CPUs it has */
	int list[CPUS_MAX], n = node_cpus(node, list, CPUS_MAX);
	CPU_ZERO(&set);
	for (int i = 0; i < n; i++)
		if (list[i] < CPU_SETSIZE && CPU_ISSET(list[i], &now))
			CPU_SET(list[i], &set);
	if (CPU_COUNT(&set) == 0)
		return 0;
	int e = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
	if (e) {
		snprintf(err, errlen, "cannot move a thread to the CPUs of NUMA node %d: %s", node, strerror(e));
		return -1;
	}
	return 0;
}

int cpus_plan(const char *spec, unsigned first, unsigned nthreads, const char *rdma_dev, int from_end,
	      unsigned reserved, struct cpu_plan *p, char *err, size_t errlen)
{
	static int allowed[CPUS_MAX], cand[CPUS_MAX];
	int na = cpus_allowed(allowed, CPUS_MAX), nc = 0;

	memset(p, 0, sizeof *p);
	p->available = na;
	if (nthreads > CPUS_MAX) {
		snprintf(err, errlen, "%u threads to place; at most %d", nthreads, CPUS_MAX);
		return -1;
	}
	if (!spec || strcmp(spec, "none") == 0) {
		snprintf(p->source, sizeof p->source, "none");
		return 0;
	}
	if (strcmp(spec, "auto") == 0) {
		int node = -1, nn = rdma_dev && *rdma_dev ? numa_cpus(rdma_dev, cand, CPUS_MAX, &node) : 0;
		/* the node's CPUs that we may use, when there are any */
		int k = 0;
		for (int i = 0; i < nn; i++)
			for (int j = 0; j < na; j++)
				if (cand[i] == allowed[j])
					cand[k++] = cand[i];
		if (k > 0) {
			nc = k;
			snprintf(p->source, sizeof p->source, "numa node %d of %.32s", node, rdma_dev);
		} else {
			memcpy(cand, allowed, sizeof(int) * (size_t)na);
			nc = na;
			snprintf(p->source, sizeof p->source, "affinity");
		}
		if (first + nthreads + reserved > (unsigned)nc)
			p->shared = 1;
		for (unsigned i = 0; i < nthreads; i++) {
			unsigned at = (first + i) % (unsigned)nc;
			p->cpu[i] = cand[from_end ? (unsigned)nc - 1 - at : at];
		}
	} else {
		nc = cpus_parse(spec, cand, CPUS_MAX, err, errlen);
		if (nc < 0)
			return -1;
		for (int i = 0; i < nc; i++) {
			int ok = 0;
			for (int j = 0; j < na && !ok; j++)
				ok = cand[i] == allowed[j];
			if (!ok) {
				char al[256];
				cpus_format(allowed, na, al, sizeof al);
				snprintf(err, errlen, "CPU %d in \"%s\" is not one this process may run on "
					 "(allowed: %s)", cand[i], spec, al);
				return -1;
			}
		}
		if (nthreads > (unsigned)nc)
			p->shared = 1;
		for (unsigned i = 0; i < nthreads; i++)
			p->cpu[i] = cand[i % (unsigned)nc];
		snprintf(p->source, sizeof p->source, "list");
	}
	p->n = (int)nthreads;
	return 0;
}

int cpus_pin_self(int cpu, char *err, size_t errlen)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	int e = pthread_setaffinity_np(pthread_self(), sizeof s, &s);
	if (e) {
		snprintf(err, errlen, "cannot pin a thread to CPU %d: %s", cpu, strerror(e));
		return -1;
	}
	return 0;
}

void cpus_format(const int *cpus, int n, char *buf, size_t len)
{
	size_t o = 0;
	if (len)
		buf[0] = '\0';
	for (int i = 0; i < n && o + 1 < len; i++) {
		int w = snprintf(buf + o, len - o, "%s%d", i ? "," : "", cpus[i]);
		if (w < 0)
			break;
		o += (size_t)w;
	}
}

json_t *cpus_plan_json(const struct cpu_plan *p, const char *spec)
{
	json_t *c = json_array();
	for (int i = 0; i < p->n; i++)
		json_array_append_new(c, json_integer(p->cpu[i]));
	return json_pack("{s:s,s:o,s:b,s:i,s:s}", "spec", spec ? spec : "none",
			 "cpus", p->n ? c : (json_decref(c), json_null()), "shared", p->shared,
			 "available", p->available, "source", p->source);
}
