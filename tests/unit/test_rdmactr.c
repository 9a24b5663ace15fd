/*
 * test_rdmactr.c - RDMA device counters without a device: lib/rdmactr.h on
 * a fake sysfs tree (rxe's and mlx5's names, the lifespan setting, files
 * that cannot be read, a missing port, a counter that went down), and
 * harness/run/devctr.h's point (one shared device, two client devices, an
 * unavailable side, trials added up).
 */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "devctr.h"
#include "rdmactr.h"
#include "rmtree.h"

static char root[256];

static int put(const char *rel, const char *text)
{
	char path[512], dir[512];
	snprintf(path, sizeof path, "%s/%s", root, rel);
	snprintf(dir, sizeof dir, "%s", path);
	for (char *p = dir + strlen(root) + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(dir, 0755);
			*p = '/';
		}
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static int make_root(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(root, sizeof root, "%s/test_rdmactr-XXXXXX", t && *t ? t : "/tmp");
	return mkdtemp(root) ? 0 : -1;
}

static json_int_t ival(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_integer(v) ? json_integer_value(v) : -1;
}

TEST(rxe_counters_and_deltas)
{
	static struct rdmactr_snap a, b;
	REQUIRE(make_root() == 0);
	put("rxe0/ports/1/hw_counters/send_rnr_err", "10\n");
	put("rxe0/ports/1/hw_counters/rcvd_rnr_err", "3\n");
	put("rxe0/ports/1/hw_counters/completer_retry_err", "0\n");
	put("rxe0/ports/1/hw_counters/rcvd_seq_err", "0\n");
	put("rxe0/ports/1/hw_counters/duplicate_request", "1\n");
	put("rxe0/ports/1/hw_counters/out_of_seq_request", "2\n");
	put("rxe0/ports/1/hw_counters/link_downed", "0\n");
	put("rxe0/ports/1/hw_counters/lifespan", "10\n");
	put("rxe0/ports/1/counters/link_downed", "5\n");
	put("rxe0/ports/1/counters/port_xmit_data", "garbage\n");
	REQUIRE(rdmactr_read(root, "rxe0", 1, &a) == 0, "%s", a.why);
	CHECK_EQ_U64(a.n, 8);            /* 7 hw counters + counters/link_downed; not lifespan */
	CHECK_EQ_U64(a.unreadable, 1);   /* port_xmit_data */
	put("rxe0/ports/1/hw_counters/send_rnr_err", "1010\n");
	put("rxe0/ports/1/hw_counters/rcvd_rnr_err", "1003\n");
	put("rxe0/ports/1/hw_counters/completer_retry_err", "7\n");
	put("rxe0/ports/1/hw_counters/rcvd_seq_err", "4\n");
	put("rxe0/ports/1/counters/link_downed", "1\n");   /* went down: a reset */
	REQUIRE(rdmactr_read(root, "rxe0", 1, &b) == 0, "%s", b.why);
	json_t *j = rdmactr_delta_json(&a, &b, "h1");
	REQUIRE(json_is_object(j));
	const json_t *c = json_object_get(j, "counters"), *d = json_object_get(j, "derived");
	CHECK(ival(c, "send_rnr_err") == 1000);
	CHECK(ival(c, "link_downed") == 0);
	CHECK(json_object_get(c, "lifespan") == NULL);
	CHECK(json_object_get(c, "counters/link_downed") == NULL);
	CHECK(json_array_size(json_object_get(j, "reset")) == 1);
	CHECK(!strcmp(json_string_value(json_object_get(j, "device")), "rxe0"));
	CHECK(!strcmp(json_string_value(json_object_get(j, "host")), "h1"));
	CHECK(ival(d, "rnr_naks_sent") == 1000);
	CHECK(ival(d, "rnr_naks_received") == 1000);
	CHECK(ival(d, "retransmissions") == 7, "rcvd_seq_err is a cause of completer_retry_err, not added");
	CHECK(ival(d, "duplicates") == 0);
	CHECK(ival(d, "out_of_sequence") == 0);
	CHECK(json_object_size(d) == RDMACTR_NDERIVED);
	json_decref(j);
	rm_tree(root);
}

TEST(mlx5_names_and_missing_sources)
{
	json_t *c = json_pack("{s:I,s:I,s:I,s:I,s:I}", "out_of_buffer", (json_int_t)4, "rnr_nak_retry_err",
			      (json_int_t)5, "local_ack_timeout_err", (json_int_t)1, "packet_seq_err", (json_int_t)2,
			      "out_of_sequence", (json_int_t)3);
	json_t *d = rdmactr_derive(c);
	CHECK(ival(d, "rnr_naks_sent") == 4);
	CHECK(ival(d, "rnr_naks_received") == 5);
	CHECK(ival(d, "retransmissions") == 3);
	CHECK(ival(d, "out_of_sequence") == 3);
	CHECK(json_is_null(json_object_get(d, "duplicates")), "a name the device lacks is null, never 0");
	json_decref(d);
	json_decref(c);
}

TEST(unavailable_says_why)
{
	static struct rdmactr_snap a, b;
	REQUIRE(make_root() == 0);
	CHECK(rdmactr_read(root, "mlx5_0", 1, &a) == -1);
	CHECK(strstr(a.why, "mlx5_0/ports/1/hw_counters") != NULL, "%s", a.why);
	CHECK(strstr(a.why, strerror(ENOENT)) != NULL, "%s", a.why);
	put("rxe0/ports/1/hw_counters/sent_pkts", "1\n");
	CHECK(rdmactr_read(root, "rxe0", 1, &b) == 0);
	json_t *j = rdmactr_delta_json(&a, &b, NULL);
	REQUIRE(json_is_string(j));
	CHECK(!strncmp(json_string_value(j), "unavailable: ", 13), "%s", json_string_value(j));
	json_decref(j);
	CHECK(rdmactr_read(root, "", 1, &a) == -1 && a.why[0]);
	CHECK(rdmactr_read(root, "../x", 1, &a) == -1, "a device name is never a path");
	rm_tree(root);
}

static json_t *proc(const char *host, const char *dev, json_int_t sent, json_int_t rcvd)
{
	return json_pack("{s:{s:s,s:i,s:s,s:{s:I,s:I,s:I}}}", "rdma_counters", "device", dev, "port", 1, "host", host,
			 "counters", "send_rnr_err", sent, "rcvd_rnr_err", rcvd, "sent_pkts", (json_int_t)100);
}

TEST(point_on_one_shared_device)
{
	json_t *srv = proc("vm", "rxe0", 50, 50);
	json_t *cl[2] = { proc("vm", "rxe0", 49, 48), proc("vm", "rxe0", 47, 50) };
	json_t *p = devctr_point(srv, cl, 2);
	REQUIRE(p != NULL);
	CHECK(json_is_true(json_object_get(p, "shared_device")));
	/* two processes on one device count it once: the larger delta */
	CHECK(ival(json_object_get(p, "client"), "send_rnr_err") == 49);
	CHECK(ival(json_object_get(p, "client"), "rcvd_rnr_err") == 50);
	CHECK(ival(json_object_get(p, "client"), "sent_pkts") == 100);
	CHECK(ival(p, "rnr_naks_sent") == 50 && ival(p, "rnr_naks_received") == 50, "the server's, not a sum");
	CHECK(json_is_null(json_object_get(p, "duplicates")));
	CHECK(ival(json_object_get(json_object_get(p, "derived"), "client"), "rnr_naks_sent") == 49);
	CHECK(!strcmp(json_string_value(json_object_get(p, "device")), "rxe0"));
	json_decref(p);
	json_decref(cl[0]);
	json_decref(cl[1]);
	json_decref(srv);
}

TEST(point_on_separate_devices_and_trials)
{
	json_t *srv = proc("s", "mlx5_0", 30, 0);
	json_t *cl[2] = { proc("c1", "mlx5_0", 0, 10), proc("c2", "mlx5_0", 0, 20) };
	json_t *p = devctr_point(srv, cl, 2);
	REQUIRE(p != NULL);
	CHECK(json_is_false(json_object_get(p, "shared_device")));
	CHECK(ival(p, "client_devices") == 2);
	CHECK(ival(json_object_get(p, "client"), "rcvd_rnr_err") == 30, "two client hosts add up");
	CHECK(ival(p, "rnr_naks_sent") == 30 && ival(p, "rnr_naks_received") == 30);
	json_t *entries = json_pack("[{s:O},{s:O},{}]", "rdma_counters", p, "rdma_counters", p);
	json_t *o = devctr_over(entries);
	REQUIRE(o != NULL);
	CHECK(ival(o, "trials") == 2);
	CHECK(ival(o, "rnr_naks_sent") == 60);
	CHECK(ival(json_object_get(o, "server"), "send_rnr_err") == 60);
	CHECK(ival(json_object_get(json_object_get(o, "derived"), "client"), "rnr_naks_received") == 60);
	json_decref(o);
	json_decref(entries);
	json_decref(p);
	json_decref(cl[0]);
	json_decref(cl[1]);
	json_decref(srv);
}

TEST(point_with_a_side_unavailable_or_none)
{
	json_t *srv = json_pack("{s:s}", "rdma_counters", "unavailable: /sys/...: Permission denied");
	json_t *cl[1] = { proc("c", "rxe0", 0, 9) };
	json_t *p = devctr_point(srv, cl, 1);
	REQUIRE(p != NULL);
	CHECK(json_is_string(json_object_get(p, "server")));
	CHECK(!strncmp(json_string_value(json_object_get(p, "server")), "unavailable: ", 13));
	CHECK(json_is_null(json_object_get(json_object_get(p, "derived"), "server")));
	CHECK(ival(p, "rnr_naks_received") == 9, "what the clients counted");
	json_decref(p);
	json_t *shm[1] = { json_pack("{s:i}", "sent", 5) };
	json_t *s2 = json_pack("{s:i}", "executed", 5);
	CHECK(devctr_point(s2, shm, 1) == NULL, "no counters reported (shm): no field");
	CHECK(devctr_point(NULL, shm, 1) == NULL);
	json_decref(shm[0]);
	json_decref(s2);
	json_decref(cl[0]);
	json_decref(srv);
}

UNIT_MAIN(rxe_counters_and_deltas, mlx5_names_and_missing_sources, unavailable_says_why, point_on_one_shared_device,
	  point_on_separate_devices_and_trials, point_with_a_side_unavailable_or_none)
