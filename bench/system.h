/*
 * system.h - the systems under test, as one table of commit rules.
 *
 * All systems share the request format, transports, executor and backends;
 * they differ only in what commits a nilext request (set/put/delete):
 *
 *   system    nilext commits on                      server does for nilext
 *   oq        delivery: the transport's ACK          nothing (executes later)
 *             (RC hardware ACK; shm: slot publish)
 *   rawrpc    the software response                  execute, then respond
 *   deferred  the software ACK                       ACK at dequeue, execute
 *   write1    (verbs) the RDMA WRITE into the        nothing (polls the rings,
 *             client's own ring completes            executes later); NOT
 *                                                    linearizable by design
 *   seqwrite  (verbs) the FAA on the slot's state    nothing (runs the log in
 *             word after the WRITE into the log      slot order)
 *             slot an FAA on the log's tail gave
 *
 * Non-nilext requests (get) and non-idempotent ones (incr) always commit on
 * the software response sent after execution (paper §4 Rule 2, §5.3).
 */
#ifndef OQB_SYSTEM_H
#define OQB_SYSTEM_H

enum commit_on {
	COMMIT_DELIVERY = 0,   /* transport-level delivery ACK */
	COMMIT_ACK = 1,        /* server software ACK at dequeue */
	COMMIT_RESPONSE = 2,   /* server software response after execution */
};

struct system_def {
	const char *name;
	enum commit_on nilext_commit;
	const char *summary;
	/* the one transport whose data path the system is (a one-sided
	 * design: verbs), or NULL: any */
	const char *transport;
	/* shown beside the system in every output, or NULL */
	const char *label;
};

#define SYSTEM_NOT_LINEARIZABLE "not linearizable by design"

/* 0, or -1 with err naming why system s cannot run over transport tp. */
int system_check_transport(const struct system_def *s, const char *tp, char *err, size_t errlen);

/* The system with this name, or NULL (see system_names for the list). */
const struct system_def *system_find(const char *name);
const char *system_names(void);
/* NULL-terminated list of names, for option tables. */
extern const char *const system_name_list[];

/* What commits a request with these WIRE_F_* flags under system s. */
enum commit_on system_commit_rule(const struct system_def *s, unsigned wire_flags);

#endif
