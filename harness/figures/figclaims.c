/*
 * figclaims.c - the paper's claims beside what the runs measured, and the
 * fidelity check of the qualitative claims (figures.c is the map;
 * definitions in docs/figures.md).
 *
 * A latency claim is compared three times: at the run's peak, at 80 % of
 * it, and at its clean load (figclean.h: the highest load at which neither
 * number compared is flagged and neither point saturated).  The first two
 * carry their caveats; the third exists or says why not, so a reader finds
 * per claim one comparison no self-check warned about, or the reason there
 * is none.  The same rows go to the report's table and to claims.json.
 */
#include "figures_internal.h"
#include "result.h"
#include "figclean.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The run of a claim's workload ("cluster12", "ycsb-put50", ...), or NULL. */
static struct frun *claim_run(const struct fctx *x, const char *wl)
{
	for (int k = 0; k < 4; k++) {
		char name[32];
		snprintf(name, sizeof name, "cluster%d", fg_clusters[k]);
		if (!strcmp(wl, name))
			return x->panel78[k];
		if (!strcmp(wl, fg_put_names[k]))
			return x->panel910[k];
	}
	return NULL;
}

/*
 * What a reader must know about the two points a change was taken from:
 * brief is "" when both are clean; else which system was saturated (its
 * latency is a queue that grew for the whole window, so the change
 * describes the run's length as much as the systems) or had a self-check
 * warn about the number compared, and checks names those checks
 * ("oq: a, b; rawrpc: c" when both were flagged).
 */
struct caveat {
	char brief[48];
	char checks[224];
};

/* One comparison of a claim: OQ's number relative to the baseline's at one load. */
struct cmp {
	double load;      /* offered ops/s; NAN: no such load */
	double change;    /* percent; NAN: not measured */
	double raw_change;   /* a P99 claim judged on the system's P99: the raw P99's change beside it, else NAN */
	double floor_ns;  /* like with like: the canary of the floor both sides' trials came from, else NAN */
	int floor_trials[2];   /* how many trials of oq's and the baseline's point that floor held */
	struct caveat cav;
};

/* The regimes of p as fc_pair_regimes sees them: its floors, or the
 * point itself as one floor judged by its own checks. */
static size_t side_regimes(const struct fpt *p, struct fc_regime *r)
{
	if (!p->nreg) {
		r[0] = (struct fc_regime){ p->canary, p->trials, 1 };
		return 1;
	}
	for (size_t i = 0; i < p->nreg; i++)
		r[i] = p->reg[i].r;
	return p->nreg;
}

/* v = p's numbers on its floor i: a mixed point's checks as they stand
 * but its trial_agreement, which that floor's own replaces. */
static void on_floor(const struct fpt *p, int i, struct fpt *v)
{
	const struct freg *g = &p->reg[i];
	char w[sizeof p->warns_q[0]];

	if (!p->nreg)
		return;   /* one floor: the point as it stands */
	v->p50 = g->p50;
	v->p99 = g->p99;
	v->sys99 = g->sys99;
	v->trials = g->r.trials;
	for (int q = 0; q < 3; q++) {
		fc_list_without(w, sizeof w, p->warns_q[q], "trial_agreement");
		if (g->agree_q[q])
			snprintf(w + strlen(w), sizeof w - strlen(w), "%strial_agreement", w[0] ? "," : "");
		snprintf(v->warns_q[q], sizeof v->warns_q[q], "%s", w);
		v->flag_q[q] = w[0] != '\0';
	}
}

/*
 * Like with like (figclean.h): what OQ's point pa and the baseline's pb
 * compare, into va and vb (copies).  Where either point's trials ran on
 * two floors of the machine, each side's numbers come from the floor both
 * ran on (fc_pair_regimes), and m (when not NULL) names it; where no
 * judged floor is shared, or neither point is mixed, the points stand as
 * they are (a mixed one flagged by its trial_agreement).
 */
static void like_with_like(const struct fpt *pa, const struct fpt *pb, struct fpt *va, struct fpt *vb, struct cmp *m)
{
	struct fc_regime ra[FG_MAXREG], rb[FG_MAXREG];
	int ia, ib;

	*va = *pa;
	*vb = *pb;
	if (m) {
		m->floor_ns = NAN;
		m->floor_trials[0] = m->floor_trials[1] = 0;
	}
	if (!pa->nreg && !pb->nreg)
		return;
	size_t na = side_regimes(pa, ra), nb = side_regimes(pb, rb);
	if (fc_pair_regimes(ra, na, rb, nb, isfinite(pa->factor) ? pa->factor : pb->factor, &ia, &ib) < 0)
		return;
	on_floor(pa, ia, va);
	on_floor(pb, ib, vb);
	if (m) {
		m->floor_ns = (pa->nreg ? ra[ia] : rb[ib]).canary;
		m->floor_trials[0] = ra[ia].trials;
		m->floor_trials[1] = rb[ib].trials;
	}
}

/*
 * The number a claim about metric (0 p50, 1 P99) compares at point t, and
 * which flag_q speaks for it: the median; for P99 the system's P99 (the
 * requests no host stall touched) where both points of the pair have it,
 * else the raw one.  A host stall is the machine's, not the system's, so
 * a claim about the system's tail is judged without them (docs/figures.md).
 */
static int pick_q(int p99, const struct fpt *pa, const struct fpt *pb)
{
	if (!p99)
		return 0;
	return isfinite(pa->sys99) && isfinite(pb->sys99) ? 2 : 1;
}

static double value_q(const struct fpt *t, int q)
{
	return q == 0 ? t->p50 : q == 1 ? t->p99 : t->sys99;
}

static void pair_caveat(struct caveat *c, const char *vs, const struct fpt *pa, const struct fpt *pb, int q)
{
	char wa[96], wb[96];

	fc_list_spaced(wa, sizeof wa, pa->warns_q[q]);
	fc_list_spaced(wb, sizeof wb, pb->warns_q[q]);
	c->brief[0] = c->checks[0] = '\0';
	if (pa->saturated && pb->saturated)
		snprintf(c->brief, sizeof c->brief, "both saturated");
	else if (pa->saturated || pb->saturated)
		snprintf(c->brief, sizeof c->brief, "%s saturated", pa->saturated ? "oq" : vs);
	else if (pa->flag_q[q] && pb->flag_q[q]) {
		snprintf(c->brief, sizeof c->brief, "both flagged");
		snprintf(c->checks, sizeof c->checks, "oq: %s; %s: %s", wa[0] ? wa : "?", vs, wb[0] ? wb : "?");
	} else if (pa->flag_q[q] || pb->flag_q[q]) {
		snprintf(c->brief, sizeof c->brief, "%s flagged", pa->flag_q[q] ? "oq" : vs);
		snprintf(c->checks, sizeof c->checks, "%s", pa->flag_q[q] ? wa : wb);
	}
}

/* The caveat in one line: "rawrpc flagged (stationarity)", "" when clean. */
static void caveat_line(char *buf, size_t len, const struct caveat *c)
{
	if (c->checks[0])
		snprintf(buf, len, "%s (%s)", c->brief, c->checks);
	else
		snprintf(buf, len, "%s", c->brief);
}

/* OQ's metric relative to vs at load, in percent, into m (NAN when a point
 * is missing), with its caveat. */
static void change_at(const struct frun *r, const char *metric, const char *vs, double load, struct cmp *m)
{
	const struct fsys *a = fg_sys_of(r, "oq"), *b = fg_sys_of(r, vs);
	const struct fpt *oa = a ? fg_pt_at(a, load) : NULL, *ob = b ? fg_pt_at(b, load) : NULL;
	int p99 = !strcmp(metric, "p99");
	struct fpt la, lb, *pa = &la, *pb = &lb;

	memset(m, 0, sizeof *m);
	m->load = load;
	m->change = m->raw_change = m->floor_ns = NAN;
	if (!oa || !ob)
		return;
	like_with_like(oa, ob, pa, pb, m);
	int q = pick_q(p99, pa, pb);
	double va = value_q(pa, q), vb = value_q(pb, q);
	if (!(vb > 0))
		return;
	pair_caveat(&m->cav, vs, pa, pb, q);
	m->change = 100.0 * (va / vb - 1);
	if (q == 2 && pb->p99 > 0)
		m->raw_change = 100.0 * (pa->p99 / pb->p99 - 1);
}

/* What the fraction of a clean load is taken of: the knee itself when the
 * run found one (the peak is the load nearest to it), else the peak. */
static double peak_ref(const struct frun *r, const char **name)
{
	double knee = result_knee_ops(r->run, NULL);
	if (!strncmp(r->basis, "knee", 4) && knee > 0) {
		*name = "the knee";
		return knee;
	}
	*name = "peak";
	return r->peak;
}

/* The clean load of OQ against vs on run r (figclean.h). */
static void clean_of(const struct frun *r, const char *metric, const char *vs, struct fc_result *res)
{
	const struct fsys *s[2] = { fg_sys_of(r, "oq"), fg_sys_of(r, vs) };
	struct fc_point p[2][FG_MAXPT];
	struct fpt (*v)[FG_MAXPT] = calloc(2, sizeof *v), other;
	int p99 = !strcmp(metric, "p99");
	const char *ref;

	if (!v) {
		memset(res, 0, sizeof *res);
		res->load = res->frac = res->change = NAN;
		snprintf(res->why, sizeof res->why, "out of memory choosing the clean load (figclaims.c); "
			 "free memory and run oqb figures again");
		return;
	}
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; s[k] && i < s[k]->n; i++) {
			const struct fpt *t = &s[k]->pt[i];
			/* the other system's point at the same load decides
			 * which P99 (pick_q) and which floor (like_with_like);
			 * without one, this point's own */
			const struct fpt *o = s[1 - k] ? fg_pt_at(s[1 - k], t->offered) : NULL;
			struct fpt *vt = &v[k][i];
			if (!o)
				*vt = *t;
			else if (k == 0)
				like_with_like(t, o, vt, &other, NULL);
			else
				like_with_like(o, t, &other, vt, NULL);
			int q = pick_q(p99, vt, o ? &other : vt);
			p[k][i] = (struct fc_point){ t->offered, value_q(vt, q), t->saturated, vt->flag_q[q],
						     vt->warns_q[q] };
		}
	fc_clean_load(p[0], s[0] ? s[0]->n : 0, p[1], s[1] ? s[1]->n : 0, "oq", vs, peak_ref(r, &ref), res);
	free(v);
}

struct measured {
	struct cmp peak, p80;
	struct fc_result clean;
	struct cmp clean_at;            /* the comparison at the clean load: its raw P99, its floor */
	const struct frun *p80_run;     /* the run the 80 % comparison is from */
	const struct frun *clean_run;   /* the run the clean comparison is from */
	char clean_why[1024];           /* no clean comparison: why */
	int throughput;                 /* a throughput claim: no loads to choose from */
	char where[256];                /* which run, loads, machine */
	char why[256];                  /* when not measured */
	const struct frun *run;
	char ran[160];                  /* the mechanism the number ran on */
	json_t *on_value;               /* a ratio claim: the value of its key on the "on" side (borrowed) */
	int stand_in;                   /* the run did not use the claim's mechanism */
	char stand_in_why[256];
};

/*
 * The mechanism a run's numbers ran on, in words: the transport, and on
 * verbs the receive-buffer mode, XRC and delegation (their defaults when
 * the config leaves them out: srq, off, off).
 */
static void mechanism_of(const struct frun *r, char *buf, size_t len)
{
	const char *mode = result_setting_str(r->run, "verbs.recv_mode");

	if (strcmp(r->transport, "verbs") != 0) {
		snprintf(buf, len, "%s (no SRQ, QP or XRC: the shm ring stands in)", r->transport);
		return;
	}
	snprintf(buf, len, "verbs, recv_mode %s, XRC %s, delegation %s",
		 mode ? mode : "srq", json_is_true(result_setting(r->run, "verbs.xrc")) ? "on" : "off",
		 json_is_true(result_setting(r->run, "clients.delegation")) ? "on" : "off");
}

/*
 * A claim with "mechanism": {"key": K, "value": V, "name": TEXT} is about
 * a mechanism (the multi-packet SRQ, XRC): its number is the paper's only
 * when the run used it.  The value ran is the "on" side's for a ratio
 * claim, else the run's config value at K (absent: a key under verbs. on
 * another transport, or the default, is not V).  A run on anything else
 * is a stand-in: its number shows a trend, and is never counted as the
 * paper's claim reproduced.
 */
static void judge_mechanism(const json_t *c, struct measured *m)
{
	const json_t *mech = json_object_get(c, "mechanism");
	const char *key = fg_jstr(mech, "key", NULL);
	const json_t *want = json_object_get(mech, "value");
	const json_t *ran;
	char *txt = NULL;

	if (!m->run || !key || !want || isnan(m->peak.change))
		return;
	ran = m->on_value ? m->on_value : result_setting(m->run->run, key);
	if (!strncmp(key, "verbs.", 6) && strcmp(m->run->transport, "verbs") != 0)
		ran = NULL;
	if (ran && json_equal((json_t *)ran, (json_t *)want))
		return;
	if (ran)
		txt = json_dumps(ran, JSON_ENCODE_ANY | JSON_COMPACT);
	m->stand_in = 1;
	snprintf(m->stand_in_why, sizeof m->stand_in_why, "stand-in: trend only (ran %s %s, not the paper's %s)",
		 key, txt ? txt : (strcmp(m->run->transport, "verbs") ? "absent on shm" : "at its default"),
		 fg_jstr(mech, "name", key));
	free(txt);
}

/* Latency claims: at the run's peak, at 80 % of it and at the clean load;
 * any-cluster: the best cluster of each. */
static void measure_latency(const struct fctx *x, const json_t *c, struct measured *m)
{
	const char *wl = fg_jstr(c, "workload", ""), *metric = fg_jstr(c, "metric", "p50"), *vs = fg_jstr(c, "vs", "");
	char a[32], b[32];

	if (!strcmp(wl, "any-cluster")) {
		int best = -1;
		size_t o = 0;
		for (int k = 0; k < 4; k++) {
			const struct frun *r = x->panel78[k];
			struct cmp v;
			struct fc_result cl;
			if (!r)
				continue;
			change_at(r, metric, vs, r->peak, &v);
			if (!isnan(v.change) && (best < 0 || v.change < m->peak.change)) {
				best = k;
				m->peak = v;
				m->run = r;
			}
			change_at(r, metric, vs, r->load80, &v);
			if (!isnan(v.change) && (isnan(m->p80.change) || v.change < m->p80.change)) {
				m->p80 = v;
				m->p80_run = r;
			}
			clean_of(r, metric, vs, &cl);
			if (cl.found && (!m->clean.found || cl.change < m->clean.change)) {
				m->clean = cl;
				m->clean_run = r;
			} else if (!cl.found && o < sizeof m->clean_why)
				o += (size_t)snprintf(m->clean_why + o, sizeof m->clean_why - o, "%scluster %d: %s",
						      o ? "; " : "", fg_clusters[k], cl.why);
		}
		if (best < 0)
			snprintf(m->why, sizeof m->why, "no cluster run with oq and %s", vs);
		else
			snprintf(m->where, sizeof m->where, "best of the cluster runs (at peak: cluster %d)",
				 fg_clusters[best]);
		if (m->clean.found)
			m->clean_why[0] = '\0';
		return;
	}
	m->run = claim_run(x, wl);
	if (!m->run) {
		snprintf(m->why, sizeof m->why, "not run (no %s run)", wl);
		return;
	}
	if (!fg_sys_of(m->run, vs) || !fg_sys_of(m->run, "oq")) {
		snprintf(m->why, sizeof m->why, "not run (%s has no %s points)", m->run->name,
			 fg_sys_of(m->run, "oq") ? vs : "oq");
		m->run = NULL;
		return;
	}
	change_at(m->run, metric, vs, m->run->peak, &m->peak);
	change_at(m->run, metric, vs, m->run->load80, &m->p80);
	m->p80_run = m->run;
	clean_of(m->run, metric, vs, &m->clean);
	if (m->clean.found)
		m->clean_run = m->run;
	else
		snprintf(m->clean_why, sizeof m->clean_why, "%s", m->clean.why);
	fg_fmt_ops(a, sizeof a, m->run->peak);
	fg_fmt_ops(b, sizeof b, m->run->load80);
	snprintf(m->where, sizeof m->where, "%s%s: peak %s offered, 80 %% = %s", m->run->name,
		 m->run->durable ? " (oq durable)" : "", a, b);
}

/* Fig 11 (value size) and Fig 6 (ablation) throughput ratios. */
static void measure_throughput(const struct fctx *x, const json_t *c, struct measured *m)
{
	double vsz = fg_jnum(c, "value_size");
	const char *ratio = fg_jstr(c, "ratio", NULL);

	m->throughput = 1;
	if (!ratio) {
		const json_t *vals;
		m->run = x->fig11;
		if (!m->run) {
			snprintf(m->why, sizeof m->why, "not run (no value-size sweep)");
			return;
		}
		vals = result_setting(m->run->run, "sweep.values");
		for (size_t w = 0; w < json_array_size(vals); w++)
			if (json_number_value(json_array_get(vals, w)) == vsz) {
				double a = fg_sweep_peak(m->run->run, "oq", (long long)w, NULL);
				double b = fg_sweep_peak(m->run->run, fg_jstr(c, "vs", "rawrpc"), (long long)w, NULL);
				m->peak.change = b > 0 ? 100.0 * (a / b - 1) : NAN;
			}
		snprintf(m->where, sizeof m->where, "%s: peak throughput at %.0f B", m->run->name, vsz);
		if (isnan(m->peak.change))
			snprintf(m->why, sizeof m->why, "not run (%s has no %.0f B point of both systems)",
				 m->run->name, vsz);
		return;
	}
	/* Fig 6: the best throughput of each setting at this size and durability. */
	int dur = json_is_true(json_object_get(c, "durable"));
	double on = NAN, off = NAN;
	json_t *on_v = NULL, *off_v = NULL;
	for (size_t r = 0; r < x->nfig6; r++) {
		const struct frun *run = x->fig6[r];
		const char *key = result_setting_str(run->run, "sweep.key");
		size_t i;
		json_t *p;
		json_array_foreach(result_points(run->run), i, p) {
			const json_t *v = json_is_null(result_sweep_value(p)) ? NULL : result_sweep_value(p);
			int pd = result_durable(p);
			double a = result_achieved(p), *slot = NULL;
			if (result_value_size(p) != vsz)
				continue;
			if (!strcmp(ratio, "durability"))
				slot = pd ? &on : &off;
			else if (pd != dur)
				continue;
			else if (!strcmp(ratio, "mp") && key && !strcmp(key, "verbs.recv_mode") && json_is_string(v))
				slot = strcmp(json_string_value(v), "srq") ? &on : &off;
			else if (!strcmp(ratio, "delegation") && key && !strcmp(key, "clients.delegation"))
				slot = json_is_true(v) ? &on : &off;
			if (slot && (isnan(*slot) || a > *slot)) {
				*slot = a;
				m->run = run;
				if (slot == &on)
					on_v = (json_t *)v;
				else
					off_v = (json_t *)v;
			}
		}
	}
	if (isnan(on) || isnan(off) || off <= 0) {
		snprintf(m->why, sizeof m->why, "%s",
			 !strcmp(ratio, "durability") ? "not run (needs fig6-echo and fig6-echo-durable)" :
			 !strcmp(ratio, "mp") ? "not run (needs transport verbs with a verbs.recv_mode sweep "
			 "srq vs slot_ring or mp; shm has no SRQ)" :
			 "not run (needs transport verbs with a clients.delegation sweep; shm has no QPs)");
		m->run = NULL;
		return;
	}
	m->peak.change = 100.0 * (on / off - 1);
	m->on_value = strcmp(ratio, "durability") ? on_v : NULL;
	snprintf(m->where, sizeof m->where, "best throughput of each setting at %.0f B (%.0f vs %.0f ops/s)",
		 vsz, on, off);
	if (on_v && off_v && strcmp(ratio, "durability") != 0) {
		char *a = json_dumps(on_v, JSON_ENCODE_ANY | JSON_COMPACT);
		char *b = json_dumps(off_v, JSON_ENCODE_ANY | JSON_COMPACT);
		snprintf(m->ran, sizeof m->ran, "%s %s vs %s", !strcmp(ratio, "mp") ? "verbs.recv_mode" :
			 "clients.delegation", a ? a : "?", b ? b : "?");
		free(a);
		free(b);
	}
}

static const char *holds(double v, const char *direction)
{
	if (isnan(v))
		return "n/a";
	return (!strcmp(direction, "lower") ? v < 0 : v > 0) ? "yes" : "no";
}

/* The class of a holds() word in the table ("n/a" is no class name). */
static const char *holds_class(const char *h)
{
	return !strcmp(h, "n/a") ? "na" : h;
}

/* ---------------------------------------------------------------- the cells */

/* Like with like: which floor's trials a comparison took, on a line of
 * its own; nothing when the points stood as they were. */
static void floor_note(FILE *f, const struct cmp *c)
{
	if (isfinite(c->floor_ns))
		fprintf(f, "<span class=where>like with like: the %.0f ns floor's trials (%d and %d)</span>",
			c->floor_ns, c->floor_trials[0], c->floor_trials[1]);
}

/* " (the 540 ns floor's trials)" into buf when a comparison took one
 * floor's trials, else ""; buf. */
static const char *floor_words(char *buf, size_t len, const struct cmp *c)
{
	buf[0] = '\0';
	if (isfinite(c->floor_ns))
		snprintf(buf, len, " (the %.0f ns floor's trials)", c->floor_ns);
	return buf;
}

/* A change at peak or at 80 %: the number, then its caveat and on a line
 * of its own the checks that warned (long lists wrap there). */
static void cmp_cell(FILE *f, const struct cmp *c)
{
	if (isnan(c->change)) {
		fputs("<td class=na>—</td>", f);
		return;
	}
	fprintf(f, "<td class=num>%+.1f %%", c->change);
	if (!isnan(c->raw_change))
		fprintf(f, "<span class=where>system P99; raw P99 %+.1f %%</span>", c->raw_change);
	floor_note(f, c);
	if (c->cav.brief[0]) {
		fputs("<span class=caveat>", f);
		fg_html_escape(f, c->cav.brief);
		fputs("</span>", f);
	}
	if (c->cav.checks[0]) {
		fputs("<span class=checks>", f);
		fg_html_escape(f, c->cav.checks);
		fputs("</span>", f);
	}
	fputs("</td>", f);
}

/* Where the clean load is, "at 80 Kops/s, 80 % of the knee", in buf, and
 * in also which other column of the row it is ("" when neither). */
static void clean_where(const struct measured *m, char *buf, size_t len, char *also, size_t alen)
{
	const char *ref;
	char l[32];

	fg_fmt_ops(l, sizeof l, m->clean.load);
	peak_ref(m->clean_run, &ref);
	if (isnan(m->clean.frac))
		snprintf(buf, len, "at %s", l);
	else
		snprintf(buf, len, "at %s, %.0f %% of %s", l, 100 * m->clean.frac, ref);
	also[0] = '\0';
	if (m->clean_run == m->run && m->clean.load == m->peak.load)
		snprintf(also, alen, "the peak column is clean");
	else if (m->clean_run == m->p80_run && m->clean.load == m->p80.load)
		snprintf(also, alen, "the 80 %% column is clean");
}

static void clean_cell(FILE *f, const struct measured *m)
{
	char w[96], also[96];

	if (m->throughput) {
		fputs("<td class=na>n/a<span class=where>a throughput claim: each setting's best</span></td>", f);
		return;
	}
	if (!m->clean.found && !m->clean_why[0]) {
		fputs("<td class=na>—</td>", f);
		return;
	}
	if (!m->clean.found) {
		fputs("<td class=noclean>none<span class=why>", f);
		fg_html_escape(f, m->clean_why);
		fputs("</span></td>", f);
		return;
	}
	clean_where(m, w, sizeof w, also, sizeof also);
	fprintf(f, "<td class=num>%+.1f %%", m->clean.change);
	floor_note(f, &m->clean_at);
	fputs("<span class=where>", f);
	fg_html_escape(f, w);
	if (m->clean_run != m->run) {
		fputs(", on ", f);
		fg_html_escape(f, m->clean_run->name);
	}
	if (also[0]) {
		fputs("; ", f);
		fg_html_escape(f, also);
	}
	fputs("</span></td>", f);
}

/* ---------------------------------------------------------------- JSON */

/* Like with like in claims.json: "floor_ns" and "floor_trials" [oq's,
 * the baseline's] when a comparison took one floor's trials. */
static void floor_json(json_t *o, const struct cmp *c)
{
	if (isfinite(c->floor_ns)) {
		json_object_set_new(o, "floor_ns", json_real(c->floor_ns));
		json_object_set_new(o, "floor_trials", json_pack("[ii]", c->floor_trials[0], c->floor_trials[1]));
	}
}

static json_t *cmp_json(const struct cmp *c, const char *dir)
{
	char line[300];
	if (isnan(c->change))
		return json_null();
	caveat_line(line, sizeof line, &c->cav);
	json_t *o = json_pack("{s:f,s:s,s:s}", "change_pct", c->change, "holds", holds(c->change, dir),
			      "caveat", line);
	if (isfinite(c->load))
		json_object_set_new(o, "load_ops", json_real(c->load));
	/* a P99 claim judged on the system's P99 keeps the raw one beside it */
	if (!isnan(c->raw_change)) {
		json_object_set_new(o, "p99_is", json_string("system"));
		json_object_set_new(o, "raw_change_pct", json_real(c->raw_change));
	}
	floor_json(o, c);
	return o;
}

/* One claim as claims.json has it (docs/figures.md). */
static json_t *claim_json(const json_t *c, const struct measured *m, const char *dir)
{
	json_t *o = json_object();
	static const char *const keys[] = { "id", "figure", "section", "workload", "metric", "vs", "load", "text" };

	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (json_is_string(json_object_get(c, keys[i])))
			json_object_set(o, keys[i], json_object_get(c, keys[i]));
	json_object_set(o, "paper_change_pct", json_is_number(json_object_get(c, "change_pct")) ?
			json_object_get(c, "change_pct") : json_null());
	json_object_set_new(o, "direction", json_string(dir));
	json_object_set_new(o, "measured", json_boolean(!isnan(m->peak.change)));
	if (isnan(m->peak.change))
		json_object_set_new(o, "not_measured", json_string(m->why[0] ? m->why : "not measured"));
	else {
		json_object_set_new(o, "where", json_string(m->where));
		if (m->run)
			json_object_set_new(o, "run", json_pack("{s:s,s:s}", "name", m->run->name, "machine",
								m->run->machine));
	}
	json_object_set_new(o, "mechanism_ran", m->ran[0] ? json_string(m->ran) : json_null());
	json_object_set_new(o, "stand_in", m->stand_in ? json_string(m->stand_in_why) : json_null());
	json_object_set_new(o, "at_peak", cmp_json(&m->peak, dir));
	json_object_set_new(o, "at_80pct", m->throughput ? json_null() : cmp_json(&m->p80, dir));
	if (m->clean.found) {
		const char *ref;
		double pk = peak_ref(m->clean_run, &ref);
		json_t *cl = json_pack("{s:s,s:f,s:f,s:f,s:f,s:s,s:i,s:i}", "run", m->clean_run->name,
				       "load_ops", m->clean.load, "oq", m->clean.a, "baseline", m->clean.b,
				       "change_pct", m->clean.change, "holds", holds(m->clean.change, dir),
				       "clean_loads", (int)m->clean.nclean, "loads_compared", (int)m->clean.nloads);
		json_object_set_new(cl, "of_peak", isfinite(m->clean.frac) ? json_real(m->clean.frac) : json_null());
		/* the raw P99's change at the same load, beside the system's */
		if (!isnan(m->clean_at.raw_change)) {
			json_object_set_new(cl, "p99_is", json_string("system"));
			json_object_set_new(cl, "raw_change_pct", json_real(m->clean_at.raw_change));
		}
		floor_json(cl, &m->clean_at);
		json_object_set_new(cl, "peak_ops", isfinite(pk) ? json_real(pk) : json_null());
		json_object_set_new(cl, "peak_is", json_string(!strcmp(ref, "the knee") ? "knee" : "peak"));
		json_object_set_new(cl, "is_peak_column", json_boolean(m->clean_run == m->run &&
								       m->clean.load == m->peak.load));
		json_object_set_new(cl, "is_80pct_column", json_boolean(m->clean_run == m->p80_run &&
									m->clean.load == m->p80.load));
		json_object_set_new(o, "clean", cl);
	} else {
		json_object_set_new(o, "clean", json_null());
		json_object_set_new(o, "clean_none", json_string(m->throughput ? "a throughput claim: compared at "
						  "each setting's best throughput, not at one load" :
						  m->clean_why[0] ? m->clean_why : m->why[0] ? m->why : "not measured"));
	}
	return o;
}

/* ---------------------------------------------------------------- the table */

/* The claims table; counts rows, how many hold at peak and at the clean
 * load; each row also goes to out (a JSON array) when out is not NULL. */
void fg_claims_table(FILE *f, const struct fctx *x, const json_t *claims, json_t *out, struct fg_claims_count *n)
{
	size_t i;
	json_t *c;

	/* fixed layout: the widths below, long text wraps inside its cell
	 * (tests/integration/report-width.sh checks that it fits 1,400 px) */
	fputs("<table id=claims>\n<colgroup><col class=c-claim><col class=c-paper><col class=c-peak><col class=c-80>"
	      "<col class=c-clean><col class=c-holds><col class=c-run></colgroup>\n"
	      "<thead><tr><th>Figure (§), workload: the paper says</th><th>Paper</th><th>Here at peak</th>"
	      "<th>Here at 80 % of peak</th><th>Here at the clean load</th><th>Direction holds (peak / 80 % / "
	      "clean)</th><th>Run, machine and transport</th></tr></thead>\n<tbody>\n", f);
	json_array_foreach(json_object_get(claims, "claims"), i, c) {
		struct measured m = { .peak = { .load = NAN, .change = NAN, .raw_change = NAN, .floor_ns = NAN },
				      .p80 = { .load = NAN, .change = NAN, .raw_change = NAN, .floor_ns = NAN } };
		const char *dir = fg_jstr(c, "direction", "lower");
		const char *h1, *h2, *h3;

		m.clean.change = NAN;
		m.clean_at.floor_ns = m.clean_at.raw_change = NAN;
		if (!strcmp(fg_jstr(c, "metric", ""), "throughput"))
			measure_throughput(x, c, &m);
		else
			measure_latency(x, c, &m);
		if (m.clean.found)
			change_at(m.clean_run, fg_jstr(c, "metric", "p50"), fg_jstr(c, "vs", ""), m.clean.load,
				  &m.clean_at);
		if (m.run && !m.ran[0])
			mechanism_of(m.run, m.ran, sizeof m.ran);
		judge_mechanism(c, &m);
		h1 = holds(m.peak.change, dir);
		h2 = holds(m.p80.change, dir);
		h3 = m.clean.found ? holds(m.clean.change, dir) : "n/a";
		n->rows++;
		if (m.stand_in)
			n->stand_in++;
		else if (!isnan(m.peak.change)) {
			n->judged++;
			n->held += !strcmp(h1, "yes");
			n->clean += m.clean.found;
			n->clean_held += m.clean.found && !strcmp(h3, "yes");
		}
		if (out)
			json_array_append_new(out, claim_json(c, &m, dir));
		fprintf(f, "<tr class=\"%s\"><td><b>", isnan(m.peak.change) ? "notrun" : m.stand_in ? "standin" :
			!strcmp(h1, "yes") ? "holds" : "fails");
		fg_html_escape(f, fg_jstr(c, "figure", "?"));
		fputs(" (§", f);
		fg_html_escape(f, fg_jstr(c, "section", "?"));
		fputs(")</b>, ", f);
		fg_html_escape(f, fg_jstr(c, "workload", "?"));
		fputs(": ", f);
		fg_html_escape(f, fg_jstr(c, "text", ""));
		fputs(" <span class=load>[load: ", f);
		fg_html_escape(f, fg_jstr(c, "load", "?"));
		fputs("]</span></td>", f);
		if (json_is_number(json_object_get(c, "change_pct")))
			fprintf(f, "<td class=num>%+.1f %%</td>", fg_jnum(c, "change_pct"));
		else
			fprintf(f, "<td>%s</td>", !strcmp(dir, "lower") ? "lower" : "higher");
		cmp_cell(f, &m.peak);
		if (m.throughput)
			fputs("<td class=na>—</td>", f);
		else
			cmp_cell(f, &m.p80);
		clean_cell(f, &m);
		if (m.stand_in) {
			/* the direction is shown, never as the paper's claim holding */
			fputs("<td class=verdict><span class=standin>", f);
			fg_html_escape(f, m.stand_in_why);
			fprintf(f, "</span><span class=trend>trend: %s / %s / %s</span></td><td>", h1, h2, h3);
		} else
			fprintf(f, "<td class=verdict><span class=%s>%s</span> / <span class=%s>%s</span> / "
				"<span class=%s>%s</span></td><td>", holds_class(h1), h1, holds_class(h2), h2,
				holds_class(h3), h3);
		if (isnan(m.peak.change)) {
			fg_html_escape(f, m.why[0] ? m.why : "not measured");
		} else {
			fg_html_escape(f, m.where);
			if (m.run) {
				fputs("<span class=machine>", f);
				fg_html_escape(f, m.run->machine);
				fputs("</span>", f);
			}
			if (m.ran[0]) {
				fputs("<span class=mech>ran: ", f);
				fg_html_escape(f, m.ran);
				fputs("</span>", f);
			}
		}
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody>\n</table>\n", f);
}

/* ---------------------------------------------------------------- the check */

#define FLAT_FACTOR 2.0
#define GROW_FACTOR 2.0

/*
 * The qualitative claims of docs/figures.md on clusters 12 and 31.
 * Writes one line per claim ("PASS name: detail" / "FAIL ...") to out and
 * the same as table rows to html (either may be NULL).  Returns the number
 * of failed claims, or -1 when a run the check needs is missing (why in err).
 */
int fg_check_qualitative(const struct fctx *x, FILE *out, FILE *html, char *err, size_t errlen)
{
	int failed = 0;

	for (int k = 0; k < 4; k++) {
		const struct frun *r = x->panel78[k];
		const struct fsys *oq, *raw, *def;
		char name[64], detail[512], l80[32];
		int ok;

		if (fg_clusters[k] != 12 && fg_clusters[k] != 31)
			continue;
		if (!r) {
			snprintf(err, errlen, "no run of Twitter cluster %d among the runs; run "
				 "configs/fig7-8-cluster%d.json (make figures) first", fg_clusters[k], fg_clusters[k]);
			return -1;
		}
		oq = fg_sys_of(r, "oq");
		raw = fg_sys_of(r, "rawrpc");
		def = fg_sys_of(r, "deferred");
		if (!oq || !raw || !def) {
			snprintf(err, errlen, "%s/run.json: cluster %d needs oq, rawrpc and deferred points; "
				 "it has %s%s%s", r->dir, fg_clusters[k], oq ? "oq " : "", raw ? "rawrpc " : "",
				 def ? "deferred" : "");
			return -1;
		}
		const struct fpt *a = fg_pt_at(oq, r->load80), *b = fg_pt_at(def, r->load80), *c = fg_pt_at(raw, r->load80);
		fg_fmt_ops(l80, sizeof l80, r->load80);
		for (int claim = 0; claim < 3; claim++) {
			if (claim < 2 && (!a || !b || !c)) {
				ok = 0;
				snprintf(detail, sizeof detail, "a system has no point at %s", l80);
			} else if (claim == 0) {
				/* each pair like with like (a floor flip between the
				 * points never decides the order) */
				struct fpt ab[2], bc[2];
				struct cmp fab, fbc;
				char w1[64], w2[64];
				like_with_like(a, b, &ab[0], &ab[1], &fab);
				like_with_like(b, c, &bc[0], &bc[1], &fbc);
				ok = ab[0].p50 < ab[1].p50 && bc[0].p50 < bc[1].p50;
				if (isnan(fab.floor_ns) && isnan(fbc.floor_ns))
					snprintf(detail, sizeof detail, "at 80 %% of peak (%s): oq %.1f us, deferred %.1f us, "
						 "rawrpc %.1f us", l80, a->p50 / 1e3, b->p50 / 1e3, c->p50 / 1e3);
				else
					snprintf(detail, sizeof detail, "at 80 %% of peak (%s), like with like: "
						 "oq %.1f us against deferred %.1f us%s, "
						 "deferred %.1f us against rawrpc %.1f us%s", l80,
						 ab[0].p50 / 1e3, ab[1].p50 / 1e3, floor_words(w1, sizeof w1, &fab),
						 bc[0].p50 / 1e3, bc[1].p50 / 1e3, floor_words(w2, sizeof w2, &fbc));
			} else if (claim == 1) {
				struct fpt ac[2];
				struct cmp fac;
				char w1[64];
				like_with_like(a, c, &ac[0], &ac[1], &fac);
				ok = ac[1].p50 >= 2 * ac[0].p50;
				snprintf(detail, sizeof detail, "at 80 %% of peak (%s): rawrpc/oq median = %.2f "
					 "(needs >= 2)%s", l80, ac[0].p50 > 0 ? ac[1].p50 / ac[0].p50 : INFINITY,
					 floor_words(w1, sizeof w1, &fac));
			} else {
				/* flat: oq's max/min median over the loads up to peak <= 2;
				 * grows: rawrpc's median at peak >= 2 x at its lowest load */
				double lo = INFINITY, hi = 0;
				for (size_t i = 0; i < oq->n && oq->pt[i].offered <= r->peak; i++) {
					lo = fmin(lo, oq->pt[i].p50);
					hi = fmax(hi, oq->pt[i].p50);
				}
				const struct fpt *rp = fg_pt_at(raw, r->peak);
				double g = rp && raw->n && raw->pt[0].p50 > 0 ? rp->p50 / raw->pt[0].p50 : NAN;
				double fl = lo > 0 && isfinite(lo) ? hi / lo : NAN;
				ok = !isnan(fl) && !isnan(g) && fl <= FLAT_FACTOR && g >= GROW_FACTOR;
				snprintf(detail, sizeof detail, "up to peak: oq median max/min = %.2f (flat: <= %.1f), "
					 "rawrpc median at peak / at lowest load = %.2f (grows: >= %.1f)", fl,
					 FLAT_FACTOR, g, GROW_FACTOR);
			}
			static const char *const what[3] = { "order-oq<deferred<rawrpc", "oq-2x-below-rawrpc",
							      "oq-flat-rawrpc-grows" };
			snprintf(name, sizeof name, "cluster%d-%s", fg_clusters[k], what[claim]);
			failed += !ok;
			if (out)
				fprintf(out, "%s %s: %s\n", ok ? "PASS" : "FAIL", name, detail);
			if (html) {
				fprintf(html, "<tr class=%s><td>", ok ? "holds" : "fails");
				fg_html_escape(html, name);
				fprintf(html, "</td><td>%s</td><td>", ok ? "holds" : "fails");
				fg_html_escape(html, detail);
				fputs("</td></tr>\n", html);
			}
		}
	}
	return failed;
}
