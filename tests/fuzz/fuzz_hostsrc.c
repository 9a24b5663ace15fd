/*
 * fuzz_hostsrc.c - the host sources of hosts.from (harness/run/hostsrc.c):
 * the manifest RSpec reader and Slurm's host-list expansion.
 *
 * Input: the bytes of a manifest, read through a memfd path, with the
 * only LAN and with LAN "link-0"; and the same bytes up to the first NUL
 * or newline (at most 512) as SLURM_JOB_NODELIST.  Properties: a refusal
 * has a message, a manifest's naming the file; an accepted manifest gives
 * at least one node, each with a non-empty client_id, host and address;
 * an accepted list gives 1..64 names, none empty and none holding a
 * bracket or a comma; the same list expands the same way again.
 */
#include <string.h>
#include <unistd.h>

#include "hostsrc.h"
#include "fuzz.h"

static void check_nodes(json_t *a)
{
	size_t i;
	json_t *v;
	FUZZ_ASSERT(json_array_size(a) > 0, "an accepted manifest with no node");
	json_array_foreach(a, i, v) {
		static const char *const keys[] = { "node", "host", "addr" };
		for (int k = 0; k < 3; k++) {
			const char *s = json_string_value(json_object_get(v, keys[k]));
			FUZZ_ASSERT(s && *s, "node %zu has no %s", i, keys[k]);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], err[2048], list[513];
	int fd = fuzz_memfd(data, size, path, sizeof path);

	if (fd >= 0) {
		const char *lans[] = { NULL, "link-0" };
		for (int l = 0; l < 2; l++) {
			err[0] = '\0';
			json_t *a = hostsrc_manifest(path, lans[l], err, sizeof err);
			if (a)
				check_nodes(a);
			else {
				fuzz_check_msg(err, sizeof err);
				FUZZ_ASSERT(strstr(err, path), "the message does not name the file: %s", err);
			}
			json_decref(a);
		}
		close(fd);
	}

	size_t n = 0;
	while (n < size && n < sizeof list - 1 && data[n] && data[n] != '\n') {
		list[n] = (char)data[n];
		n++;
	}
	list[n] = '\0';
	err[0] = '\0';
	json_t *a = hostsrc_slurm_list(list, 64, err, sizeof err);
	if (!a) {
		fuzz_check_msg(err, sizeof err);
		return 0;
	}
	size_t i, cnt = json_array_size(a);
	json_t *v;
	FUZZ_ASSERT(cnt >= 1 && cnt <= 64, "%zu names", cnt);
	json_array_foreach(a, i, v) {
		const char *s = json_string_value(v);
		FUZZ_ASSERT(s && *s && !strpbrk(s, "[],"), "name %zu is \"%s\"", i, s ? s : "(null)");
	}
	json_t *b = hostsrc_slurm_list(list, 64, err, sizeof err);
	FUZZ_ASSERT(b && json_equal(a, b), "not the same the second time");
	json_decref(a);
	json_decref(b);
	return 0;
}
