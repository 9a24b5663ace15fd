/*
 * ab_seq.c - the A/B gate's sequential design (ab_seq.h): how much alpha
 * each look spends, which metric each look decided, and the final
 * comparison made of the decisions.
 */
#include "ab_seq.h"
#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* compare's metrics that decide a point (its tagged share is reported
 * beside, never gated) */
#define NGATED ((size_t)COMPARE_TAGGED)

double ab_spend(double alpha, double t)
{
	if (!(t > 0))
		return 0;
	if (t >= 1)
		return alpha;
	return alpha * log(1 + (M_E - 1) * t);
}

int ab_seq_init(struct ab_seq *s, double alpha, unsigned budget)
{
	memset(s, 0, sizeof *s);
	s->alpha = alpha;
	s->budget = budget ? budget : 1;
	s->decided = json_object();
	s->looks = json_array();
	return s->decided && s->looks ? 0 : -1;
}

void ab_seq_free(struct ab_seq *s)
{
	json_decref(s->decided);
	json_decref(s->looks);
	s->decided = s->looks = NULL;
}

double ab_seq_alpha(struct ab_seq *s, unsigned rounds)
{
	double now = ab_spend(s->alpha, (double)rounds / s->budget), a = now - s->spent;
	s->spent = now;
	json_array_append_new(s->looks, json_pack("{s:i, s:f}", "rounds", (int)rounds, "alpha", a));
	return a;
}

/* Whether row is a judged point (not an "unmatched" one). */
static int judged(const json_t *row)
{
	const char *v = json_string_value(json_object_get(row, "verdict"));
	return v && strcmp(v, "unmatched") != 0;
}

static int is_decision(const char *v)
{
	return v && (!strcmp(v, "same") || !strcmp(v, "regression") || !strcmp(v, "improvement"));
}

size_t ab_seq_look(struct ab_seq *s, const json_t *doc, unsigned rounds)
{
	const json_t *row;
	size_t i, open = 0;
	char key[64];

	json_array_foreach(compare_rows(doc), i, row) {
		if (!judged(row))
			continue;
		for (size_t k = 0; k < NGATED; k++) {
			const json_t *m = compare_row_metric(row, (int)k);
			snprintf(key, sizeof key, "%zu/%s", i, compare_metric_name((int)k));
			if (json_object_get(s->decided, key))
				continue;   /* decided at an earlier look: it stays so */
			if (!is_decision(json_string_value(json_object_get(m, "verdict")))) {
				open++;
				continue;
			}
			json_t *c = json_deep_copy(m);
			json_object_set_new(c, "rounds_needed", json_integer(rounds));
			json_object_set_new(c, "decided", json_true());
			json_object_set_new(s->decided, key, c);
		}
	}
	json_t *last = json_array_get(s->looks, json_array_size(s->looks) - 1);
	if (last)
		json_object_set_new(last, "undecided", json_integer((json_int_t)open));
	return open;
}

void ab_seq_final(struct ab_seq *s, json_t *doc)
{
	json_t *row, *table = json_object_get(doc, "table"), *sum = compare_summary(doc);
	size_t i, nreg = 0, nimp = 0, nund = 0;
	char key[64], line[600];

	json_array_foreach(compare_rows(doc), i, row) {
		if (!judged(row))
			continue;
		int worse = 0, better = 0, und = 0;
		size_t l = 0;
		snprintf(line, sizeof line, "rounds needed: %s %s:", json_string_value(json_object_get(row, "system")),
			 json_string_value(json_object_get(row, "load")));
		l = strlen(line);
		for (size_t k = 0; k < NGATED; k++) {
			json_t *d;
			const char *name = compare_metric_name((int)k);
			snprintf(key, sizeof key, "%zu/%s", i, name);
			d = json_object_get(s->decided, key);
			if (d) {
				json_object_set(row, name, d);
			} else if (json_is_object(compare_row_metric(row, (int)k))) {
				json_object_set_new(compare_row_metric(row, (int)k), "rounds_needed", json_null());
				json_object_set_new(compare_row_metric(row, (int)k), "decided", json_false());
			}
			const json_t *m = compare_row_metric(row, (int)k);
			const char *v = json_string_value(json_object_get(m, "verdict"));
			worse |= v && !strcmp(v, "regression");
			better |= v && !strcmp(v, "improvement");
			und |= !d;
			if (d)
				snprintf(line + l, sizeof line - l, " %s %s after %lld", name, v,
					 (long long)json_integer_value(json_object_get(d, "rounds_needed")));
			else
				snprintf(line + l, sizeof line - l, " %s undecided (%s)", name, v ? v : "?");
			l = strlen(line);
			if (k + 1 < NGATED)
				snprintf(line + l, sizeof line - l, ",");
			l = strlen(line);
		}
		const char *was = json_string_value(json_object_get(row, "verdict"));
		const char *now = worse ? "regression" : better ? "improvement" : und ? "inconclusive" : "same";
		if (strcmp(was, now) != 0) {
			char d[900];
			snprintf(d, sizeof d, "%s (each metric as first decided; the last look said: %s)", now,
				 json_string_value(json_object_get(row, "detail")));
			json_object_set_new(row, "detail", json_string(d));
			json_object_set_new(row, "verdict", json_string(now));
		}
		nreg += (size_t)worse;
		nimp += (size_t)(better && !worse);
		nund += (size_t)(und && !worse && !better);
		if (json_is_array(table))
			json_array_append_new(table, json_string(line));
	}
	if (!json_is_object(sum))
		return;
	/* the knee (both sides searched theirs) keeps the last look's say */
	const char *kv = json_string_value(json_object_get(json_object_get(sum, "knee"), "verdict"));
	nreg += kv && !strcmp(kv, "regression");
	nimp += kv && !strcmp(kv, "improvement");
	nund += kv && !strcmp(kv, "inconclusive");
	json_object_set_new(sum, "regressions", json_integer((json_int_t)nreg));
	json_object_set_new(sum, "improvements", json_integer((json_int_t)nimp));
	json_object_set_new(sum, "inconclusive", json_integer((json_int_t)nund));
	char how[300];
	snprintf(how, sizeof how, "sequential: Lan-DeMets alpha spending, Pocock-type, alpha %g over %zu look(s) "
		 "(%.3g spent), each look Holm-corrected", s->alpha, json_array_size(s->looks), s->spent);
	json_object_set_new(sum, "sequential", json_pack("{s:s, s:f, s:f, s:i, s:O}", "design", how, "alpha", s->alpha,
							 "spent", s->spent, "budget", (int)s->budget, "looks", s->looks));
	json_object_set_new(sum, "how", json_string(how));
}
