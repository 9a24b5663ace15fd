# tests/verbs/netem-fault.sh - sourced by tests/verbs/netem-vm1.sh (VM 1)
# with OQB_NETEM_FAULT=1: a client cut off the wire, once correct and once
# with the test-only fault commit-on-error (bench/fault.h).
#
# The scenario, the same both times: an oq server on VM 2 (started over
# the ssh master connection, cache backend), one client here sending
# sets and gets at 40/s with its history recorded; after 5 s every RoCEv2
# packet this VM sends is dropped (netem loss 100 %).  RC retries the
# oldest request 6 times, about 2.1 s apart, then completes it with
# RETRY_EXC_ERR and flushes the rest (WR_FLUSH_ERR).  The wire comes back,
# a second client reads every key once (its history beside the first),
# the server is stopped and reports what it executed, and `oqb check`
# reads both histories.
#
#   correct client: it fails, saying the retries ran out; its requests in
#     flight stay uncommitted (unknown outcome in the history); the server
#     executed every commit by ACK; the history is linearizable.
#   commit-on-error: the same failed completions count as commits (the
#     fault fires), so commits the server never received are in the
#     history: the accounting (commits by ACK > nilext executed) and, as
#     the read-back shows the keys without those writes, `oqb check` must
#     catch it.

FWL='{"kind":"kv","put_ratio":0.5,"key_size":16,"value_size":64,"keys":20}'
# The read-back is a trace of one get per key, replayed once: the kv
# generator's load phase would first write every key and hide what was
# lost.  Its keys are the kv generator's ("k" and the zero-padded number).
# It runs as --rank 1 (its history file beside the first client's), which
# makes it replay thread 1 and start at line 1: line 0 is a spare.
awk 'BEGIN { for (i = 0; i < 20; i++) printf "%d,k%015d,16,0,1,get,0\n", i, i == 0 ? 0 : i - 1;
	print "20,k000000000000019,16,0,1,get,0" }' >/tmp/readback.csv
FRB='{"kind":"trace","path":"/tmp/readback.csv","loop":false}'

# cutoff NAME FAULT PORT: the scenario; sets CUT_CLIENT_RC, CUT_CUT_S (how
# long the client lasted without a wire), CUT_RB_RC, CUT_ACKED, CUT_EXEC,
# CUT_VERDICT, CUT_UNKNOWN, CUT_FIRED.  Returns 1 if the server did not
# start.
cutoff() {
	local name=$1 fault=$2 port=$3 d=$SHARE/fault/$1 spid cpid t0
	CUT_CLIENT_RC=x CUT_CUT_S=0 CUT_RB_RC=x CUT_ACKED=0 CUT_EXEC=-1 CUT_VERDICT=error CUT_UNKNOWN=0 CUT_FIRED=0
	mkdir -p "$d/history"
	spid=$(on_server "'$OQB_BIN/oqb-server' --transport verbs --addr $SERVER --port $port --system oq \
		--backend cache --memory-mb 16 --workers 1 --cpus none >'$d/srv.out' 2>'$d/srv.err' </dev/null & echo \$!")
	if [ -z "$spid" ] || ! on_server "for i in \$(seq 1 1200); do grep -q '^ready: endpoint' '$d/srv.out' && exit 0;
			kill -0 $spid 2>/dev/null || exit 1; sleep 0.1; done; exit 1"; then
		show "$d/srv.err"
		return 1
	fi
	OQB_FAULT=$fault timeout -k 5 120 "$OQB_BIN/oqb-client" --transport verbs --server "verbs:$SERVER:$port" \
		--system oq --threads 1 --arrival poisson --rate 40 --duration-s 90 --warmup-s 0 --seed 11 \
		--workload "$FWL" --history "$d/history" --out "$d/client.json" >"$d/client.out" 2>"$d/client.err" &
	cpid=$!
	sleep 5   # requests flow and commit before the wire goes
	netem_set loss 100%
	t0=$SECONDS
	wait "$cpid"
	CUT_CLIENT_RC=$?
	CUT_CUT_S=$((SECONDS - t0))
	netem_set
	timeout -k 5 120 "$OQB_BIN/oqb-client" --transport verbs --server "verbs:$SERVER:$port" --system oq \
		--rank 1 --threads 1 --arrival closed --outstanding 1 --duration-s 15 --warmup-s 0 --seed 12 \
		--workload "$FRB" --history "$d/history" --out "$d/readback.json" >"$d/readback.out" 2>"$d/readback.err"
	CUT_RB_RC=$?
	on_server "kill -TERM $spid; for i in \$(seq 1 600); do kill -0 $spid 2>/dev/null || exit 0; sleep 0.1; done;
		kill -KILL $spid; exit 1" || echo "  $name: the server did not stop within 60 s of SIGTERM" >&2
	CUT_EXEC=$(on_server "cat '$d/srv.out'" | sed -n '/^{/,$p' | jq '[.per_worker[].nilext] | add' 2>/dev/null)
	CUT_EXEC=${CUT_EXEC:--1}
	CUT_ACKED=$(acked_commits "$d/history")
	"$OQB_BIN/oqb" check --quiet --time-budget-s 20 "$d" >"$d/check.out" 2>&1
	CUT_VERDICT=$(jq -r .verdict "$d/check.json" 2>/dev/null || echo error)
	CUT_UNKNOWN=$(jq -r .unknown_outcome_ops "$d/check.json" 2>/dev/null || echo 0)
	CUT_FIRED=$(sed -n 's/^OQB_FAULT fired:.* commit-on-error=\([0-9]*\).*/\1/p' "$d/client.err" | tail -1)
	CUT_FIRED=${CUT_FIRED:-0}
	echo "# cutoff $name: the client lasted $CUT_CUT_S s without a wire (exit $CUT_CLIENT_RC): $(grep -o 'failed: [^(]*' \
		"$d/client.err" | head -1); $CUT_ACKED commits by ACK, $CUT_EXEC nilext executed; read-back exit $CUT_RB_RC;" \
		"check $CUT_VERDICT ($CUT_UNKNOWN ops of unknown outcome); commit-on-error fired $CUT_FIRED" >&2
	return 0
}

if cutoff correct "" 7510; then
	[ "$CUT_CLIENT_RC" != 0 ] && grep -q 'transport retries exhausted' "$SHARE/fault/correct/client.err"
	r=$?; [ $r = 0 ] || show "$SHARE/fault/correct/client.err"
	result cutoff-correct/failed-as-retries-exhausted $r
	[ "$CUT_UNKNOWN" -gt 0 ]
	result cutoff-correct/in-flight-not-committed $?
	[ "$CUT_RB_RC" = 0 ] && [ "$(jq .committed "$SHARE/fault/correct/readback.json" 2>/dev/null)" = 20 ]
	r=$?; [ $r = 0 ] || show "$SHARE/fault/correct/readback.err"
	result cutoff-correct/read-back-every-key $r
	[ "$CUT_ACKED" -gt 0 ] && [ "$CUT_EXEC" -ge "$CUT_ACKED" ]
	result cutoff-correct/no-commit-lost $?
	[ "$CUT_VERDICT" = ok ]
	r=$?; [ $r = 0 ] || show "$SHARE/fault/correct/check.out"
	result cutoff-correct/history-linearizable $r
else
	result cutoff-correct/server-started 1
fi

if cutoff commit-on-error commit-on-error 7511; then
	[ "$CUT_FIRED" -gt 0 ]
	r=$?; [ $r = 0 ] || show "$SHARE/fault/commit-on-error/client.err"
	result cutoff-fault/fired $r
	[ "$CUT_RB_RC" = 0 ] && [ "$(jq .committed "$SHARE/fault/commit-on-error/readback.json" 2>/dev/null)" = 20 ]
	result cutoff-fault/read-back-every-key $?
	# both ways of catching it, each on its own line
	[ "$CUT_EXEC" -ge 0 ] && [ "$CUT_ACKED" -gt "$CUT_EXEC" ]
	result cutoff-fault/caught-by-accounting $?
	[ "$CUT_VERDICT" = violation ]
	r=$?; [ $r = 0 ] || show "$SHARE/fault/commit-on-error/check.out"
	result cutoff-fault/caught-by-check $r
else
	result cutoff-fault/server-started 1
fi
