/*
 * binbuild.c - the build of the binaries a run starts (binbuild.h).
 */
#include "binbuild.h"
#include "log.h"
#include "subproc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define ANSWER_MAX 65536

/* The JSON object in out (the first line that opens one: a launcher may
 * print its own notes around it), or NULL. */
static json_t *answer_json(const char *out)
{
	for (const char *p = strchr(out, '{'); p; p = strchr(p + 1, '{')) {
		json_t *j = json_loads(p, JSON_DISABLE_EOF_CHECK, NULL);
		if (json_is_object(j) && json_is_string(json_object_get(j, "build_id")))
			return j;
		json_decref(j);
	}
	return NULL;
}

/* out with newlines as "; ", for a one-line message. */
static void one_line(char *out)
{
	size_t n = strlen(out);
	while (n && (out[n - 1] == '\n' || out[n - 1] == '\r'))
		out[--n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (out[i] == '\n' || out[i] == '\r')
			out[i] = ';';
}

static json_t *ask_argv(char *const *argv, const char *what, int timeout_ms, char *err, size_t errlen)
{
	char *out = malloc(ANSWER_MAX);
	if (!out) {
		err_set(err, errlen, "out of memory");
		return NULL;
	}
	int st = subproc_capture(argv, SUBPROC_STDERR, timeout_ms, out, ANSWER_MAX);
	json_t *j = st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? answer_json(out) : NULL;
	if (!j) {
		one_line(out);
		if (strlen(out) > 600)
			strcpy(out + 597, "...");
		err_set(err, errlen, "%s: %s%s%s", what,
			st == -2 ? "no answer in time" : st == -1 ? "could not be started" :
			st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "printed no build (an oqbench older "
			"than --build-info? rebuild it with make)" : "failed",
			out[0] ? ": " : "", out);
	}
	free(out);
	return j;
}

json_t *binbuild_ask(struct launcher *l, const char *host, const char *bin_dir, const char *prog,
		     int timeout_ms, char *err, size_t errlen)
{
	char path[4096], what[4400], lerr[512];
	snprintf(path, sizeof path, "%s/%s", bin_dir, prog);
	char *argv[] = { path, "--build-info", NULL };
	snprintf(what, sizeof what, "%s --build-info on %s (through the %s launcher)", path, host, l->ops->name);
	char **w = l->ops->wrap(l, host, NULL, argv, lerr, sizeof lerr);
	if (!w) {
		err_set(err, errlen, "%s: %s", what, lerr);
		return NULL;
	}
	json_t *j = ask_argv(w, what, timeout_ms, err, errlen);
	launch_argv_free(w);
	return j;
}

json_t *binbuild_local(const char *bin_dir, char *err, size_t errlen)
{
	char path[4096], what[4200];
	snprintf(path, sizeof path, "%s/oqb-server", bin_dir);
	snprintf(what, sizeof what, "%s --build-info", path);
	char *argv[] = { path, "--build-info", NULL };
	return ask_argv(argv, what, 30000, err, errlen);
}

const char *binbuild_id(const json_t *b)
{
	const char *s = json_string_value(json_object_get(b, "build_id"));
	return s ? s : "";
}

json_t *binbuild_transport(const json_t *b, const char *name)
{
	return json_object_get(json_object_get(b, "transports"), name);
}

int binbuild_has_transport(const json_t *b, const char *name)
{
	return binbuild_transport(b, name) != NULL;
}

/* One host's answer for role ("server": oqb-server, "client": oqb-client). */
static int ask_host(struct launcher *l, const char *host, const char *bin_dir, const char *role, json_t *procs,
		    json_t **build, char *err, size_t errlen)
{
	char prog[16];
	snprintf(prog, sizeof prog, "oqb-%s", role);
	*build = binbuild_ask(l, host, bin_dir, prog, 60000, err, errlen);
	if (!*build)
		return -1;
	json_array_append_new(procs, json_pack("{s:s, s:s, s:s, s:s}", "host", host, "role", role, "bin_dir",
					       bin_dir, "build_id", binbuild_id(*build)));
	return 0;
}

json_t *binbuild_run(struct launcher *l, const struct runconf *rc, const char *bin_dir, const char *expect_id,
		     const char *expect_from, int *no_answer, char *err, size_t errlen)
{
	json_t *procs = json_array(), *server = NULL;
	int dummy;

	if (!no_answer)
		no_answer = &dummy;
	*no_answer = 0;

	if (ask_host(l, rc->server_host, bin_dir, "server", procs, &server, err, errlen) < 0) {
		*no_answer = 1;
		goto fail;
	}
	const char *ref = binbuild_id(server);
	if (expect_id && strcmp(expect_id, ref) != 0) {
		err_set(err, errlen, "oqb-server on %s (bin_dir %s) is build %s, but %s is build %s: the run would "
			"measure another build than the one named; copy that build's bin/ to %s on %s", rc->server_host,
			bin_dir, ref, expect_from ? expect_from : "the expected build", expect_id, bin_dir,
			rc->server_host);
		goto fail;
	}
	for (size_t i = 0; i < rc->nclient_hosts; i++) {
		json_t *b;
		int seen = 0;
		for (size_t k = 0; k < i; k++)
			seen |= strcmp(rc->client_hosts[k], rc->client_hosts[i]) == 0;
		if (seen)
			continue;
		if (ask_host(l, rc->client_hosts[i], bin_dir, "client", procs, &b, err, errlen) < 0) {
			*no_answer = 1;
			goto fail;
		}
		if (strcmp(binbuild_id(b), ref) != 0) {
			err_set(err, errlen, "the processes of this run do not share one build: oqb-server on %s "
				"(bin_dir %s) is build %s, oqb-client on %s (bin_dir %s) is build %s; install one "
				"build's bin/ (make) in hosts.bin_dir on every host (oqb doctor CONFIG shows each "
				"host's)", rc->server_host, bin_dir, ref, rc->client_hosts[i], bin_dir, binbuild_id(b));
			json_decref(b);
			goto fail;
		}
		json_decref(b);
	}
	for (size_t s = 0; s < rc->nsystems; s++)
		if (strcmp(rc->systems[s], "erpc") == 0 && !binbuild_has_transport(server, "erpc")) {
			err_set(err, errlen, "%s: systems[%zu]: \"erpc\" is not in this build (oqb-server in %s on %s, "
				"build %s): it links the eRPC library, which is built separately; rebuild with make "
				"ERPC_DIR=/path/to/erpc (an eRPC checkout built with TRANSPORT=infiniband), see "
				"docs/erpc.md, or remove \"erpc\" from systems", rc->path, s, bin_dir, rc->server_host, ref);
			goto fail;
		}
	if (!binbuild_has_transport(server, rc->transport)) {
		err_set(err, errlen, "%s: transport: \"%s\" is not in the build of oqb-server in %s on %s (build %s); "
			"rebuild with its libraries installed (make deps; docs/verbs.md), or choose \"shm\"", rc->path,
			rc->transport, bin_dir, rc->server_host, ref);
		goto fail;
	}
	return json_pack("{s:s, s:o, s:o}", "build_id", ref, "server", server, "processes", procs);
fail:
	json_decref(server);
	json_decref(procs);
	return NULL;
}
