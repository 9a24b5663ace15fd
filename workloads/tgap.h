/*
 * tgap.h - T_gap analysis of request traces (paper §4, Figure 2).
 *
 * T_gap of a nilext request is the time from it to the next non-nilext
 * request of the same client.  A short T_gap is the pathological pattern
 * of §4: the server has no time to execute the nilext request before the
 * client's next read reaches it.  The traces time requests in whole
 * seconds, so the analysis counts, per trace, the nilext requests whose
 * T_gap is within [0, max_gap] seconds (2 by default), i.e. whose next
 * non-nilext request carries a timestamp at most max_gap larger.
 *
 * Memory is per client id only: a count of pending nilext requests and a
 * small window of their counts per recent second.
 */
#ifndef OQB_TGAP_H
#define OQB_TGAP_H

#include "exitcodes.h"
#include "opts.h"
#include <stdint.h>
#include <stddef.h>

/* Seconds of history kept per client: max_gap must be below this. */
#define TGAP_WINDOW 16

struct tgap_opts {
	unsigned nilext_mask;     /* bit (1 << enum trace_op) set for nilext ops */
	uint64_t max_gap;         /* seconds, < TGAP_WINDOW (default 2) */
	uint64_t limit;           /* analyse only the first N requests (0 = all) */
	int skip_malformed;
};

struct tgap_result {
	uint64_t requests;        /* requests analysed */
	uint64_t nilext, non_nilext;
	uint64_t gaps;            /* nilext requests followed by a non-nilext of the same client */
	uint64_t within;          /* ... with T_gap in [0, max_gap] */
	uint64_t no_next;         /* nilext requests never followed (end of trace) */
	uint64_t clients;
	uint64_t out_of_order;    /* requests timestamped before their client's previous one */
	uint64_t skipped;         /* malformed lines skipped */
	double frac_all;          /* within / requests */
	double frac_nilext;       /* within / nilext */
};

/* Defaults: nilext = set and delete (trace.h's table), max_gap 2 s. */
void tgap_opts_default(struct tgap_opts *o);

/*
 * Parses a comma-separated list of trace op names ("set,delete,add") into a
 * nilext mask.  Returns 0, or -1 with the unknown name in err.
 */
int tgap_parse_ops(const char *list, unsigned *mask, char *err, size_t errlen);

/* Streaming state, for callers that have requests rather than a file. */
struct tgap;
struct tgap *tgap_new(const struct tgap_opts *o);
/* Adds one request in trace order.  Returns 0, or -1 if out of memory. */
int tgap_add(struct tgap *s, uint64_t client, uint64_t ts, int nilext);
/* Totals so far (pending nilext requests count as no_next). */
void tgap_result(const struct tgap *s, struct tgap_result *r);
void tgap_free(struct tgap *s);

/* Analyses one trace file.  Returns 0, or -1 with a message in err. */
int tgap_file(const char *path, const struct tgap_opts *o, struct tgap_result *r,
	      char *err, size_t errlen);

/*
 * `oqb tgap [--json OUT] [--plot OUT.svg|.png] [options] TRACE...`: prints
 * a table, writes the JSON (schema "oqbench.tgap/1") and the CDF across
 * traces plotted by plot/tgap-cdf.gp.  Returns the process exit status
 * (lib/exitcodes.h): 0, 2 bad input (an unreadable trace), 5 an output
 * could not be written or drawn.
 */
int tgap_main(int argc, char **argv);
extern const struct opts_cmd tgap_cmd;

#endif
