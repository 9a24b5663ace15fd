/*
 * test_mpring.c - the multi-packet receive ring's bookkeeping, checked
 * against the contract in mpring.h alone: geometry checks, an in-order
 * stream, the same placements reported in shuffled orders, max_out,
 * in-order release, reposting in posting order over many laps, every kind
 * of impossible report refused without a trace, and a long randomized soak
 * judged by a model of the NIC that knows the true placement.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "mpring.h"

/* splitmix64: fixed seeds give the same runs on every machine. */
struct prng {
	uint64_t s;
};

static uint64_t prng_next(struct prng *p)
{
	uint64_t z = (p->s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static unsigned prng_below(struct prng *p, unsigned n)
{
	return (unsigned)(prng_next(p) % n);
}

static struct mpring *ring_new(unsigned log_stride, unsigned log_strides,
			       unsigned wqes, unsigned max_out)
{
	struct mpring_conf c = { log_stride, log_strides, wqes, max_out };
	char err[256] = "";
	struct mpring *r = mpring_new(&c, err, sizeof err);
	if (!r)
		fprintf(stderr, "  mpring_new(%u, %u, %u, %u): %s\n",
			log_stride, log_strides, wqes, max_out, err);
	return r;
}

/* The offset the header promises: buffer q % wqes, strides in address order. */
static size_t want_off(unsigned log_stride, unsigned log_strides, unsigned wqes,
		       uint64_t wqe, unsigned stride)
{
	return ((size_t)(wqe % wqes) << (log_stride + log_strides)) +
	       ((size_t)stride << log_stride);
}

/* A refused report: -1, an error text, and no trace in the statistics
 * except one more rejection; the posted count stays. */
#define CHECK_REFUSED(r, call) do { \
	struct mpring_stats before_, after_; \
	uint64_t posted_ = mpring_posted(r); \
	mpring_get_stats((r), &before_); \
	int rc_ = (call); \
	mpring_get_stats((r), &after_); \
	CHECK(rc_ == -1, "%s returned %d, expected a refusal", #call, rc_); \
	CHECK(mpring_error(r) != NULL && mpring_error(r)[0] != '\0', \
	      "%s: refused without an error text", #call); \
	before_.rejected++; \
	CHECK(memcmp(&before_, &after_, sizeof before_) == 0, \
	      "%s changed the statistics beyond 'rejected'", #call); \
	CHECK(mpring_posted(r) == posted_, "%s changed the posted count", #call); \
} while (0)

/* Hands out the next message and checks it is (ticket, wqe, stride, len). */
#define CHECK_NEXT(r, t, q, s, l) do { \
	struct mpring_msg m_; \
	memset(&m_, 0, sizeof m_); \
	int got_ = mpring_next((r), &m_); \
	CHECK(got_ == 1, "no message, expected ticket %llu", (unsigned long long)(t)); \
	if (got_ == 1) { \
		CHECK_EQ_U64(m_.ticket, (t)); \
		CHECK_EQ_U64(m_.wqe, (q)); \
		CHECK_EQ_U64(m_.stride, (s)); \
		CHECK_EQ_U64(m_.len, (l)); \
	} \
} while (0)

#define CHECK_NO_NEXT(r) do { \
	struct mpring_msg m_; \
	int got_ = mpring_next((r), &m_); \
	CHECK(got_ == 0, "unexpected message: ticket %llu wqe %llu stride %u", \
	      (unsigned long long)m_.ticket, (unsigned long long)m_.wqe, m_.stride); \
} while (0)

#define CHECK_REPOST(r, q) do { \
	uint64_t w_ = 0; \
	int got_ = mpring_repost((r), &w_); \
	CHECK(got_ == 1, "no repost, expected WQE %llu", (unsigned long long)(q)); \
	if (got_ == 1) \
		CHECK_EQ_U64(w_, (q)); \
} while (0)

#define CHECK_NO_REPOST(r) do { \
	uint64_t w_ = 0; \
	int got_ = mpring_repost((r), &w_); \
	CHECK(got_ == 0, "unexpected repost of WQE %llu", (unsigned long long)w_); \
} while (0)

/* ------------------------------------------------------------------ */
/* A model: a NIC that places messages, and what the ring must answer. */

enum { EV_MSG, EV_FILL };

struct ev {
	int kind;
	uint64_t wqe;
	unsigned stride;      /* first stride; for a filler, where the WQE closes */
	unsigned nstr;        /* strides the message takes */
	uint32_t len;
	int consumed;         /* the message closes its WQE */
	int reported;
};

struct wqe_model {
	unsigned msgs;        /* messages placed in it */
	unsigned released;
	int closed;           /* the NIC closed it (the close event exists) */
	int close_reported;
};

struct sim {
	unsigned log_stride, log_strides, strides, wqes, max_out;
	uint32_t stride_bytes;
	struct prng rng;
	/* the NIC */
	uint64_t cur;         /* WQE being filled */
	unsigned at;          /* its next free stride */
	unsigned next_nstr;   /* strides of the next message, drawn ahead */
	unsigned max_nstr;
	unsigned p_fill0;     /* 1 in p_fill0 WQEs closed empty; 0 never */
	unsigned p_early;     /* 1 in p_early chances of an early close; 0 never */
	/* placement, in placement order */
	struct ev *ev;
	size_t nev, cap_ev;
	size_t *msg_ev;       /* ticket -> index in ev */
	size_t nmsg, cap_msg;
	struct wqe_model *w;  /* by WQE sequence number */
	size_t cap_w;
	/* the consumer */
	size_t known;         /* events 0 .. known-1 are all reported */
	uint64_t handed, released;
	uint64_t posted, next_repost;
	struct mpring_stats st;
	int oom;
};

static void sim_init(struct sim *s, unsigned log_stride, unsigned log_strides,
		     unsigned wqes, unsigned max_out, uint64_t seed)
{
	memset(s, 0, sizeof *s);
	s->log_stride = log_stride;
	s->log_strides = log_strides;
	s->strides = 1u << log_strides;
	s->wqes = wqes;
	s->max_out = max_out;
	s->stride_bytes = 1u << log_stride;
	s->rng.s = seed;
	s->max_nstr = s->strides < 5 ? s->strides : 5;
	s->next_nstr = 1 + prng_below(&s->rng, s->max_nstr);
	s->posted = wqes;
}

static void sim_free(struct sim *s)
{
	free(s->ev);
	free(s->msg_ev);
	free(s->w);
}

/* Forgets what was reported and handed out, keeping the placement, so the
 * same placement can be replayed in another order. */
static void sim_reset_consumer(struct sim *s)
{
	for (size_t i = 0; i < s->nev; i++)
		s->ev[i].reported = 0;
	for (size_t i = 0; i < s->cap_w; i++) {
		s->w[i].released = 0;
		s->w[i].close_reported = 0;
	}
	s->known = 0;
	s->handed = s->released = 0;
	s->posted = s->wqes;
	s->next_repost = 0;
	memset(&s->st, 0, sizeof s->st);
}

static struct wqe_model *sim_wqe(struct sim *s, uint64_t q)
{
	if (q >= s->cap_w) {
		size_t cap = s->cap_w ? s->cap_w * 2 : 64;
		while (cap <= q)
			cap *= 2;
		struct wqe_model *nw = realloc(s->w, cap * sizeof *nw);
		if (!nw) {
			s->oom = 1;
			return NULL;
		}
		memset(nw + s->cap_w, 0, (cap - s->cap_w) * sizeof *nw);
		s->w = nw;
		s->cap_w = cap;
	}
	return &s->w[q];
}

static struct ev *sim_push(struct sim *s, int kind, unsigned stride)
{
	if (s->nev == s->cap_ev) {
		size_t cap = s->cap_ev ? s->cap_ev * 2 : 256;
		struct ev *ne = realloc(s->ev, cap * sizeof *ne);
		if (!ne) {
			s->oom = 1;
			return NULL;
		}
		s->ev = ne;
		s->cap_ev = cap;
	}
	struct ev *e = &s->ev[s->nev++];
	memset(e, 0, sizeof *e);
	e->kind = kind;
	e->wqe = s->cur;
	e->stride = stride;
	return e;
}

static void sim_advance(struct sim *s)
{
	struct wqe_model *w = sim_wqe(s, s->cur);
	if (w)
		w->closed = 1;
	s->cur++;
	s->at = 0;
}

static void sim_close_fill(struct sim *s)
{
	if (sim_push(s, EV_FILL, s->at))
		sim_advance(s);
}

static int sim_can_place(const struct sim *s)
{
	return s->cur < s->posted;
}

/*
 * One NIC step in WQE s->cur: a message at the next free stride, or a
 * close.  The NIC closes a WQE when the next message does not fit, with
 * the consumed flag on the last message or a filler at random; the
 * occasional WQE closed empty or early makes fillers at stride 0 and in
 * the middle.  A WQE filled exactly to its end always gets the consumed
 * flag, so that no WQE is full of messages with its filler still unknown
 * (whether the ring may move past such a WQE early is not specified).
 */
static void sim_place(struct sim *s)
{
	if (!sim_wqe(s, s->cur))
		return;
	if (s->at == 0 && s->p_fill0 && prng_below(&s->rng, s->p_fill0) == 0) {
		sim_close_fill(s);
		return;
	}
	if (s->at > 0 && s->p_early && prng_below(&s->rng, s->p_early) == 0) {
		sim_close_fill(s);
		return;
	}
	if (s->nmsg == s->cap_msg) {
		size_t cap = s->cap_msg ? s->cap_msg * 2 : 256;
		size_t *nm = realloc(s->msg_ev, cap * sizeof *nm);
		if (!nm) {
			s->oom = 1;
			return;
		}
		s->msg_ev = nm;
		s->cap_msg = cap;
	}
	struct ev *e = sim_push(s, EV_MSG, s->at);
	if (!e)
		return;
	e->nstr = s->next_nstr;
	e->len = (e->nstr - 1) * s->stride_bytes + 1 + prng_below(&s->rng, s->stride_bytes);
	s->msg_ev[s->nmsg++] = s->nev - 1;
	s->w[s->cur].msgs++;
	s->at += e->nstr;
	s->next_nstr = 1 + prng_below(&s->rng, s->max_nstr);
	if (s->at + s->next_nstr > s->strides) {
		if (s->at == s->strides || prng_below(&s->rng, 2) == 0) {
			e->consumed = 1;
			sim_advance(s);
		} else {
			sim_close_fill(s);
		}
	}
}

/* Reports event i to the ring, which must accept it.  0 or -1. */
static int sim_report(struct sim *s, struct mpring *r, size_t i)
{
	struct ev *e = &s->ev[i];
	int rc;
	if (e->kind == EV_MSG)
		rc = mpring_arrive(r, e->wqe, e->stride, e->len, e->consumed);
	else
		rc = mpring_fill(r, e->wqe, e->stride);
	if (rc != 0) {
		CHECK(0, "%s(wqe %llu, stride %u, len %u, consumed %d) refused: %s",
		      e->kind == EV_MSG ? "arrive" : "fill", (unsigned long long)e->wqe,
		      e->stride, e->len, e->consumed, mpring_error(r));
		return -1;
	}
	e->reported = 1;
	if (e->kind == EV_MSG) {
		s->st.messages++;
		s->st.strides_used += e->nstr;
		if (e->consumed) {
			s->st.consumed++;
			s->st.strides_wasted += s->strides - (e->stride + e->nstr);
			s->w[e->wqe].close_reported = 1;
		}
	} else {
		s->st.fillers++;
		s->st.strides_wasted += s->strides - e->stride;
		s->w[e->wqe].close_reported = 1;
	}
	while (s->known < s->nev && s->ev[s->known].reported)
		s->known++;
	return 0;
}

/* The head message may go out iff every event placed up to it is known
 * and max_out leaves room. */
static int sim_deliverable(const struct sim *s)
{
	return s->handed < s->nmsg && s->msg_ev[s->handed] < s->known &&
	       s->handed - s->released < s->max_out;
}

/* One mpring_next, judged both ways.  1 handed out, 0 nothing, -1 wrong. */
static int sim_next(struct sim *s, struct mpring *r)
{
	struct mpring_msg m;
	memset(&m, 0xa5, sizeof m);
	int want = sim_deliverable(s);
	int got = mpring_next(r, &m);
	if (got != want) {
		CHECK(0, "mpring_next returned %d, the model says %d (head ticket %llu, "
		      "%llu out, max_out %u)", got, want, (unsigned long long)s->handed,
		      (unsigned long long)(s->handed - s->released), s->max_out);
		return -1;
	}
	if (!got)
		return 0;
	const struct ev *e = &s->ev[s->msg_ev[s->handed]];
	size_t off = want_off(s->log_stride, s->log_strides, s->wqes, e->wqe, e->stride);
	if (m.ticket != s->handed || m.wqe != e->wqe || m.stride != e->stride ||
	    m.len != e->len || m.off != off || mpring_offset(r, e->wqe, e->stride) != off) {
		CHECK(0, "handed out ticket %llu wqe %llu stride %u len %u off %zu; "
		      "expected ticket %llu wqe %llu stride %u len %u off %zu",
		      (unsigned long long)m.ticket, (unsigned long long)m.wqe, m.stride,
		      m.len, m.off, (unsigned long long)s->handed,
		      (unsigned long long)e->wqe, e->stride, e->len, off);
		return -1;
	}
	s->handed++;
	return 1;
}

static int sim_drain(struct sim *s, struct mpring *r)
{
	int rc;
	while ((rc = sim_next(s, r)) == 1)
		;
	return rc;
}

/* Releases the oldest ticket, if any is out.  0 or -1. */
static int sim_release(struct sim *s, struct mpring *r)
{
	if (s->released == s->handed)
		return 0;
	if (mpring_release(r, s->released) != 0) {
		CHECK(0, "release of the oldest ticket %llu refused",
		      (unsigned long long)s->released);
		return -1;
	}
	s->w[s->ev[s->msg_ev[s->released]].wqe].released++;
	s->released++;
	return 0;
}

/* One mpring_repost, judged both ways: the oldest WQE not yet reposted
 * comes back iff its close is known and all its messages were released.
 * 1 reposted, 0 nothing, -1 wrong. */
static int sim_repost(struct sim *s, struct mpring *r)
{
	uint64_t q = 0;
	const struct wqe_model *w = s->next_repost < s->cap_w ? &s->w[s->next_repost] : NULL;
	int want = w && w->close_reported && w->released == w->msgs;
	int got = mpring_repost(r, &q);
	if (got != want) {
		CHECK(0, "mpring_repost returned %d (WQE %llu), the model says %d for WQE %llu",
		      got, (unsigned long long)q, want, (unsigned long long)s->next_repost);
		return -1;
	}
	if (!got)
		return 0;
	if (q != s->next_repost + s->wqes) {
		CHECK(0, "reposted WQE %llu, expected %llu", (unsigned long long)q,
		      (unsigned long long)(s->next_repost + s->wqes));
		return -1;
	}
	s->next_repost++;
	s->posted++;
	if (mpring_posted(r) != s->posted) {
		CHECK(0, "mpring_posted %llu, expected %llu",
		      (unsigned long long)mpring_posted(r), (unsigned long long)s->posted);
		return -1;
	}
	return 1;
}

static int sim_repost_all(struct sim *s, struct mpring *r)
{
	int rc;
	while ((rc = sim_repost(s, r)) == 1)
		;
	return rc;
}

static int sim_check_stats(const struct sim *s, const struct mpring *r, const char *when)
{
	struct mpring_stats got;
	mpring_get_stats(r, &got);
	int ok = got.messages == s->st.messages && got.fillers == s->st.fillers &&
		 got.consumed == s->st.consumed && got.strides_used == s->st.strides_used &&
		 got.strides_wasted == s->st.strides_wasted &&
		 got.reposts == s->next_repost && got.rejected == s->st.rejected;
	CHECK(ok, "%s: stats messages %llu/%llu fillers %llu/%llu consumed %llu/%llu "
	      "used %llu/%llu wasted %llu/%llu reposts %llu/%llu rejected %llu/%llu "
	      "(got/expected)", when,
	      (unsigned long long)got.messages, (unsigned long long)s->st.messages,
	      (unsigned long long)got.fillers, (unsigned long long)s->st.fillers,
	      (unsigned long long)got.consumed, (unsigned long long)s->st.consumed,
	      (unsigned long long)got.strides_used, (unsigned long long)s->st.strides_used,
	      (unsigned long long)got.strides_wasted, (unsigned long long)s->st.strides_wasted,
	      (unsigned long long)got.reposts, (unsigned long long)s->next_repost,
	      (unsigned long long)got.rejected, (unsigned long long)s->st.rejected);
	return ok ? 0 : -1;
}

/* ------------------------------------------------------------------ */

TEST(geometry)
{
	static const struct mpring_conf bad[] = {
		{ 5, 4, 4, 8 }, { 17, 4, 4, 8 }, { 0, 4, 4, 8 },     /* stride size */
		{ 6, 0, 4, 8 }, { 6, 17, 4, 8 },                     /* strides per WQE */
		{ 6, 4, 0, 8 }, { 6, 4, 1, 8 }, { 6, 4, 3, 8 },      /* WQE count */
		{ 6, 4, 6, 8 }, { 6, 4, 12, 8 }, { 6, 4, 0x80000001u, 8 },
		{ 6, 4, 4, 0 },                                      /* max_out */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char err[256] = "";
		struct mpring *r = mpring_new(&bad[i], err, sizeof err);
		CHECK(r == NULL, "accepted log_stride %u log_strides %u wqes %u max_out %u",
		      bad[i].log_stride, bad[i].log_strides, bad[i].wqes, bad[i].max_out);
		CHECK(err[0] != '\0', "no error text for log_stride %u log_strides %u wqes %u "
		      "max_out %u", bad[i].log_stride, bad[i].log_strides, bad[i].wqes,
		      bad[i].max_out);
		mpring_free(r);
	}

	static const struct mpring_conf good[] = {
		{ 6, 1, 2, 1 }, { 16, 16, 2, 1 }, { 6, 4, 4, 8 }, { 12, 9, 64, 1000 },
	};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		const struct mpring_conf *c = &good[i];
		char err[256] = "";
		struct mpring *r = mpring_new(c, err, sizeof err);
		CHECK(r != NULL, "refused log_stride %u log_strides %u wqes %u max_out %u: %s",
		      c->log_stride, c->log_strides, c->wqes, c->max_out, err);
		if (!r)
			continue;
		size_t wb = (size_t)1 << (c->log_stride + c->log_strides);
		CHECK_EQ_U64(mpring_wqe_bytes(r), wb);
		CHECK_EQ_U64(mpring_bytes(r), wb * c->wqes);
		CHECK_EQ_U64(mpring_posted(r), c->wqes);
		CHECK(mpring_error(r) != NULL && mpring_error(r)[0] == '\0');
		struct mpring_stats st;
		memset(&st, 0xff, sizeof st);
		mpring_get_stats(r, &st);
		CHECK(st.messages == 0 && st.fillers == 0 && st.consumed == 0 &&
		      st.strides_used == 0 && st.strides_wasted == 0 && st.reposts == 0 &&
		      st.rejected == 0, "fresh ring has non-zero statistics");
		/* Buffer q % wqes, far past the first lap too. */
		unsigned last = (1u << c->log_strides) - 1;
		uint64_t qs[] = { 0, 1, c->wqes - 1, c->wqes, 1000003, (uint64_t)1 << 40 };
		for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++) {
			CHECK_EQ_U64(mpring_offset(r, qs[k], 0),
				     want_off(c->log_stride, c->log_strides, c->wqes, qs[k], 0));
			CHECK_EQ_U64(mpring_offset(r, qs[k], last),
				     want_off(c->log_stride, c->log_strides, c->wqes, qs[k], last));
		}
		CHECK_NO_NEXT(r);
		CHECK_NO_REPOST(r);
		mpring_free(r);
	}
}

/*
 * One stream reported exactly as placed, over many laps of a 4-WQE ring:
 * dense tickets in placement order with the right offsets and lengths,
 * and used + wasted strides adding up to what the closed WQEs hold.
 */
TEST(in_order_stream)
{
	struct sim s;
	sim_init(&s, 8, 4, 4, 8, 11);
	struct mpring *r = ring_new(8, 4, 4, 8);
	REQUIRE(r);
	const size_t N = 5000;
	int bad = 0;
	size_t checked = 0;
	while (!bad && (s.nmsg < N || s.at > 0)) {
		if (sim_can_place(&s)) {
			size_t from = s.nev;
			if (s.nmsg < N)
				sim_place(&s);
			else
				sim_close_fill(&s);
			REQUIRE(!s.oom, "out of memory");
			for (size_t i = from; i < s.nev && !bad; i++)
				bad |= sim_report(&s, r, i) < 0;
		} else {
			/* The NIC waits for a repost: give every ticket back. */
			while (s.released < s.handed && !bad)
				bad |= sim_release(&s, r) < 0;
		}
		if (!bad)
			bad |= sim_drain(&s, r) < 0;
		while (!bad && s.handed - s.released > s.max_out / 2)
			bad |= sim_release(&s, r) < 0;
		if (!bad)
			bad |= sim_repost_all(&s, r) < 0;
		if (!bad && s.handed == s.nmsg && s.known == s.nev) {
			struct mpring_stats st;
			mpring_get_stats(r, &st);
			uint64_t held = s.cur * s.strides + s.at;
			CHECK(st.strides_used + st.strides_wasted == held,
			      "used %llu + wasted %llu != %llu strides in %llu closed WQEs + %u",
			      (unsigned long long)st.strides_used,
			      (unsigned long long)st.strides_wasted, (unsigned long long)held,
			      (unsigned long long)s.cur, s.at);
			bad |= sim_check_stats(&s, r, "in order") < 0;
			checked++;
		}
	}
	REQUIRE(!bad);
	while (s.released < s.handed && !bad)
		bad |= sim_release(&s, r) < 0;
	REQUIRE(!bad);
	REQUIRE(sim_repost_all(&s, r) == 0);
	CHECK_EQ_U64(s.handed, N);
	CHECK_EQ_U64(s.next_repost, s.cur);
	CHECK(s.cur > 4 * s.wqes, "only %llu WQEs used", (unsigned long long)s.cur);
	CHECK(checked > N / 2, "stats checked only %zu times", checked);
	CHECK(s.st.fillers > 0 && s.st.consumed > 0, "fillers %llu consumed %llu",
	      (unsigned long long)s.st.fillers, (unsigned long long)s.st.consumed);
	sim_check_stats(&s, r, "end");
	CHECK_EQ_U64(mpring_posted(r), s.wqes + s.cur);
	mpring_free(r);
	sim_free(&s);
}

/*
 * A small hand-made case: messages of later WQEs and a filler reported
 * before the messages they follow.
 *   WQE 0: A (strides 0-2), B (stride 3), filler at 4
 *   WQE 1: filler at 0
 *   WQE 2: C (all 8 strides, consumed)
 *   WQE 3: D (stride 0), E (stride 1, consumed)
 */
TEST(reorder_small)
{
	struct mpring *r = ring_new(6, 3, 4, 16);
	REQUIRE(r);
	CHECK(mpring_arrive(r, 2, 0, 512, 1) == 0, "%s", mpring_error(r));   /* C */
	CHECK_NO_NEXT(r);
	CHECK(mpring_fill(r, 0, 4) == 0, "%s", mpring_error(r));
	CHECK_NO_NEXT(r);
	CHECK(mpring_arrive(r, 3, 1, 64, 1) == 0, "%s", mpring_error(r));    /* E */
	CHECK(mpring_arrive(r, 0, 3, 1, 0) == 0, "%s", mpring_error(r));     /* B */
	CHECK(mpring_fill(r, 1, 0) == 0, "%s", mpring_error(r));
	CHECK_NO_NEXT(r);
	CHECK_NO_REPOST(r);
	CHECK(mpring_arrive(r, 0, 0, 150, 0) == 0, "%s", mpring_error(r));   /* A */
	CHECK_NEXT(r, 0, 0, 0, 150);
	CHECK_NEXT(r, 1, 0, 3, 1);
	CHECK_NEXT(r, 2, 2, 0, 512);
	CHECK_NO_NEXT(r);                       /* D is missing */
	CHECK(mpring_arrive(r, 3, 0, 10, 0) == 0, "%s", mpring_error(r));    /* D */
	CHECK_NEXT(r, 3, 3, 0, 10);
	CHECK_NEXT(r, 4, 3, 1, 64);
	CHECK_NO_NEXT(r);

	CHECK_NO_REPOST(r);                     /* A and B are out */
	CHECK(mpring_release(r, 0) == 0);
	CHECK_NO_REPOST(r);
	CHECK(mpring_release(r, 1) == 0);
	CHECK_REPOST(r, 4);
	CHECK_REPOST(r, 5);                     /* WQE 1 held nothing */
	CHECK_NO_REPOST(r);
	CHECK(mpring_release(r, 2) == 0);
	CHECK_REPOST(r, 6);
	CHECK(mpring_release(r, 3) == 0);
	CHECK_NO_REPOST(r);
	CHECK(mpring_release(r, 4) == 0);
	CHECK_REPOST(r, 7);
	CHECK_NO_REPOST(r);
	CHECK_EQ_U64(mpring_posted(r), 8);

	struct mpring_stats st;
	mpring_get_stats(r, &st);
	CHECK_EQ_U64(st.messages, 5);
	CHECK_EQ_U64(st.fillers, 2);
	CHECK_EQ_U64(st.consumed, 2);
	CHECK_EQ_U64(st.strides_used, 3 + 1 + 8 + 1 + 1);
	CHECK_EQ_U64(st.strides_wasted, 4 + 8 + 0 + 6);
	CHECK_EQ_U64(st.reposts, 4);
	CHECK_EQ_U64(st.rejected, 0);
	mpring_free(r);
}

/*
 * Placements over the first lap of a few geometries, each reported in
 * many shuffled orders: after every report the ring hands out exactly
 * the messages whose whole placement prefix is known, and in the end the
 * very sequence of the in-order run.
 */
TEST(shuffled_orders)
{
	static const unsigned geo[][3] = {   /* log_stride, log_strides, wqes */
		{ 6, 4, 4 }, { 6, 1, 2 }, { 7, 3, 8 }, { 10, 5, 2 },
	};
	/* More than a first lap can hold (8 x 8 strides at most): no max_out limit. */
	const unsigned NO_LIMIT = 1024;
	struct prng shuf = { 99 };
	unsigned long cross_wqe = 0, filler_early = 0, rounds = 0, fill0 = 0;
	for (size_t g = 0; g < sizeof geo / sizeof geo[0]; g++) {
		for (unsigned p = 0; p < 30; p++) {
			struct sim s;
			sim_init(&s, geo[g][0], geo[g][1], geo[g][2], NO_LIMIT,
				 1000 * g + p + 1);
			s.p_fill0 = 6;
			s.p_early = 12;
			while (sim_can_place(&s))
				sim_place(&s);
			REQUIRE(!s.oom, "out of memory");
			for (size_t i = 0; i < s.nev; i++)
				fill0 += s.ev[i].kind == EV_FILL && s.ev[i].stride == 0;

			/* The in-order run, whose hand-out sequence the others must repeat. */
			uint64_t *seq = calloc(s.nmsg + 1, sizeof *seq);
			size_t *order = calloc(s.nev + 1, sizeof *order);
			REQUIRE(seq && order, "out of memory");
			struct mpring *r = ring_new(geo[g][0], geo[g][1], geo[g][2], NO_LIMIT);
			REQUIRE(r);
			int bad = 0;
			for (size_t i = 0; i < s.nev && !bad; i++) {
				bad |= sim_report(&s, r, i) < 0;
				uint64_t before = s.handed;
				bad |= sim_drain(&s, r) < 0;
				for (uint64_t t = before; t < s.handed; t++)
					seq[t] = (s.ev[s.msg_ev[t]].wqe << 32) | s.ev[s.msg_ev[t]].stride;
			}
			mpring_free(r);
			REQUIRE(!bad);
			REQUIRE(s.handed == s.nmsg);

			for (unsigned round = 0; round < 25 && !bad; round++, rounds++) {
				sim_reset_consumer(&s);
				for (size_t i = 0; i < s.nev; i++)
					order[i] = i;
				for (size_t i = s.nev; i > 1; i--) {
					size_t j = prng_below(&shuf, (unsigned)i);
					size_t t = order[i - 1];
					order[i - 1] = order[j];
					order[j] = t;
				}
				r = ring_new(geo[g][0], geo[g][1], geo[g][2], NO_LIMIT);
				REQUIRE(r);
				for (size_t k = 0; k < s.nev && !bad; k++) {
					size_t i = order[k];
					if (s.known < i && s.ev[s.known].wqe < s.ev[i].wqe)
						cross_wqe++;
					if (s.ev[i].kind == EV_FILL && s.known < i &&
					    s.ev[s.known].wqe == s.ev[i].wqe)
						filler_early++;
					bad |= sim_report(&s, r, i) < 0;
					uint64_t before = s.handed;
					bad |= sim_drain(&s, r) < 0;
					for (uint64_t t = before; t < s.handed && !bad; t++) {
						uint64_t v = (s.ev[s.msg_ev[t]].wqe << 32) |
							     s.ev[s.msg_ev[t]].stride;
						CHECK(v == seq[t], "ticket %llu differs from the in-order run",
						      (unsigned long long)t);
						bad |= v != seq[t];
					}
					/* WQEs closed empty at the head come back without releases. */
					if (!bad)
						bad |= sim_repost_all(&s, r) < 0;
				}
				CHECK_EQ_U64(s.handed, s.nmsg);
				/* Give everything back: the whole first lap is reposted in order. */
				while (!bad && s.released < s.handed) {
					bad |= sim_release(&s, r) < 0;
					if (!bad)
						bad |= sim_repost_all(&s, r) < 0;
				}
				CHECK_EQ_U64(s.next_repost, s.wqes);
				if (!bad)
					bad |= sim_check_stats(&s, r, "shuffled") < 0;
				mpring_free(r);
			}
			free(seq);
			free(order);
			sim_free(&s);
			REQUIRE(!bad, "geometry %zu placement %u", g, p);
		}
	}
	CHECK(rounds >= 2000, "%lu rounds", rounds);
	CHECK(cross_wqe > 100, "only %lu reports crossed a WQE boundary", cross_wqe);
	CHECK(filler_early > 100, "only %lu fillers came before their messages", filler_early);
	CHECK(fill0 > 10, "only %lu fillers at stride 0", fill0);
}

TEST(max_out_limits_tickets)
{
	struct mpring *r = ring_new(6, 4, 2, 3);
	REQUIRE(r);
	for (unsigned i = 0; i < 10; i++)
		CHECK(mpring_arrive(r, 0, i, 64, 0) == 0, "%s", mpring_error(r));
	CHECK_NEXT(r, 0, 0, 0, 64);
	CHECK_NEXT(r, 1, 0, 1, 64);
	CHECK_NEXT(r, 2, 0, 2, 64);
	CHECK_NO_NEXT(r);
	CHECK_NO_NEXT(r);
	CHECK(mpring_release(r, 0) == 0);
	CHECK_NEXT(r, 3, 0, 3, 64);
	CHECK_NO_NEXT(r);
	CHECK(mpring_release(r, 2) == -1);      /* not the oldest: frees nothing */
	CHECK_NO_NEXT(r);
	CHECK(mpring_release(r, 1) == 0);
	CHECK(mpring_release(r, 2) == 0);
	CHECK_NEXT(r, 4, 0, 4, 64);
	CHECK_NEXT(r, 5, 0, 5, 64);
	CHECK_NO_NEXT(r);
	mpring_free(r);

	/* max_out 1: strictly one at a time. */
	r = ring_new(6, 4, 2, 1);
	REQUIRE(r);
	for (unsigned i = 0; i < 16; i++)
		CHECK(mpring_arrive(r, 0, i, 64, i == 15) == 0, "%s", mpring_error(r));
	for (unsigned i = 0; i < 16; i++) {
		CHECK_NEXT(r, i, 0, i, 64);
		CHECK_NO_NEXT(r);
		CHECK(mpring_release(r, i) == 0);
	}
	CHECK_NO_NEXT(r);
	CHECK_REPOST(r, 2);
	mpring_free(r);
}

TEST(release_only_the_oldest)
{
	struct mpring *r = ring_new(6, 3, 2, 8);
	REQUIRE(r);
	CHECK(mpring_release(r, 0) == -1, "released a ticket never handed out");
	for (unsigned i = 0; i < 4; i++)
		CHECK(mpring_arrive(r, 0, i, 64, 0) == 0, "%s", mpring_error(r));
	CHECK_NEXT(r, 0, 0, 0, 64);
	CHECK_NEXT(r, 1, 0, 1, 64);
	CHECK_NEXT(r, 2, 0, 2, 64);
	CHECK(mpring_release(r, 1) == -1);
	CHECK(mpring_release(r, 2) == -1);
	CHECK(mpring_release(r, 3) == -1, "released a ticket not handed out yet");
	CHECK(mpring_release(r, UINT64_MAX) == -1);
	CHECK(mpring_release(r, 0) == 0);
	CHECK(mpring_release(r, 0) == -1, "released ticket 0 twice");
	CHECK(mpring_release(r, 2) == -1);
	CHECK(mpring_release(r, 1) == 0);
	CHECK(mpring_release(r, 2) == 0);
	CHECK(mpring_release(r, 2) == -1);
	CHECK(mpring_release(r, 3) == -1, "released a ticket not handed out yet");
	CHECK_NEXT(r, 3, 0, 3, 64);
	CHECK(mpring_release(r, 3) == 0);
	/* Close the WQE: with every ticket back it is reposted, which a lost
	 * or doubled release would prevent or hasten. */
	CHECK_NO_REPOST(r);
	CHECK(mpring_fill(r, 0, 4) == 0, "%s", mpring_error(r));
	CHECK_NO_NEXT(r);
	CHECK_REPOST(r, 2);
	mpring_free(r);
}

/*
 * When WQEs come back.  The consumer calls mpring_next until it returns 0
 * after every batch of reports, as a worker's loop does; that reposting
 * must not depend on that call is checked in repost_without_next.
 */
TEST(repost_rules)
{
	struct mpring *r = ring_new(6, 2, 2, 8);   /* 2 WQEs x 4 strides of 64 B */
	REQUIRE(r);
	CHECK_EQ_U64(mpring_posted(r), 2);
	CHECK_NO_REPOST(r);

	/* Closed, but messages out: not yet. */
	CHECK(mpring_arrive(r, 0, 0, 128, 0) == 0, "%s", mpring_error(r));
	CHECK(mpring_arrive(r, 0, 2, 65, 1) == 0, "%s", mpring_error(r));
	CHECK_NEXT(r, 0, 0, 0, 128);
	CHECK_NEXT(r, 1, 0, 2, 65);
	CHECK_NO_NEXT(r);
	CHECK_NO_REPOST(r);
	CHECK(mpring_release(r, 0) == 0);
	CHECK_NO_REPOST(r);
	CHECK(mpring_release(r, 1) == 0);
	CHECK_REPOST(r, 2);
	CHECK_EQ_U64(mpring_posted(r), 3);
	CHECK_NO_REPOST(r);

	/* Closed empty: back without any release. */
	CHECK(mpring_fill(r, 1, 0) == 0, "%s", mpring_error(r));
	CHECK_NO_NEXT(r);
	CHECK_REPOST(r, 3);
	CHECK_EQ_U64(mpring_posted(r), 4);

	/* All messages released but not closed: not yet. */
	CHECK(mpring_arrive(r, 2, 0, 64, 0) == 0, "%s", mpring_error(r));
	CHECK_NEXT(r, 2, 2, 0, 64);
	CHECK_NO_NEXT(r);
	CHECK(mpring_release(r, 2) == 0);
	CHECK_NO_REPOST(r);
	/* A later WQE closed empty waits for the earlier one: posting order. */
	CHECK(mpring_fill(r, 3, 0) == 0, "%s", mpring_error(r));
	CHECK_NO_NEXT(r);
	CHECK_NO_REPOST(r);
	CHECK(mpring_fill(r, 2, 1) == 0, "%s", mpring_error(r));
	CHECK_NO_NEXT(r);
	CHECK_REPOST(r, 4);
	CHECK_REPOST(r, 5);
	CHECK_NO_REPOST(r);
	CHECK_EQ_U64(mpring_posted(r), 6);

	/* Closed exactly at its end by a filler. */
	CHECK(mpring_arrive(r, 4, 0, 256, 0) == 0, "%s", mpring_error(r));
	CHECK(mpring_fill(r, 4, 4) == 0, "%s", mpring_error(r));
	CHECK_NEXT(r, 3, 4, 0, 256);
	CHECK_NO_NEXT(r);
	CHECK_NO_REPOST(r);
	CHECK(mpring_release(r, 3) == 0);
	CHECK_REPOST(r, 6);

	/* Many laps: WQE q is reposted as q + 2, one message in each. */
	uint64_t ticket = 4;
	int bad = 0;
	for (uint64_t q = 5; q < 20005 && !bad; q++, ticket++) {
		struct mpring_msg m;
		uint32_t len = 1 + (uint32_t)(q % 64);   /* one stride */
		int consumed = (int)(q & 1);
		if (mpring_arrive(r, q, 0, len, consumed) != 0 ||
		    (!consumed && mpring_fill(r, q, 1) != 0)) {
			CHECK(0, "WQE %llu: %s", (unsigned long long)q, mpring_error(r));
			break;
		}
		if (mpring_next(r, &m) != 1 || m.ticket != ticket || m.wqe != q ||
		    m.stride != 0 || m.len != len || m.off != (size_t)(q % 2) * 256) {
			CHECK(0, "WQE %llu: wrong or missing message", (unsigned long long)q);
			break;
		}
		uint64_t w;
		bad |= mpring_next(r, &m) != 0;
		bad |= mpring_repost(r, &w) != 0;
		bad |= mpring_release(r, ticket) != 0;
		bad |= mpring_repost(r, &w) != 1 || w != q + 2;
		bad |= mpring_posted(r) != q + 3;
		CHECK(!bad, "lap at WQE %llu", (unsigned long long)q);
	}
	struct mpring_stats st;
	mpring_get_stats(r, &st);
	CHECK_EQ_U64(st.reposts, 20005);
	CHECK_EQ_U64(mpring_posted(r), 20007);
	CHECK_EQ_U64(st.rejected, 0);
	mpring_free(r);
}

/*
 * mpring.h: "a WQE may be posted again once it is closed and every
 * message in it was released", and mpring_repost returns "the next WQE to
 * post again".  Nothing there asks for an mpring_next call in between, so
 * a WQE closed empty is back at once, and a WQE whose close is reported
 * after its messages were released is back at once too.
 */
TEST(repost_without_next)
{
	struct mpring *r = ring_new(6, 2, 2, 8);
	REQUIRE(r);
	CHECK(mpring_fill(r, 0, 0) == 0, "%s", mpring_error(r));
	CHECK_REPOST(r, 2);                     /* no mpring_next call before */
	CHECK(mpring_arrive(r, 1, 0, 64, 0) == 0, "%s", mpring_error(r));
	CHECK_NEXT(r, 0, 1, 0, 64);
	CHECK(mpring_release(r, 0) == 0);
	CHECK(mpring_fill(r, 1, 1) == 0, "%s", mpring_error(r));
	CHECK_REPOST(r, 3);                     /* closed and all released */
	CHECK(mpring_arrive(r, 2, 0, 64, 1) == 0, "%s", mpring_error(r));
	CHECK_NEXT(r, 1, 2, 0, 64);
	CHECK(mpring_release(r, 1) == 0);
	CHECK_REPOST(r, 4);                     /* consumed, all released */
	CHECK_EQ_U64(mpring_posted(r), 5);
	mpring_free(r);
}

/*
 * A WQE filled to its last stride by messages without the consumed flag
 * is not closed until its filler at stride 2^log_strides comes (mpring.h:
 * "stride may be 2^log_strides: closed exactly at its end").  That
 * filler must be accepted whenever it comes, and the WQE must not be
 * reposted before it.
 */
/* A WQE whose strides are all used is closed without a flag or filler
 * (the NIC cannot put anything else there); a filler at its end that comes
 * later, even after the WQE was posted again, changes nothing. */
TEST(full_wqe_is_closed)
{
	struct mpring *r = ring_new(6, 2, 2, 8);
	REQUIRE(r);
	CHECK(mpring_arrive(r, 0, 0, 4 * 64, 0) == 0, "%s", mpring_error(r));
	CHECK_NEXT(r, 0, 0, 0, 256);
	CHECK_NO_REPOST(r);                     /* its message is still out */
	CHECK(mpring_release(r, 0) == 0);
	CHECK_NO_NEXT(r);
	CHECK_REPOST(r, 2);
	CHECK(mpring_fill(r, 0, 4) == 0, "late filler at the end refused: %s", mpring_error(r));
	/* the buffer now holds WQE 2; a full WQE 1 closes the same way */
	CHECK(mpring_arrive(r, 1, 0, 2 * 64, 0) == 0, "%s", mpring_error(r));
	CHECK(mpring_arrive(r, 1, 2, 2 * 64, 0) == 0, "%s", mpring_error(r));
	CHECK(mpring_fill(r, 1, 4) == 0, "filler at the end of a full WQE refused: %s", mpring_error(r));
	CHECK_NEXT(r, 1, 1, 0, 128);
	CHECK_NEXT(r, 2, 1, 2, 128);
	struct mpring_stats st;
	mpring_get_stats(r, &st);
	CHECK_EQ_U64(st.rejected, 0);
	CHECK_EQ_U64(st.strides_wasted, 0);
	mpring_free(r);
}

/*
 * Every impossible report is refused with nothing changed, and the normal
 * stream goes on afterwards.  8 strides of 64 B, 2 WQEs.
 *   WQE 0: A (0-1), B (2-3), C (4), filler at 5
 *   WQE 1: D (0-1), E (2), F (3, consumed)
 *   WQE 2: G (0, consumed)
 */
TEST(refusals)
{
	struct mpring *r = ring_new(6, 3, 2, 8);
	REQUIRE(r);
	CHECK(mpring_error(r)[0] == '\0');

	/* Not posted yet, and strides or lengths outside the WQE. */
	CHECK_REFUSED(r, mpring_arrive(r, 2, 0, 64, 0));
	CHECK_REFUSED(r, mpring_arrive(r, UINT64_MAX, 0, 64, 0));
	CHECK_REFUSED(r, mpring_fill(r, 2, 0));
	CHECK_REFUSED(r, mpring_arrive(r, 0, 8, 64, 0));
	CHECK_REFUSED(r, mpring_arrive(r, 0, 1000, 64, 0));
	CHECK_REFUSED(r, mpring_fill(r, 0, 9));
	CHECK_REFUSED(r, mpring_arrive(r, 0, 0, 0, 0));
	CHECK_REFUSED(r, mpring_arrive(r, 0, 0, 8 * 64 + 1, 0));
	CHECK_REFUSED(r, mpring_arrive(r, 0, 6, 2 * 64 + 1, 0));
	CHECK_REFUSED(r, mpring_arrive(r, 0, 7, 65, 1));
	CHECK_REFUSED(r, mpring_arrive(r, 0, 0, UINT32_MAX, 0));
	CHECK_REFUSED(r, mpring_arrive(r, 0, 4, UINT32_MAX - 31, 0));

	/* C first, then overlaps with it and closes before it. */
	CHECK(mpring_arrive(r, 0, 4, 64, 0) == 0, "%s", mpring_error(r));        /* C */
	CHECK_REFUSED(r, mpring_arrive(r, 0, 4, 64, 0));
	CHECK_REFUSED(r, mpring_arrive(r, 0, 4, 1, 1));
	CHECK_REFUSED(r, mpring_arrive(r, 0, 3, 65, 0));
	CHECK_REFUSED(r, mpring_arrive(r, 0, 0, 5 * 64, 0));
	CHECK_REFUSED(r, mpring_fill(r, 0, 4));
	CHECK_REFUSED(r, mpring_fill(r, 0, 0));
	CHECK_REFUSED(r, mpring_arrive(r, 0, 2, 64, 1));   /* closes at 3, before C */
	CHECK(mpring_fill(r, 0, 5) == 0, "%s", mpring_error(r));

	/* A second close, and messages at or after the close. */
	CHECK_REFUSED(r, mpring_fill(r, 0, 5));
	CHECK_REFUSED(r, mpring_fill(r, 0, 6));
	CHECK_REFUSED(r, mpring_fill(r, 0, 8));
	CHECK_REFUSED(r, mpring_arrive(r, 0, 5, 64, 0));
	CHECK_REFUSED(r, mpring_arrive(r, 0, 6, 64, 0));
	CHECK_REFUSED(r, mpring_arrive(r, 0, 7, 64, 1));
	CHECK_NO_NEXT(r);

	/* The stream goes on: A and B fill the gap before C. */
	CHECK(mpring_arrive(r, 0, 0, 128, 0) == 0, "%s", mpring_error(r));       /* A */
	CHECK_NEXT(r, 0, 0, 0, 128);
	CHECK_NO_NEXT(r);
	CHECK(mpring_arrive(r, 0, 2, 100, 0) == 0, "%s", mpring_error(r));       /* B */
	CHECK_NEXT(r, 1, 0, 2, 100);
	CHECK_NEXT(r, 2, 0, 4, 64);
	CHECK_NO_NEXT(r);

	/* WQE 1: a consumed flag that would close before a reported message. */
	CHECK(mpring_arrive(r, 1, 2, 64, 0) == 0, "%s", mpring_error(r));        /* E */
	CHECK_REFUSED(r, mpring_arrive(r, 1, 0, 128, 1));
	CHECK_REFUSED(r, mpring_arrive(r, 1, 0, 64, 1));
	CHECK_REFUSED(r, mpring_arrive(r, 1, 1, 128, 0));
	CHECK(mpring_arrive(r, 1, 0, 128, 0) == 0, "%s", mpring_error(r));       /* D */
	CHECK(mpring_arrive(r, 1, 3, 64, 1) == 0, "%s", mpring_error(r));        /* F */
	CHECK_REFUSED(r, mpring_fill(r, 1, 4));
	CHECK_REFUSED(r, mpring_fill(r, 1, 8));
	CHECK_REFUSED(r, mpring_arrive(r, 1, 4, 64, 0));
	CHECK_REFUSED(r, mpring_arrive(r, 1, 4, 64, 1));
	CHECK_NEXT(r, 3, 1, 0, 128);
	CHECK_NEXT(r, 4, 1, 2, 64);
	CHECK_NEXT(r, 5, 1, 3, 64);
	CHECK_NO_NEXT(r);

	/* WQE 0 comes back as 2; 0 is then too old, 3 not posted yet. */
	CHECK_REFUSED(r, mpring_arrive(r, 2, 0, 64, 0));
	for (uint64_t t = 0; t < 3; t++)
		CHECK(mpring_release(r, t) == 0);
	CHECK_REPOST(r, 2);
	CHECK_REFUSED(r, mpring_arrive(r, 0, 0, 64, 1));   /* same buffer, old number */
	CHECK_REFUSED(r, mpring_fill(r, 0, 0));
	CHECK_REFUSED(r, mpring_arrive(r, 3, 0, 64, 0));   /* same buffer as WQE 1 */
	CHECK_REFUSED(r, mpring_fill(r, 3, 0));
	CHECK_REFUSED(r, mpring_arrive(r, 4, 0, 64, 0));
	CHECK(mpring_arrive(r, 2, 0, 64, 1) == 0, "%s", mpring_error(r));        /* G */
	CHECK_NEXT(r, 6, 2, 0, 64);
	CHECK_NO_NEXT(r);
	CHECK_NO_REPOST(r);
	for (uint64_t t = 3; t < 7; t++)
		CHECK(mpring_release(r, t) == 0);
	CHECK_REPOST(r, 3);
	CHECK_REPOST(r, 4);
	CHECK_NO_REPOST(r);
	CHECK_REFUSED(r, mpring_arrive(r, 1, 0, 64, 0));
	CHECK_REFUSED(r, mpring_arrive(r, 2, 1, 64, 0));

	struct mpring_stats st;
	mpring_get_stats(r, &st);
	CHECK_EQ_U64(st.messages, 7);
	CHECK_EQ_U64(st.fillers, 1);
	CHECK_EQ_U64(st.consumed, 2);
	CHECK_EQ_U64(st.strides_used, 2 + 2 + 1 + 2 + 1 + 1 + 1);
	CHECK_EQ_U64(st.strides_wasted, 3 + 4 + 7);
	CHECK_EQ_U64(st.reposts, 3);
	CHECK_EQ_U64(st.rejected, 40);
	mpring_free(r);
}

/*
 * Closes that contradict a message: a message running past a known
 * filler, and a consumed flag on a WQE a filler already closed (two
 * closes).  The header lists "a stride at or after the WQE's close" and
 * "a second close"; a message that starts before the close but ends after
 * it is the same impossibility.
 */
TEST(refusals_across_the_close)
{
	struct mpring *r = ring_new(6, 3, 2, 8);
	REQUIRE(r);
	CHECK(mpring_fill(r, 0, 3) == 0, "%s", mpring_error(r));
	CHECK_REFUSED(r, mpring_arrive(r, 0, 2, 128, 0));
	CHECK_REFUSED(r, mpring_arrive(r, 0, 0, 4 * 64, 0));
	CHECK_REFUSED(r, mpring_arrive(r, 0, 1, 2 * 64, 1));  /* ends at 3, but a second close */
	CHECK(mpring_arrive(r, 0, 1, 2 * 64, 0) == 0, "%s", mpring_error(r));
	CHECK(mpring_arrive(r, 0, 0, 64, 0) == 0, "%s", mpring_error(r));
	CHECK_NEXT(r, 0, 0, 0, 64);
	CHECK_NEXT(r, 1, 0, 1, 128);
	CHECK_NO_NEXT(r);
	CHECK(mpring_arrive(r, 1, 0, 64, 1) == 0, "%s", mpring_error(r));
	CHECK_REFUSED(r, mpring_fill(r, 1, 1));
	CHECK_NEXT(r, 2, 1, 0, 64);
	mpring_free(r);
}

/*
 * The soak: 200k messages through 4 WQEs x 16 strides with max_out 3,
 * completions reported in random order, releases and reposts at random
 * moments, and now and then a duplicate or premature report that must be
 * refused.  The model judges every mpring_next and mpring_repost both
 * ways, so each message goes out exactly once and in placement order, and
 * each WQE is reposted exactly once per lap, in posting order.
 */
TEST(soak)
{
	const size_t N = 200000;
	struct sim s;
	sim_init(&s, 6, 4, 4, 3, 4242);
	s.p_fill0 = 40;
	s.p_early = 30;
	struct mpring *r = ring_new(6, 4, 4, 3);
	REQUIRE(r);
	size_t *pool = malloc(1024 * sizeof *pool);  /* placed, not yet reported */
	REQUIRE(pool, "out of memory");
	size_t npool = 0, peak_pool = 0;
	uint64_t steps = 0, injected = 0, max_wait = 0;
	int bad = 0;
	struct prng op = { 7 };

	for (;;) {
		int done_placing = s.nmsg >= N && s.at == 0;
		if (done_placing && npool == 0 && s.released == s.nmsg &&
		    s.next_repost == s.cur)
			break;
		if (++steps > 40 * (uint64_t)N) {
			CHECK(0, "no progress: %llu of %zu messages handed out",
			      (unsigned long long)s.handed, N);
			bad = 1;
			break;
		}
		unsigned o = prng_below(&op, 100);
		if (o < 30) {
			if (!done_placing && sim_can_place(&s) && npool < 1000) {
				size_t from = s.nev;
				if (s.nmsg < N)
					sim_place(&s);
				else
					sim_close_fill(&s);
				if (s.oom) {
					CHECK(0, "out of memory");
					bad = 1;
					break;
				}
				for (size_t i = from; i < s.nev; i++)
					pool[npool++] = i;
				if (npool > peak_pool)
					peak_pool = npool;
			}
		} else if (o < 60) {
			if (npool) {
				size_t k = prng_below(&op, (unsigned)npool);
				size_t i = pool[k];
				pool[k] = pool[--npool];
				bad |= sim_report(&s, r, i) < 0;
			}
		} else if (o < 85) {
			if (s.handed > s.released) {
				uint64_t wait = s.handed - s.released;
				if (wait > max_wait)
					max_wait = wait;
				bad |= sim_release(&s, r) < 0;
			}
		} else if (o < 99) {
			/* only the checks below */
		} else {
			/* A report that must be refused: a repeat of an earlier one,
			 * a WQE not posted yet, or a non-oldest release. */
			unsigned kind = prng_below(&op, 3);
			struct mpring_stats before, after;
			mpring_get_stats(r, &before);
			int rc = 0;
			if (kind == 0 && s.known > 0) {
				size_t lo = s.known > 300 ? s.known - 300 : 0;
				const struct ev *e = &s.ev[lo + prng_below(&op, (unsigned)(s.known - lo))];
				rc = e->kind == EV_MSG ?
				     mpring_arrive(r, e->wqe, e->stride, e->len, e->consumed) :
				     mpring_fill(r, e->wqe, e->stride);
			} else if (kind == 1) {
				rc = mpring_arrive(r, s.posted + prng_below(&op, 9), 0, 64, 0);
			} else {
				rc = -1;
				if (s.handed > s.released + 1)
					rc = mpring_release(r, s.released + 1);
				kind = 2;
			}
			mpring_get_stats(r, &after);
			if (rc != -1) {
				CHECK(0, "step %llu: impossible report (kind %u) accepted",
				      (unsigned long long)steps, kind);
				bad = 1;
			}
			if (kind < 2) {
				injected++;
				s.st.rejected++;
				before.rejected++;
			} else {
				/* Whether a bad release counts as a rejection is not specified. */
				s.st.rejected += after.rejected - before.rejected;
				before.rejected = after.rejected;
			}
			if (memcmp(&before, &after, sizeof before) != 0) {
				CHECK(0, "step %llu: a refusal (kind %u) changed the statistics",
				      (unsigned long long)steps, kind);
				bad = 1;
			}
		}
		if (!bad)
			bad |= sim_next(&s, r) < 0;
		if (!bad)
			bad |= sim_repost(&s, r) < 0;
		if (!bad && (steps & 4095) == 0) {
			struct mpring_stats st;
			mpring_get_stats(r, &st);
			bad |= st.messages != s.st.messages || st.rejected != s.st.rejected ||
			       st.reposts != s.next_repost;
			CHECK(!bad, "step %llu: messages %llu/%llu rejected %llu/%llu "
			      "reposts %llu/%llu", (unsigned long long)steps,
			      (unsigned long long)st.messages, (unsigned long long)s.st.messages,
			      (unsigned long long)st.rejected, (unsigned long long)s.st.rejected,
			      (unsigned long long)st.reposts, (unsigned long long)s.next_repost);
		}
		if (bad)
			break;
	}
	if (!bad) {
		CHECK_EQ_U64(s.handed, N);
		CHECK_NO_NEXT(r);
		CHECK_NO_REPOST(r);
		sim_check_stats(&s, r, "soak end");
		CHECK_EQ_U64(mpring_posted(r), s.wqes + s.cur);
		struct mpring_stats st;
		mpring_get_stats(r, &st);
		CHECK_EQ_U64(st.strides_used + st.strides_wasted, s.cur * s.strides);
		CHECK(s.cur > 1000 * s.wqes, "only %llu WQEs", (unsigned long long)s.cur);
		CHECK(injected > 1000, "only %llu refusals injected", (unsigned long long)injected);
		CHECK(max_wait == s.max_out, "max_out never reached (peak %llu)",
		      (unsigned long long)max_wait);
		CHECK(peak_pool > 4, "completions were hardly reordered (pool peak %zu)", peak_pool);
	}
	free(pool);
	mpring_free(r);
	sim_free(&s);
}

UNIT_MAIN(geometry, in_order_stream, reorder_small, shuffled_orders, max_out_limits_tickets,
	  release_only_the_oldest, repost_rules, repost_without_next, full_wqe_is_closed,
	  refusals, refusals_across_the_close, soak)
