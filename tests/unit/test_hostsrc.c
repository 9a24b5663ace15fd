/*
 * test_hostsrc.c - hosts from Slurm and CloudLab (harness/run/hostsrc.h):
 * Slurm's host-list expansion (ranges, zero padding, several brackets,
 * items with and without brackets) and its refusals; the manifest reader
 * on a sample written for the tests (nodes in order, the LAN addresses,
 * the name the launcher reaches), and its refusals (no LAN, two LANs
 * without hosts.lan, not a manifest, bad XML); and a whole config with
 * hosts.from: server first or as named, clients the others, shm on one
 * node, verbs.addr the server's LAN address.
 */
#include "unit.h"
#include "hostsrc.h"
#include "runconf.h"

#include <jansson.h>
#include <stdlib.h>
#include <unistd.h>

static char *joined(json_t *a)
{
	static char buf[4096];
	size_t n = 0, i;
	json_t *v;
	buf[0] = '\0';
	json_array_foreach(a, i, v)
		n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i ? " " : "", json_string_value(v));
	return buf;
}

static void expands(const char *list, const char *want)
{
	char err[512] = "";
	json_t *a = hostsrc_slurm_list(list, 256, err, sizeof err);
	CHECK(a && strcmp(joined(a), want) == 0, "%s -> %s (want %s) %s", list, a ? joined(a) : "NULL", want, err);
	json_decref(a);
}

static void refuses(const char *list, const char *what)
{
	char err[512] = "";
	json_t *a = hostsrc_slurm_list(list, 256, err, sizeof err);
	CHECK(!a && strstr(err, what) && strstr(err, "SLURM_JOB_NODELIST"), "%s: %s", list, err);
	json_decref(a);
}

TEST(slurm_lists_expand_as_slurm_does)
{
	expands("n1", "n1");
	expands("node[1-3,5]", "node1 node2 node3 node5");
	expands("c[08-11]", "c08 c09 c10 c11");
	expands("a,b[2-3],c", "a b2 b3 c");
	expands("r[1-2]n[1-2]", "r1n1 r1n2 r2n1 r2n2");
	expands("gpu[7]-ib", "gpu7-ib");
	refuses("", "empty");
	refuses("n[1-3", "without its ']'");
	refuses("n1-3]", "without its '['");
	refuses("n[3-1]", "backwards");
	refuses("n[a-b]", "not a number");
	refuses("n[]", "empty");
	refuses("a,,b", "empty node name");
	refuses("n[1-1000]", "at most 256");
}

static const char *sample(void)
{
	const char *root = getenv("OQB_ROOT");
	static char p[1024];
	snprintf(p, sizeof p, "%s/tests/data/cloudlab-manifest.xml", root ? root : ".");
	return p;
}

/* The sample with sed's expression applied, in a temporary file. */
static const char *variant(const char *sed)
{
	static char p[64];
	char cmd[2048];
	snprintf(p, sizeof p, "/tmp/oqb-hostsrc-%d.xml", (int)getpid());
	snprintf(cmd, sizeof cmd, "sed -e '%s' '%s' > %s", sed, sample(), p);
	if (system(cmd) != 0)
		return NULL;
	return p;
}

TEST(manifest_nodes_and_lan_addresses)
{
	char err[1024] = "";
	json_t *a = hostsrc_manifest(sample(), NULL, err, sizeof err);
	REQUIRE(a, "%s", err);
	CHECK(json_array_size(a) == 3);
	for (size_t i = 0; i < json_array_size(a); i++) {
		json_t *n = json_array_get(a, i);
		char node[32], host[96], addr[40];
		snprintf(node, sizeof node, "node%zu", i);
		snprintf(host, sizeof host, "node%zu.oqbci.oqbench.example.cloudlab.us", i);
		snprintf(addr, sizeof addr, "10.10.1.%zu", i + 1);
		CHECK(strcmp(json_string_value(json_object_get(n, "node")), node) == 0);
		CHECK(strcmp(json_string_value(json_object_get(n, "host")), host) == 0);
		CHECK(strcmp(json_string_value(json_object_get(n, "addr")), addr) == 0);
	}
	json_decref(a);
	/* the login hostname when there is no <host name> */
	const char *p = variant("/<host name=/d");
	a = hostsrc_manifest(p, "link-0", err, sizeof err);
	CHECK(a && strcmp(json_string_value(json_object_get(json_array_get(a, 1), "host")),
			  "r320-02.example.cloudlab.us") == 0, "%s", err);
	json_decref(a);
	unlink(p);
}

static void manifest_refuses(const char *sed, const char *lan, const char *what)
{
	char err[2048] = "";
	const char *p = variant(sed);
	json_t *a = hostsrc_manifest(p, lan, err, sizeof err);
	CHECK(!a && strstr(err, what) && strstr(err, p), "%s: %s", sed, err);
	json_decref(a);
	unlink(p);
}

TEST(manifest_refusals_name_the_fix)
{
	char err[1024] = "";
	CHECK(!hostsrc_manifest("/nonexistent/m.xml", NULL, err, sizeof err) && strstr(err, "cannot read"), "%s", err);
	manifest_refuses("/<link /,/<\\/link>/d", NULL, "no experiment LAN");
	manifest_refuses("s|</rspec>|<link client_id=\"link-1\"/></rspec>|", NULL, "set hosts.lan");
	manifest_refuses("s|</rspec>|<link client_id=\"link-1\"/></rspec>|", "link-1", "no node has an address");
	manifest_refuses("s|</rspec>||", "link-9", "no <link client_id=\"link-9\">");
	manifest_refuses("s/rspec/rpsec/g", NULL, "not an RSpec manifest");
	manifest_refuses("s/address=\"10.10.1.2\"/address=10.10.1.2/", NULL, "not in quotes");
	manifest_refuses("/<node /,/<\\/node>/d;s/type=\"manifest\"/type=\"request\"/", NULL, "request RSpec");
	manifest_refuses("/<host name=/d;/<login /d", NULL, "no <host name> and no <login hostname>");
}

static const char *cfg =
	"{\"name\":\"t\",\"transport\":\"verbs\",\"systems\":[\"oq\"],"
	"\"server\":{\"backend\":{\"kind\":\"null\"}},\"clients\":{\"processes\":4},"
	"\"workload\":{\"kind\":\"kv\",\"value_size\":64,\"keys\":100},"
	"\"arrival\":{\"kind\":\"poisson\",\"loads_ops\":[1000]}}";

static int load(struct runconf *rc, const char *set1, const char *set2, char *err, size_t errlen)
{
	static char path[64];
	snprintf(path, sizeof path, "/tmp/oqb-hostsrc-%d.json", (int)getpid());
	FILE *f = fopen(path, "w");
	fputs(cfg, f);
	fclose(f);
	const char *sets[2] = { set1, set2 };
	int r = runconf_load_sets(path, sets, set2 ? 2 : 1, rc, err, errlen);
	unlink(path);
	return r;
}

TEST(config_from_cloudlab_and_slurm)
{
	struct runconf rc;
	char err[2048], set[1200];
	snprintf(set, sizeof set, "hosts={\"from\":\"cloudlab\",\"manifest\":\"%s\"}", sample());
	REQUIRE(load(&rc, set, NULL, err, sizeof err) == 0, "%s", err);
	CHECK(strcmp(rc.server_host, "node0.oqbci.oqbench.example.cloudlab.us") == 0);
	CHECK(rc.nclient_hosts == 2 && strstr(rc.client_hosts[0], "node1.") && strstr(rc.client_hosts[1], "node2."));
	CHECK(strcmp(rc.verbs_addr, "10.10.1.1") == 0 && strcmp(rc.launcher, "ssh") == 0);
	runconf_free(&rc);
	/* the server as named; shm runs everything on the server's node */
	snprintf(set, sizeof set, "hosts={\"from\":\"cloudlab\",\"manifest\":\"%s\",\"server\":\"node2\"}", sample());
	REQUIRE(load(&rc, set, NULL, err, sizeof err) == 0, "%s", err);
	CHECK(strstr(rc.server_host, "node2.") && strcmp(rc.verbs_addr, "10.10.1.3") == 0 && rc.nclient_hosts == 2);
	runconf_free(&rc);
	REQUIRE(load(&rc, set, "transport=\"shm\"", err, sizeof err) == 0, "%s", err);
	CHECK(rc.nclient_hosts == 1 && strcmp(rc.client_hosts[0], rc.server_host) == 0 && strstr(rc.server_host, "node2."));
	runconf_free(&rc);
	snprintf(set, sizeof set, "hosts={\"from\":\"cloudlab\",\"manifest\":\"%s\",\"server\":\"node7\"}", sample());
	CHECK(load(&rc, set, NULL, err, sizeof err) < 0 && strstr(err, "hosts.server \"node7\" is not a node")
	      && strstr(err, "node0 node1 node2"), "%s", err);
	CHECK(load(&rc, "hosts={\"from\":\"cloudlab\"}", NULL, err, sizeof err) < 0 && strstr(err, "hosts.manifest: missing"),
	      "%s", err);
	snprintf(set, sizeof set, "hosts={\"from\":\"cloudlab\",\"manifest\":\"%s\",\"clients\":[\"x\"]}", sample());
	CHECK(load(&rc, set, NULL, err, sizeof err) < 0 && strstr(err, "remove one of them"), "%s", err);

	/* Slurm: the allocation's nodes, launcher slurm by default (it wants
	 * SLURM_JOB_ID; ssh here so the test needs no allocation) */
	unsetenv("SLURM_JOB_NODELIST");
	CHECK(load(&rc, "hosts={\"from\":\"slurm\",\"launcher\":\"ssh\"}", NULL, err, sizeof err) < 0 &&
	      strstr(err, "SLURM_JOB_NODELIST is not set") && strstr(err, "salloc"), "%s", err);
	setenv("SLURM_JOB_NODELIST", "node[1-3,5]", 1);
	REQUIRE(load(&rc, "hosts={\"from\":\"slurm\",\"launcher\":\"ssh\"}", NULL, err, sizeof err) == 0, "%s", err);
	CHECK(strcmp(rc.server_host, "node1") == 0 && rc.nclient_hosts == 3 && strcmp(rc.client_hosts[2], "node5") == 0);
	CHECK(strcmp(rc.verbs_addr, "node1") == 0);
	runconf_free(&rc);
	REQUIRE(load(&rc, "hosts={\"from\":\"slurm\",\"launcher\":\"ssh\",\"server\":\"node3\"}", NULL, err, sizeof err) == 0,
		"%s", err);
	CHECK(strcmp(rc.server_host, "node3") == 0 && rc.nclient_hosts == 3 && strcmp(rc.client_hosts[1], "node2") == 0);
	runconf_free(&rc);
	setenv("SLURM_JOB_NODELIST", "node[1-3", 1);
	CHECK(load(&rc, "hosts={\"from\":\"slurm\",\"launcher\":\"ssh\"}", NULL, err, sizeof err) < 0 &&
	      strstr(err, "without its ']'"), "%s", err);
	unsetenv("SLURM_JOB_NODELIST");
}

UNIT_MAIN(slurm_lists_expand_as_slurm_does, manifest_nodes_and_lan_addresses, manifest_refusals_name_the_fix,
	  config_from_cloudlab_and_slurm)
