/*
 * test_check.c - the linearizability checker (harness/check/check.h) against a
 * brute-force checker, on thousands of random small histories, and on the
 * golden histories of tests/check/golden/.
 *
 * The brute force tries every order of the ops consistent with real time
 * (a before b when a.t_ret < b.t_inv) and runs the model on it; it shares
 * only check_step (the model) with the checker, so a bug in the search,
 * the fast path, the event order or the treatment of unknown outcomes
 * shows as a disagreement.  Random histories are made by simulating a
 * linearizable execution (linearization points inside the intervals) and
 * then, for some, corrupting one output or one interval, so both verdicts
 * occur in healthy shares (each must be at least 20 %).
 */
#include <dirent.h>
#include <stdint.h>

#include "unit.h"
#include "check.h"
#include "kvop.h"
#include "rng.h"

#define MAXN 8

/* ---- brute force ---- */

static int bf_rec(const struct history_op *o, size_t n, unsigned done, struct check_state s)
{
	if (done == (1u << n) - 1)
		return 1;
	for (size_t i = 0; i < n; i++) {
		if (done & (1u << i))
			continue;
		int blocked = 0;
		for (size_t j = 0; j < n && !blocked; j++)
			if (!(done & (1u << j)) && j != i && o[j].t_ret < o[i].t_inv)
				blocked = 1;
		if (blocked)
			continue;
		struct check_state s2 = s;
		if (check_is_state_op(&o[i]) && !check_step(&o[i], &s2))
			continue;
		if (bf_rec(o, n, done | (1u << i), s2))
			return 1;
	}
	return 0;
}

static int brute(const struct history_op *o, size_t n)
{
	struct check_state s = { 0 };
	return bf_rec(o, n, 0, s);
}

/* ---- random histories ---- */

struct gen_cfg {
	int tagged;      /* only tagged sets and gets (the fast path's input) */
	int unknown_pct, unseen_pct, corrupt_pct;
};

static void set_output(struct history_op *o, const struct check_state *s)
{
	if (o->op == KV_OP_GET) {
		if (!s->present) {
			o->status = KV_NOT_FOUND;
		} else {
			o->status = KV_OK;
			o->rkind = s->kind;
			if (s->kind == HV_TAG) {
				/* the checker compares tag ids; store the tag itself */
				o->rclient = (uint32_t)(s->v >> 32);
				o->rseq = s->v & 0xffffffffu;
			} else {
				o->rval = s->v;
			}
		}
	} else if (o->op == KV_OP_DEL) {
		o->status = s->present ? KV_OK : KV_NOT_FOUND;
	} else if (o->op == KV_OP_INCR) {
		if (!s->present)
			o->status = KV_NOT_FOUND;
		else if (s->kind != HV_NUM)
			o->status = KV_ERR_OP;
		else {
			o->status = KV_OK;
			o->rkind = HV_NUM;
			o->rval = s->v + o->arg;
		}
	} else {
		o->status = KV_OK;
	}
}

/* The simulation's state keeps TAG values as client << 32 | seq, so that a
 * get's output can name the tag; check_step is not used here. */
static void sim_apply(const struct history_op *o, struct check_state *s)
{
	if (o->op == KV_OP_SET) {
		s->present = 1;
		s->kind = o->wkind;
		s->v = o->wkind == HV_TAG ? ((uint64_t)o->client << 32 | o->seq) : o->arg;
	} else if (o->op == KV_OP_DEL) {
		s->present = 0;
	} else if (o->op == KV_OP_INCR && s->present && s->kind == HV_NUM) {
		s->v += o->arg;
	}
}

static size_t gen_history(struct rng *r, const struct gen_cfg *g, struct history_op *o)
{
	size_t n = 1 + rng_below(r, MAXN - 1);
	unsigned clients = 1 + (unsigned)rng_below(r, 3);
	uint64_t point[MAXN];
	int effect[MAXN];
	for (size_t i = 0; i < n; i++) {
		memset(&o[i], 0, sizeof o[i]);
		o[i].client = 1 + (uint32_t)rng_below(r, clients);
		o[i].seq = i + 1;
		o[i].key_hash = 7;
		o[i].t_inv = rng_below(r, 20);
		o[i].t_ret = o[i].t_inv + rng_below(r, 5);
		point[i] = o[i].t_inv + rng_below(r, o[i].t_ret - o[i].t_inv + 1);
		unsigned k = (unsigned)rng_below(r, 10);
		if (g->tagged) {
			o[i].op = k < 5 ? KV_OP_SET : KV_OP_GET;
		} else {
			o[i].op = k < 3 ? KV_OP_SET : k < 6 ? KV_OP_GET : k < 8 ? KV_OP_INCR : KV_OP_DEL;
		}
		if (o[i].op == KV_OP_SET) {
			if (g->tagged || rng_below(r, 3) == 0) {
				o[i].wkind = HV_TAG;
			} else {
				o[i].wkind = HV_NUM;
				o[i].arg = rng_below(r, 4);
			}
		} else if (o[i].op == KV_OP_INCR) {
			o[i].arg = rng_below(r, 3);
		}
		effect[i] = 1;
	}
	/* linearize at the points (ties by index), simulating the model */
	size_t ord[MAXN];
	for (size_t i = 0; i < n; i++)
		ord[i] = i;
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && point[ord[j]] < point[ord[j - 1]]; j--) {
			size_t t = ord[j]; ord[j] = ord[j - 1]; ord[j - 1] = t;
		}
	struct check_state s = { 0 };
	for (size_t x = 0; x < n; x++) {
		struct history_op *p = &o[ord[x]];
		if (rng_below(r, 100) < (uint64_t)g->unknown_pct) {
			/* never committed: took effect here, or never */
			effect[ord[x]] = (int)rng_below(r, 2);
			p->t_ret = HISTORY_T_UNKNOWN;
			p->status = HISTORY_ST_UNKNOWN;
			if (effect[ord[x]])
				sim_apply(p, &s);
			continue;
		}
		set_output(p, &s);
		sim_apply(p, &s);
		if ((p->op == KV_OP_SET || p->op == KV_OP_DEL) &&
		    rng_below(r, 100) < (uint64_t)g->unseen_pct)
			p->status = HISTORY_ST_UNSEEN;
	}
	for (int c = 0; c < 3 && rng_below(r, 100) < (uint64_t)g->corrupt_pct; c++) {
		struct history_op *p = &o[rng_below(r, n)];
		if (p->t_ret != HISTORY_T_UNKNOWN && rng_below(r, 2)) {
			/* move the interval */
			uint64_t len = p->t_ret - p->t_inv;
			p->t_inv = rng_below(r, 20);
			p->t_ret = p->t_inv + len;
		} else if (p->op == KV_OP_GET && p->status != HISTORY_ST_UNKNOWN) {
			if (p->status == KV_NOT_FOUND || rng_below(r, 2)) {
				/* read some other write's value */
				size_t w = rng_below(r, n);
				if (o[w].op == KV_OP_SET) {
					p->status = KV_OK;
					p->rkind = o[w].wkind;
					p->rclient = o[w].client;
					p->rseq = o[w].seq;
					p->rval = o[w].arg;
				}
			} else {
				p->status = KV_NOT_FOUND;
				p->rkind = HV_NONE;
			}
		} else if (p->op == KV_OP_INCR && p->status == KV_OK) {
			p->rval += 1;
		} else if (p->op == KV_OP_DEL && p->status != HISTORY_ST_UNKNOWN) {
			p->status = p->status == KV_OK ? KV_NOT_FOUND : KV_OK;
		}
	}
	return n;
}

static int compare_run(uint64_t seed, const struct gen_cfg *g, unsigned count, unsigned *lin,
		       unsigned *nonlin, unsigned *fastn)
{
	struct rng r;
	rng_seed(&r, seed);
	int bad = 0;
	struct check_budget b = { 0 }, bslow = { .no_fast = 1 };
	for (unsigned it = 0; it < count; it++) {
		struct history_op o[MAXN];
		size_t n = gen_history(&r, g, o);
		int want = brute(o, n);
		struct check_key_result res, res2;
		check_key(o, n, &b, &res);
		check_key(o, n, &bslow, &res2);
		int got = res.verdict == CHECK_OK, got2 = res2.verdict == CHECK_OK;
		*fastn += (unsigned)res.fast;
		if (want)
			(*lin)++;
		else
			(*nonlin)++;
		if (got != want || got2 != want || res.verdict == CHECK_UNKNOWN) {
			if (bad++ < 3) {
				fprintf(stderr, "  history %u (seed %llu): brute %s, checker %s (fast %d), "
					"search %s\n", it, (unsigned long long)seed, want ? "ok" : "violation",
					check_verdict_name(res.verdict), res.fast, check_verdict_name(res2.verdict));
				for (size_t i = 0; i < n; i++) {
					char line[256];
					check_op_text(line, sizeof line, &o[i], 0, 0);
					fprintf(stderr, "    %s\n", line);
				}
			}
		}
	}
	return bad;
}

TEST(general_agrees_with_brute_force)
{
	struct gen_cfg g = { .tagged = 0, .unknown_pct = 8, .unseen_pct = 30, .corrupt_pct = 75 };
	unsigned lin = 0, non = 0, fast = 0;
	int bad = compare_run(1, &g, 20000, &lin, &non, &fast);
	CHECK(bad == 0, "%d of 20000 disagreements", bad);
	printf("  general: %u linearizable, %u not\n", lin, non);
	CHECK(lin >= 4000 && non >= 4000, "unhealthy mix: %u linearizable, %u not", lin, non);
}

TEST(fast_path_agrees_with_brute_force)
{
	struct gen_cfg g = { .tagged = 1, .unknown_pct = 8, .unseen_pct = 30, .corrupt_pct = 75 };
	unsigned lin = 0, non = 0, fast = 0;
	int bad = compare_run(2, &g, 20000, &lin, &non, &fast);
	CHECK(bad == 0, "%d of 20000 disagreements", bad);
	printf("  tagged: %u linearizable, %u not, %u by the fast path\n", lin, non, fast);
	CHECK(lin >= 4000 && non >= 4000, "unhealthy mix: %u linearizable, %u not", lin, non);
	CHECK(fast >= 19000, "the fast path decided only %u of 20000", fast);
}

TEST(no_unknowns_agree)
{
	/* histories where every op committed, statuses seen */
	struct gen_cfg g = { .tagged = 0, .unknown_pct = 0, .unseen_pct = 0, .corrupt_pct = 75 };
	unsigned lin = 0, non = 0, fast = 0;
	int bad = compare_run(3, &g, 10000, &lin, &non, &fast);
	CHECK(bad == 0, "%d of 10000 disagreements", bad);
	CHECK(lin >= 2000 && non >= 2000, "unhealthy mix: %u linearizable, %u not", lin, non);
}

TEST(negative_control_brute_force_has_teeth)
{
	/* a get that reads a value written only after it returned */
	struct history_op o[2];
	memset(o, 0, sizeof o);
	o[0] = (struct history_op){ .t_inv = 10, .t_ret = 20, .op = KV_OP_SET, .status = KV_OK,
				    .client = 1, .seq = 1, .wkind = HV_TAG };
	o[1] = (struct history_op){ .t_inv = 0, .t_ret = 5, .op = KV_OP_GET, .status = KV_OK,
				    .client = 2, .seq = 1, .rkind = HV_TAG, .rclient = 1, .rseq = 1 };
	CHECK(!brute(o, 2));
	struct check_budget b = { 0 };
	struct check_key_result r;
	check_key(o, 2, &b, &r);
	CHECK(r.verdict == CHECK_VIOLATION);
	CHECK(r.bad == 1, "bad op %ld", r.bad);
	o[1].t_inv = 15;
	o[1].t_ret = 25;
	CHECK(brute(o, 2));
	check_key(o, 2, &b, &r);
	CHECK(r.verdict == CHECK_OK);
}

TEST(budget_gives_unknown_never_ok)
{
	/* 40 concurrent incrs on one key with a wrong final read: the search
	 * must explore a lot; with a tiny memory budget it says unknown */
	struct history_op o[42];
	memset(o, 0, sizeof o);
	o[0] = (struct history_op){ .t_inv = 0, .t_ret = 1, .op = KV_OP_SET, .status = KV_OK,
				    .wkind = HV_NUM, .arg = 0, .client = 1, .seq = 1 };
	for (int i = 1; i <= 40; i++)
		o[i] = (struct history_op){ .t_inv = 10, .t_ret = 100, .op = KV_OP_INCR,
					    .status = HISTORY_ST_UNSEEN, .arg = (uint64_t)i,
					    .client = (uint32_t)i + 1, .seq = 1 };
	o[41] = (struct history_op){ .t_inv = 200, .t_ret = 210, .op = KV_OP_GET, .status = KV_OK,
				     .rkind = HV_NUM, .rval = 1, .client = 1, .seq = 2 };
	struct check_budget b = { .mem_bytes = 1 << 20 };
	struct check_key_result r;
	check_key(o, 42, &b, &r);
	CHECK(r.verdict == CHECK_UNKNOWN, "verdict %s", check_verdict_name(r.verdict));
	CHECK(strstr(r.why, "budget") != NULL, "why: %s", r.why);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)len + 1);
	if (b && fread(b, 1, (size_t)len, f) != (size_t)len) {
		free(b);
		b = NULL;
	}
	if (b)
		b[len] = 0;
	fclose(f);
	return b;
}

TEST(golden_histories)
{
	const char *root = getenv("OQB_ROOT");
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/tests/check/golden", root ? root : ".");
	DIR *d = opendir(dir);
	REQUIRE(d != NULL, "cannot open %s", dir);
	struct dirent *de;
	unsigned files = 0, viol = 0, okc = 0;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l < 5 || strcmp(de->d_name + l - 4, ".txt"))
			continue;
		char path[2048], err[512];
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		char *text = slurp(path);
		CHECK(text != NULL, "%s", path);
		if (!text)
			continue;
		struct history_op *o;
		size_t n;
		int expect;
		int rc = check_text_parse(text, de->d_name, &o, &n, &expect, err, sizeof err);
		free(text);
		CHECK(rc == 0, "%s", err);
		if (rc)
			continue;
		CHECK(expect >= 0, "%s: no '# expect:' line", de->d_name);
		files++;
		/* golden files hold one key each (the format allows more; check_cmd splits) */
		struct check_budget b = { .time_s = 10 }, bslow = { .time_s = 10, .no_fast = 1 };
		struct check_key_result r, r2;
		check_key(o, n, &b, &r);
		check_key(o, n, &bslow, &r2);
		CHECK((int)r.verdict == expect, "%s: expected %s, got %s (%s)", de->d_name,
		      check_verdict_name((enum check_verdict)expect), check_verdict_name(r.verdict), r.why);
		CHECK(r2.verdict == r.verdict, "%s: search says %s", de->d_name, check_verdict_name(r2.verdict));
		if (n <= MAXN + 2 && n <= 12)
			CHECK(brute(o, n) == (expect == CHECK_OK), "%s: brute force disagrees", de->d_name);
		viol += expect == CHECK_VIOLATION;
		okc += expect == CHECK_OK;
		free(o);
	}
	closedir(d);
	CHECK(files >= 8 && viol >= 4 && okc >= 4, "%u golden files (%u violations, %u ok)", files, viol, okc);
}

TEST(text_parse_errors_name_the_line)
{
	struct history_op *o;
	size_t n;
	int expect;
	char err[256];
	CHECK(check_text_parse("1 0 5 set k 1:1 -> ok\n1 3 2 get k -> nf\n", "h", &o, &n, &expect,
			       err, sizeof err) == -1);
	CHECK(strstr(err, "h:2:") != NULL, "%s", err);
	CHECK(check_text_parse("1 0 5 set k 2:1 -> ok\n", "h", &o, &n, &expect, err, sizeof err) == -1);
	CHECK(strstr(err, "client") != NULL, "%s", err);
	CHECK(check_text_parse("1 0 5 get k -> ok\n", "h", &o, &n, &expect, err, sizeof err) == -1);
	REQUIRE(check_text_parse("# expect: ok\n1 0 5 set k #3 -> ok # comment\n1 6 7 incr k 2 -> ok #5\n",
				 "h", &o, &n, &expect, err, sizeof err) == 0, "%s", err);
	CHECK(n == 2 && expect == CHECK_OK && o[1].rkind == HV_NUM && o[1].rval == 5);
	free(o);
}

UNIT_MAIN(general_agrees_with_brute_force, fast_path_agrees_with_brute_force, no_unknowns_agree,
	  negative_control_brute_force_has_teeth, budget_gives_unknown_never_ok, golden_histories,
	  text_parse_errors_name_the_line)
