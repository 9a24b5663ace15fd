/*
 * shm_describe.c - a shm server's worker rings described from outside
 * (tp_shm.h: shm_describe_rings), for a check that found the server not
 * executing: its counters and the slot states around the frontier.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shm_layout.h"
#include "tp_shm.h"

/*
 * What worker rings look like from outside, for a check that found a
 * server not executing (tp_shm.h).  Maps each ring-W of dir read-only and
 * describes its counters and the state words from the oldest unreleased
 * ticket to a little past the tail, with runs of one kind folded.
 */
static const char *st_kind(uint64_t v)
{
	static const char *k[4] = { "FREE", "WRITE", "PUB", "QUAR" };
	return k[v & 3];
}

int shm_describe_rings(const char *dir, char *out, size_t cap)
{
	size_t o = 0;
	out[0] = 0;
#define PUT(...) do { if (o < cap) { int n_ = snprintf(out + o, cap - o, __VA_ARGS__); \
		if (n_ > 0) o += (size_t)n_; } } while (0)
	for (unsigned wi = 0; wi < SHM_MAX_WORKERS; wi++) {
		char p[600];
		snprintf(p, sizeof p, "%s/ring-%u", dir, wi);
		int fd = open(p, O_RDONLY);
		if (fd < 0) {
			if (wi == 0)
				PUT("%s: %s", p, strerror(errno));
			break;
		}
		struct stat st;
		struct ring_hdr h;
		if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof h || pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h ||
		    h.magic != SHM_MAGIC || !h.ring_slots || (h.ring_slots & (h.ring_slots - 1)) ||
		    (size_t)st.st_size < h.state_off + (size_t)h.ring_slots * CL) {
			PUT("%sring-%u: not a ring of this version", o ? "; " : "", wi);
			close(fd);
			continue;
		}
		const uint8_t *b = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		close(fd);
		if (b == MAP_FAILED) {
			PUT("%sring-%u: mmap: %s", o ? "; " : "", wi, strerror(errno));
			continue;
		}
		const struct ring_hdr *r = (const struct ring_hdr *)b;
		const _Atomic uint64_t *stw = (const _Atomic uint64_t *)(b + r->state_off);
		uint64_t n = r->ring_slots, tail = atomic_load(&r->tail), rel = atomic_load(&r->released);
		PUT("%sring-%u: generation %llu, tail %llu, released %llu, ReqToExecute %llu, SRQTail %llu; states",
		    o ? "; " : "", wi, (unsigned long long)r->generation, (unsigned long long)tail,
		    (unsigned long long)rel, (unsigned long long)r->req_to_execute,
		    (unsigned long long)r->srq_tail);
		/* tickets [rel, tail + 2), at most one lap; each as KIND(lap),
		 * runs of the expected next-lap FREE folded */
		uint64_t from = rel, to = tail + 2;
		if (to - from > n)
			from = to - n;
		uint64_t run_from = 0, run_n = 0;
		for (uint64_t t = from; t < to; t++) {
			uint64_t v = atomic_load(&stw[(t & (n - 1)) * ST_STRIDE]);
			int gone = (v & ST_GONE) != 0;
			uint64_t lap = (v & ~ST_GONE) >> 2;
			if (!gone && lap == t && (v & 3) == ST_FREE) {
				if (!run_n++)
					run_from = t;
				continue;
			}
			if (run_n) {
				PUT(" %llu..%llu FREE(own)", (unsigned long long)run_from,
				    (unsigned long long)(run_from + run_n - 1));
				run_n = 0;
			}
			PUT(" %llu:%s(%llu%s)", (unsigned long long)t, st_kind(v), (unsigned long long)lap,
			    gone ? ",GONE" : "");
		}
		if (run_n)
			PUT(" %llu..%llu FREE(own)", (unsigned long long)run_from,
			    (unsigned long long)(run_from + run_n - 1));
		munmap((void *)b, (size_t)st.st_size);
	}
#undef PUT
	return o >= cap ? -1 : 0;
}

