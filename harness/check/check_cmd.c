/*
 * check_cmd.c - `oqb check RUN_DIR | POINT_DIR | HISTORY...`: loads recorded
 * histories (binary files from oqb-client --history, or the text form of
 * check_text.c), splits them by key, checks the keys in parallel
 * (check.h) and writes a verdict.
 *
 * A run directory holds one history per point (POINT/history/, one .bin file per client thread); each
 * point is checked on its own (its server started empty) and gets
 * POINT/check.json; the run gets RUN_DIR/check.json with every point's
 * verdict.  The verdict of a set of keys is VIOLATION if any key has one,
 * else UNKNOWN if any key ran out of budget, else OK.  Exit status: 0 ok,
 * 1 violation, 2 unknown, 3 the input could not be read.
 *
 * Clocks: each file's header carries its host's clock offset bound; every
 * interval of that file is widened by it (invoke earlier, return later),
 * which keeps the check sound across hosts whose clocks agree within it.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <jansson.h>

#include "check.h"
#include "check_cmd.h"
#include "kvop.h"
#include "opts.h"

#define MAX_SHOWN 5

struct keyrange { size_t lo, hi; struct check_key_result r; };

struct job {
	const struct history_op *ops;
	struct keyrange *keys;
	size_t nkeys;
	const struct check_budget *b;
	_Atomic size_t next;
	_Atomic int oom;
};

static int op_cmp(const void *a, const void *b)
{
	const struct history_op *x = a, *y = b;
	if (x->key_hash != y->key_hash)
		return x->key_hash < y->key_hash ? -1 : 1;
	if (x->t_inv != y->t_inv)
		return x->t_inv < y->t_inv ? -1 : 1;
	return x->t_ret < y->t_ret ? -1 : x->t_ret > y->t_ret;
}

static void *worker(void *arg)
{
	struct job *j = arg;
	for (;;) {
		size_t i = atomic_fetch_add(&j->next, 1);
		if (i >= j->nkeys)
			return NULL;
		struct keyrange *k = &j->keys[i];
		if (check_key(j->ops + k->lo, k->hi - k->lo, j->b, &k->r) != 0)
			atomic_store(&j->oom, 1);
	}
}

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

static char *slurp(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return NULL;
	}
	size_t cap = 1 << 16, len = 0;
	char *b = malloc(cap);
	while (b) {
		size_t k = fread(b + len, 1, cap - len - 1, f);
		len += k;
		if (len + 1 < cap)
			break;
		char *nb = realloc(b, cap * 2);
		if (!nb) {
			free(b);
			b = NULL;
			break;
		}
		b = nb;
		cap *= 2;
	}
	fclose(f);
	if (!b)
		snprintf(err, errlen, "%s: out of memory", path);
	else
		b[len] = 0;
	return b;
}

/* Appends the ops of one file to *all (widening by its clock bound). */
static int load_one(const char *path, struct history_op **all, size_t *n, size_t *cap,
		    char *err, size_t errlen)
{
	struct history_op *ops = NULL;
	size_t cnt = 0;
	uint64_t bound = 0;
	if (ends_with(path, ".txt")) {
		int expect;
		char *text = slurp(path, err, errlen);
		if (!text)
			return -1;
		int rc = check_text_parse(text, path, &ops, &cnt, &expect, err, errlen);
		free(text);
		if (rc)
			return -1;
	} else {
		struct history_header h;
		if (history_read_file(path, &h, &ops, &cnt, err, errlen) != 0)
			return -1;
		bound = h.clock_bound_ns;
	}
	if (*n + cnt > *cap) {
		size_t nc = (*n + cnt) * 2 + 1024;
		struct history_op *na = realloc(*all, nc * sizeof *na);
		if (!na) {
			free(ops);
			snprintf(err, errlen, "%s: out of memory for %zu ops", path, *n + cnt);
			return -1;
		}
		*all = na;
		*cap = nc;
	}
	for (size_t i = 0; i < cnt; i++) {
		struct history_op *o = &ops[i];
		o->t_inv = o->t_inv > bound ? o->t_inv - bound : 0;
		if (o->t_ret != HISTORY_T_UNKNOWN)
			o->t_ret = o->t_ret + bound < o->t_ret ? HISTORY_T_UNKNOWN - 1 : o->t_ret + bound;
		(*all)[(*n)++] = *o;
	}
	free(ops);
	return 0;
}

static json_t *op_json(const struct history_op *o, uint64_t t0)
{
	char line[400];
	check_op_text(line, sizeof line, o, t0, 1);
	return json_string(line);
}

json_t *check_histories(char *const *paths, size_t npaths, const struct check_opts *co,
			FILE *report, char *err, size_t errlen)
{
	struct history_op *all = NULL;
	size_t n = 0, cap = 0;
	struct timespec ts0, ts1;
	clock_gettime(CLOCK_MONOTONIC, &ts0);
	for (size_t i = 0; i < npaths; i++)
		if (load_one(paths[i], &all, &n, &cap, err, errlen) != 0) {
			free(all);
			return NULL;
		}
	if (n)
		qsort(all, n, sizeof *all, op_cmp);
	uint64_t t0 = UINT64_MAX;
	for (size_t i = 0; i < n; i++)
		if (all[i].t_inv < t0)
			t0 = all[i].t_inv;
	size_t nkeys = 0;
	for (size_t i = 0; i < n; i++)
		nkeys += i == 0 || all[i].key_hash != all[i - 1].key_hash;
	struct keyrange *keys = calloc(nkeys ? nkeys : 1, sizeof *keys);
	if (!keys) {
		free(all);
		snprintf(err, errlen, "out of memory for %zu keys", nkeys);
		return NULL;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || all[i].key_hash != all[i - 1].key_hash) {
			if (k)
				keys[k - 1].hi = i;
			keys[k++].lo = i;
		}
	}
	if (k)
		keys[k - 1].hi = n;
	struct job j = { .ops = all, .keys = keys, .nkeys = nkeys, .b = &co->budget };
	unsigned nt = co->threads ? co->threads : 1;
	pthread_t th[64];
	unsigned started = 0;
	for (unsigned i = 0; i < nt && i < 64; i++)
		if (pthread_create(&th[i], NULL, worker, &j) == 0)
			started++;
	if (!started)
		worker(&j);
	for (unsigned i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &ts1);

	size_t nok = 0, nviol = 0, nunk = 0, nfast = 0, maxops = 0, peak = 0, state_ops = 0, unknown_ops = 0;
	json_t *viol = json_array(), *unk = json_array();
	for (size_t i = 0; i < nkeys; i++) {
		struct keyrange *kr = &keys[i];
		const struct history_op *ko = all + kr->lo;
		size_t kn = kr->hi - kr->lo;
		state_ops += kr->r.nops;
		for (size_t x = 0; x < kn; x++)
			unknown_ops += ko[x].t_ret == HISTORY_T_UNKNOWN;
		if (kr->r.nops > maxops)
			maxops = kr->r.nops;
		if (kr->r.peak_bytes > peak)
			peak = kr->r.peak_bytes;
		nfast += (size_t)kr->r.fast;
		char keytxt[64], line[400];
		check_op_text(line, sizeof line, ko, t0, 1);
		/* the key as the op text shows it: the fifth field */
		const char *p = line;
		for (int f = 0; f < 4 && p; f++) {
			p = strchr(p, ' ');
			if (p)
				p++;
		}
		snprintf(keytxt, sizeof keytxt, "%.*s", p ? (int)strcspn(p, " ") : 1, p ? p : "?");
		if (kr->r.verdict == CHECK_OK) {
			nok++;
			continue;
		}
		if (kr->r.verdict == CHECK_UNKNOWN) {
			nunk++;
			if (json_array_size(unk) < 20)
				json_array_append_new(unk, json_pack("{s:s,s:I,s:s}", "key", keytxt,
					"ops", (json_int_t)kr->r.nops, "why", kr->r.why));
			if (report && nunk <= MAX_SHOWN)
				fprintf(report, "UNKNOWN key %s (%zu ops): %s\n", keytxt, kr->r.nops, kr->r.why);
			continue;
		}
		nviol++;
		if (json_array_size(viol) < 20) {
			json_t *v = json_pack("{s:s,s:I,s:s}", "key", keytxt, "ops", (json_int_t)kr->r.nops,
					      "why", kr->r.why);
			if (kr->r.bad >= 0)
				json_object_set_new(v, "op", op_json(&ko[kr->r.bad], t0));
			if (kr->r.other >= 0)
				json_object_set_new(v, "conflicts_with", op_json(&ko[kr->r.other], t0));
			json_array_append_new(viol, v);
		}
		if (report && nviol <= MAX_SHOWN) {
			fprintf(report, "VIOLATION key %s (%zu ops, %s):\n", keytxt, kr->r.nops,
				kr->r.fast ? "unique-value check" : "search");
			check_explain(report, ko, kn, &kr->r, t0);
		}
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double secs = (double)(ts1.tv_sec - ts0.tv_sec) + (double)(ts1.tv_nsec - ts0.tv_nsec) / 1e9;
	enum check_verdict v = nviol ? CHECK_VIOLATION : (nunk || atomic_load(&j.oom)) ? CHECK_UNKNOWN : CHECK_OK;
	json_t *res = json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:f,s:f,s:I,s:I}",
		"schema", "oqbench.check/1", "verdict", check_verdict_name(v),
		"files", (json_int_t)npaths, "ops", (json_int_t)n, "state_ops", (json_int_t)state_ops,
		"unknown_outcome_ops", (json_int_t)unknown_ops,
		"keys", (json_int_t)nkeys, "keys_ok", (json_int_t)nok,
		"keys_violation", (json_int_t)nviol, "keys_unknown", (json_int_t)nunk,
		"keys_fast_path", (json_int_t)nfast, "secs", secs,
		"budget_time_s_per_key", co->budget.time_s,
		"peak_rss_mb", (double)ru.ru_maxrss / 1024.0,
		"max_key_ops", (json_int_t)maxops, "max_key_search_bytes", (json_int_t)peak);
	json_object_set_new(res, "violations", viol);
	json_object_set_new(res, "unknown", unk);
	if (report)
		fprintf(report, "check: %s: %zu ops on %zu keys (%zu ok, %zu violation, %zu unknown; %zu by "
			"the unique-value path) in %.3f s, peak RSS %.1f MB\n", check_verdict_name(v), n,
			nkeys, nok, nviol, nunk, nfast, secs, (double)ru.ru_maxrss / 1024.0);
	free(keys);
	free(all);
	return res;
}

/* The history files of dir (*.bin, *.txt), sorted; NULL-free array. */
static char **list_files(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	char **v = NULL;
	size_t cnt = 0;
	*n = 0;
	if (!d)
		return NULL;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || (!ends_with(de->d_name, ".bin") && !ends_with(de->d_name, ".txt")))
			continue;
		char **nv = realloc(v, (cnt + 1) * sizeof *v);
		if (!nv)
			break;
		v = nv;
		size_t l = strlen(dir) + strlen(de->d_name) + 2;
		v[cnt] = malloc(l);
		if (!v[cnt])
			break;
		snprintf(v[cnt], l, "%s/%s", dir, de->d_name);
		cnt++;
	}
	closedir(d);
	*n = cnt;
	return v;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

json_t *check_point_dir(const char *pdir, const struct check_opts *co, FILE *report,
			char *err, size_t errlen)
{
	char hdir[4200], out[4200];
	snprintf(hdir, sizeof hdir, "%s/history", pdir);
	size_t n;
	char **files = list_files(is_dir(hdir) ? hdir : pdir, &n);
	if (!n) {
		free_list(files, n);
		snprintf(err, errlen, "%s: no history files (history/NAME.bin); record with "
			 "oqb-client --history DIR or the config key \"history\"", pdir);
		return NULL;
	}
	json_t *res = check_histories(files, n, co, report, err, errlen);
	free_list(files, n);
	if (!res)
		return NULL;
	snprintf(out, sizeof out, "%s/check.json", pdir);
	if (json_dump_file(res, out, JSON_INDENT(1)) != 0) {
		snprintf(err, errlen, "cannot write %s", out);
		json_decref(res);
		return NULL;
	}
	return res;
}

struct check_cli {
	struct opt_list inputs;
	double time_s, mem_mb;
	int threads, quiet;
	const char *out;
};

#define O(f) offsetof(struct check_cli, f)
static const struct opt check_tab[] = {
	{ "INPUT", OPT_ARGS, O(inputs), NULL, 0, 0, NULL,
	  "a run directory, a point directory, or history files" },
	{ "time-budget-s", OPT_DBL, O(time_s), "20", 0, 86400, NULL,
	  "per key: give up (verdict unknown, never ok) after this long" },
	{ "mem-budget-mb", OPT_DBL, O(mem_mb), "1024", 1, 1 << 20, NULL,
	  "per key: memory for the search's cache" },
	{ "threads", OPT_INT, O(threads), "2", 1, 64, NULL, "keys checked in parallel" },
	{ "out", OPT_STR, O(out), NULL, 0, 0, NULL,
	  "verdict JSON here (default: DIR/check.json for a directory, else none)" },
	{ "quiet", OPT_BOOL, O(quiet), NULL, 0, 0, NULL, "only the summary line" },
	{ NULL, .help = "check recorded histories for linearizability (docs/correctness.md); "
	  "a violation is exit 1, a key out of budget (verdict unknown) exit 3" },
};
#undef O

const struct opts_cmd check_cmd = {
	"oqb check", check_tab,
	OQB_EXITS_BASE | OQB_EXITS(OQB_EXIT_FAIL) | OQB_EXITS(OQB_EXIT_INCONCLUSIVE) | OQB_EXITS(OQB_EXIT_ERROR),
};

/* ok 0, violation 1, unknown (out of budget) 3; no verdict at all is an error */
static int verdict_status(const json_t *res)
{
	const char *v = json_string_value(json_object_get(res, "verdict"));
	return !v ? OQB_EXIT_ERROR : !strcmp(v, "ok") ? OQB_EXIT_OK : !strcmp(v, "violation") ? OQB_EXIT_FAIL
											  : OQB_EXIT_INCONCLUSIVE;
}

/* Which of two statuses says more: a violation over unknown over ok;
 * unreadable input (2) and errors (5) over all. */
static int worse(int a, int b)
{
	static const int rank[OQB_EXIT_COUNT] = {
		[OQB_EXIT_OK] = 0, [OQB_EXIT_INCONCLUSIVE] = 1, [OQB_EXIT_FAIL] = 2,
		[OQB_EXIT_USAGE] = 3, [OQB_EXIT_ERROR] = 4, [OQB_EXIT_NOISY] = 0,
	};
	return rank[b] > rank[a] ? b : a;
}

int check_main(int argc, char **argv)
{
	struct check_cli c;
	char err[2048];
	int r = opts_command(&check_cmd, &c, argc, argv);
	if (r != OPTS_GO)
		return r;
	int npos = c.inputs.n;
	const char *const *in = c.inputs.v;
	struct check_opts co = {
		.budget = { .time_s = c.time_s, .mem_bytes = (size_t)(c.mem_mb * 1048576.0) },
		.threads = (unsigned)c.threads,
	};
	FILE *rep = c.quiet ? NULL : stdout;
	json_t *res = NULL;
	int status;
	if (npos == 1 && is_dir(in[0])) {
		char hdir[4200];
		size_t nf;
		snprintf(hdir, sizeof hdir, "%s/history", in[0]);
		char **files = list_files(in[0], &nf);
		free_list(files, nf);
		if (nf || is_dir(hdir)) {
			res = check_point_dir(in[0], &co, rep, err, sizeof err);
		} else {
			/* a run directory: every point with a history */
			DIR *d = opendir(in[0]);
			json_t *pts = json_object();
			int worst = 0, any = 0;
			struct dirent *de;
			while (d && (de = readdir(d))) {
				char p[2048];
				if (de->d_name[0] == '.')
					continue;
				snprintf(p, sizeof p, "%s/%s", in[0], de->d_name);
				snprintf(hdir, sizeof hdir, "%s/history", p);
				if (!is_dir(hdir))
					continue;
				any = 1;
				if (rep)
					fprintf(rep, "point %s:\n", de->d_name);
				json_t *pr = check_point_dir(p, &co, rep, err, sizeof err);
				if (!pr) {
					fprintf(stderr, "oqb check: %s\n", err);
					worst = worse(worst, OQB_EXIT_USAGE);
					continue;
				}
				worst = worse(worst, verdict_status(pr));
				json_object_set_new(pts, de->d_name, pr);
			}
			if (d)
				closedir(d);
			if (!any) {
				fprintf(stderr, "oqb check: %s: no point directory with a history/ folder and no "
					"history files; record with the config key \"history\"\n", in[0]);
				json_decref(pts);
				return OQB_EXIT_USAGE;
			}
			res = json_pack("{s:s,s:s,s:o}", "schema", "oqbench.check-run/1", "verdict",
					worst == OQB_EXIT_OK ? "ok" : worst == OQB_EXIT_FAIL ? "violation" : "unknown",
					"points", pts);
			char out[4200];
			snprintf(out, sizeof out, "%s/check.json", in[0]);
			if (!c.out && json_dump_file(res, out, JSON_INDENT(1)) != 0)
				fprintf(stderr, "oqb check: cannot write %s\n", out);
			if (worst != verdict_status(res)) {
				/* a point that could not be read: its status, verdict unknown */
				status = worst;
				goto done;
			}
		}
	} else {
		res = check_histories((char **)in, (size_t)npos, &co, rep, err, sizeof err);
	}
	if (!res) {
		fprintf(stderr, "oqb check: %s\n", err);
		return OQB_EXIT_USAGE;
	}
	status = verdict_status(res);
done:
	if (c.out && json_dump_file(res, c.out, JSON_INDENT(1)) != 0) {
		fprintf(stderr, "oqb check: cannot write %s\n", c.out);
		status = OQB_EXIT_ERROR;
	}
	if (c.quiet)
		printf("check: %s\n", json_string_value(json_object_get(res, "verdict")));
	json_decref(res);
	return status;
}
