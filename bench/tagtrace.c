/*
 * tagtrace.c - test-only per-request tag trace (tagtrace.h).
 */
#include "tagtrace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct tagrec {
	uint64_t t_int, end;
	uint8_t tag, mark, cls;
};

struct tagtrace {
	char path[4096];
	struct tagrec *r;
	size_t n, cap;
	int oom;            /* a record was lost for memory: said in the file */
};

struct tagtrace *tagtrace_open(unsigned rank, unsigned thread, char *err, size_t errlen)
{
	const char *dir = getenv("OQB_TAG_TRACE");
	struct stat st;

	if (err && errlen)
		err[0] = 0;
	if (!dir || !*dir)
		return NULL;
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "OQB_TAG_TRACE=%s is not a directory; create it, or unset OQB_TAG_TRACE", dir);
		return NULL;
	}
	struct tagtrace *tt = calloc(1, sizeof *tt);
	if (!tt) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if ((size_t)snprintf(tt->path, sizeof tt->path, "%s/tagtrace-%u-%u.tsv", dir, rank, thread) >= sizeof tt->path) {
		snprintf(err, errlen, "OQB_TAG_TRACE: the directory's name is too long");
		free(tt);
		return NULL;
	}
	return tt;
}

void tagtrace_add(struct tagtrace *tt, uint64_t t_int, uint64_t end, unsigned tag, unsigned mark, unsigned cls)
{
	if (tt->n == tt->cap) {
		size_t cap = tt->cap ? tt->cap * 2 : 65536;
		struct tagrec *r = realloc(tt->r, cap * sizeof *r);
		if (!r) {
			tt->oom = 1;
			return;
		}
		tt->r = r;
		tt->cap = cap;
	}
	tt->r[tt->n++] = (struct tagrec){ t_int, end, (uint8_t)tag, (uint8_t)mark, (uint8_t)cls };
}

int tagtrace_close(struct tagtrace *tt, char *err, size_t errlen)
{
	int rc = 0;

	if (!tt)
		return 0;
	FILE *f = fopen(tt->path, "w");
	if (!f) {
		snprintf(err, errlen, "%s: %s", tt->path, strerror(errno));
		rc = -1;
	} else {
		fprintf(f, "# oqbench tag trace: CLOCK_MONOTONIC ns; tag = lib/stall.h STALL_TAG_* bits, "
			   "mark = the reply's bench/wire.h mark bits, cls 0 nilext 1 non-nilext%s\n",
			tt->oom ? "; INCOMPLETE: records were lost for memory" : "");
		fprintf(f, "t_int\tend\ttag\tmark\tcls\n");
		for (size_t i = 0; i < tt->n; i++)
			fprintf(f, "%llu\t%llu\t%u\t%u\t%u\n", (unsigned long long)tt->r[i].t_int,
				(unsigned long long)tt->r[i].end, tt->r[i].tag, tt->r[i].mark, tt->r[i].cls);
		if (fclose(f) != 0) {
			snprintf(err, errlen, "%s: %s", tt->path, strerror(errno));
			rc = -1;
		}
	}
	free(tt->r);
	free(tt);
	return rc;
}
