/*
 * figclean.c - the clean load of a claim (figclean.h says the rule and why).
 */
#include "figclean.h"
#include "result.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void fc_list_spaced(char *buf, size_t len, const char *warns)
{
	size_t o = 0;

	if (!len)
		return;
	for (; warns && *warns && o + 1 < len; warns++) {
		buf[o++] = *warns;
		if (*warns == ',' && warns[1] != ' ' && o + 1 < len)
			buf[o++] = ' ';
	}
	buf[o] = '\0';
}

/* The next name of the list "a,b" at *list: its start, its length in *n,
 * and *list moved past it; NULL at the end. */
static const char *next_name(const char **list, size_t *n)
{
	const char *name = *list, *end;

	if (!name || !*name)
		return NULL;
	end = strchr(name, ',');
	*n = end ? (size_t)(end - name) : strlen(name);
	*list = name + *n + (end != NULL);
	return name;
}

/* Whether the list "x,y" holds the name of n bytes at name. */
static int list_has(const char *set, const char *name, size_t n)
{
	const char *s;
	size_t m;

	while ((s = next_name(&set, &m)))
		if (m == n && !strncmp(s, name, n))
			return 1;
	return 0;
}

void fc_list_without(char *buf, size_t len, const char *warns, const char *drop)
{
	const char *name;
	size_t o = 0, n;

	if (!len)
		return;
	buf[0] = '\0';
	while ((name = next_name(&warns, &n)))
		if (n && !list_has(drop, name, n) && o + n + 2 < len)
			o += (size_t)snprintf(buf + o, len - o, "%s%.*s", o ? "," : "", (int)n, name);
}

int fc_pair_regimes(const struct fc_regime *a, size_t na, const struct fc_regime *b, size_t nb, double factor,
		    int *ia, int *ib)
{
	int best_min = 0, best_sum = 0;

	*ia = *ib = -1;
	for (size_t i = 0; i < na; i++)
		for (size_t j = 0; j < nb; j++) {
			int lo = a[i].trials < b[j].trials ? a[i].trials : b[j].trials;
			int sum = a[i].trials + b[j].trials;
			if (!a[i].judged || !b[j].judged || lo < 1 ||
			    !result_regime_same(a[i].canary, b[j].canary, factor))
				continue;
			if (lo > best_min || (lo == best_min && sum > best_sum)) {
				best_min = lo;
				best_sum = sum;
				*ia = (int)i;
				*ib = (int)j;
			}
		}
	return *ia < 0 ? -1 : 0;
}

/* Adds each name of the list "a,b" to the set "x,y" in set (len bytes) that
 * is not there yet. */
static void union_add(char *set, size_t len, const char *list)
{
	const char *name;
	size_t n;

	while ((name = next_name(&list, &n))) {
		size_t have = strlen(set);
		if (n && !list_has(set, name, n) && have + n + 2 < len)
			snprintf(set + have, len - have, "%s%.*s", have ? "," : "", (int)n, name);
	}
}

static const struct fc_point *point_at(const struct fc_point *p, size_t n, double load)
{
	for (size_t i = 0; i < n; i++)
		if (p[i].offered == load)
			return &p[i];
	return NULL;
}

static int usable(const struct fc_point *p, int base)
{
	return p && isfinite(p->value) && (base ? p->value > 0 : p->value >= 0);
}

static int clean(const struct fc_point *p)
{
	return !p->saturated && !p->flagged;
}

/* What kept one system's points from being clean over the n loads compared
 * (nsat saturated, nflag flagged but not saturated, by the checks in
 * warns); "" when every point was clean. */
static void describe(char *buf, size_t len, size_t n, size_t nsat, size_t nflag, const char *warns)
{
	char by[160] = "";

	if (warns[0]) {
		snprintf(by, sizeof by, " by ");
		fc_list_spaced(by + 4, sizeof by - 4, warns);
	}
	if (!nsat && !nflag)
		buf[0] = '\0';
	else if (nsat == n)
		snprintf(buf, len, "saturated at every load");
	else if (nflag == n)
		snprintf(buf, len, "flagged%s at every load", by);
	else if (nsat + nflag == n)
		snprintf(buf, len, "saturated at %zu load%s and flagged%s at the other %zu", nsat, nsat == 1 ? "" : "s",
			 by, nflag);
	else if (!nflag)
		snprintf(buf, len, "clean at %zu of %zu loads (saturated at %zu)", n - nsat, n, nsat);
	else if (!nsat)
		snprintf(buf, len, "clean at %zu of %zu loads (flagged%s at %zu)", n - nflag, n, by, nflag);
	else
		snprintf(buf, len, "clean at %zu of %zu loads (saturated at %zu, flagged%s at %zu)", n - nsat - nflag, n,
			 nsat, by, nflag);
}

void fc_clean_load(const struct fc_point *a, size_t na, const struct fc_point *b, size_t nb, const char *name_a,
		   const char *name_b, double peak, struct fc_result *r)
{
	size_t nsat[2] = { 0, 0 }, nflag[2] = { 0, 0 };
	char warns[2][128] = { "", "" }, d[2][320];   /* describe: "clean at ... flagged by <warns> at N" */

	memset(r, 0, sizeof *r);
	r->load = r->frac = r->a = r->b = r->change = NAN;
	for (size_t i = 0; i < na; i++) {
		const struct fc_point *pa = &a[i], *pb = point_at(b, nb, a[i].offered);
		if (!usable(pa, 0) || !usable(pb, 1) || point_at(a, i, pa->offered))
			continue;   /* no number to compare, or a load seen already */
		r->nloads++;
		for (int s = 0; s < 2; s++) {
			const struct fc_point *p = s ? pb : pa;
			if (p->saturated)
				nsat[s]++;
			else if (p->flagged) {
				nflag[s]++;
				union_add(warns[s], sizeof warns[s], p->warns);
			}
		}
		if (!clean(pa) || !clean(pb))
			continue;
		r->nclean++;
		if (!r->found || pa->offered > r->load) {
			r->found = 1;
			r->load = pa->offered;
			r->a = pa->value;
			r->b = pb->value;
		}
	}
	if (r->found) {
		r->change = 100.0 * (r->a / r->b - 1);
		r->frac = peak > 0 ? r->load / peak : NAN;
		return;
	}
	if (!r->nloads) {
		snprintf(r->why, sizeof r->why, "no load where both %s and %s have a number", name_a, name_b);
		return;
	}
	for (int s = 0; s < 2; s++)
		describe(d[s], sizeof d[s], r->nloads, nsat[s], nflag[s], warns[s]);
	char head[64];
	snprintf(head, sizeof head, "no load where both are clean (of %zu load%s)", r->nloads,
		 r->nloads == 1 ? "" : "s");
	if (d[0][0] && !strcmp(d[0], d[1]))
		snprintf(r->why, sizeof r->why, "%s: both %s", head, d[0]);
	else if (d[0][0] && d[1][0])
		snprintf(r->why, sizeof r->why, "%s: %s %s; %s %s", head, name_a, d[0], name_b, d[1]);
	/* one of the two is clean at every load: the other is at none */
	else
		snprintf(r->why, sizeof r->why, "%s: %s %s", head, d[0][0] ? name_a : name_b, d[0][0] ? d[0] : d[1]);
}
