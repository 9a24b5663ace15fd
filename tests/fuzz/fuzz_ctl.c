/*
 * fuzz_ctl.c - the control-channel reader (lib/ctl.c: line framing and
 * message checks), as the driver runs it on each process's connection.
 *
 * Input: the byte stream a process would send.  It is put in a memfd,
 * wrapped with ctl_from_fd, and read with ctl_pump + ctl_pop until the
 * end, as the driver's poll loop does (a bad line is reported and the
 * reading goes on, so later lines are exercised too).  Properties: every
 * message handed out is an object with "v" == CTL_VERSION and a string
 * "type"; an error has a message; no more messages come out than the
 * input has newlines; the reading ends (EOF) within a bounded number of
 * pumps.
 */
#include <string.h>

#include "ctl.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], err[512];
	size_t lines = 0, msgs = 0, pumps = 0;
	struct ctl *c;
	int fd = fuzz_memfd(data, size, path, sizeof path), r;
	json_t *m;

	if (fd < 0)
		return 0;
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	c = ctl_from_fd(fd, err, sizeof err);
	if (!c)
		return 0;
	do {
		err[0] = '\0';
		r = ctl_pump(c, err, sizeof err);
		if (r < 0)
			fuzz_check_msg(err, sizeof err);
		while ((m = ctl_pop(c)) != NULL) {
			json_t *v = json_object_get(m, "v");

			FUZZ_ASSERT(json_is_object(m), "message is not an object");
			FUZZ_ASSERT(json_is_integer(v) && json_integer_value(v) == CTL_VERSION, "version");
			FUZZ_ASSERT(json_is_string(json_object_get(m, "type")), "type");
			json_decref(m);
			msgs++;
		}
		/* Each pump reads at least 64 KiB or reaches the end. */
		FUZZ_ASSERT(++pumps <= 4 + size / 65536, "%zu pumps for %zu bytes", pumps, size);
	} while (r != 0);
	FUZZ_ASSERT(msgs <= lines, "%zu messages from %zu lines", msgs, lines);
	ctl_close(c);
	return 0;
}
