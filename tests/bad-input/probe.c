/*
 * probe.c - feeds one file of bytes to a parser that no command reads
 * from a file, for tests/integration/bad-input.sh.
 *
 *   bad-input-probe wire-req FILE    wire_check, as the server checks a slot
 *   bad-input-probe wire-resp FILE   wire_check_resp, as a client checks a reply
 *   bad-input-probe ctl FILE         ctl_pump/ctl_pop, as the driver reads a process
 *
 * A FILE named *.hex holds hex digits (blanks and "# comments" ignored),
 * so a case can be written and read by hand; any other FILE is raw bytes.
 * Prints the parser's verdict ("accepted ..." or "rejected: REASON") and
 * exits 0 if the input was accepted, 1 if the parser rejected it, 2 on a
 * usage or I/O error: the statuses bad-input.sh checks.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ctl.h"
#include "wire.h"

/* Reads FILE (hex text if *.hex) into a malloc'd buffer of exactly *len bytes. */
static uint8_t *load(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t n = strlen(path), cap = 4096, got = 0;
	int hex = n > 4 && strcmp(path + n - 4, ".hex") == 0, c, hi = -1, comment = 0;
	uint8_t *buf;

	if (!f) {
		fprintf(stderr, "bad-input-probe: %s: cannot open: %s\n", path, strerror(errno));
		return NULL;
	}
	buf = malloc(cap);
	while (buf && (c = fgetc(f)) != EOF) {
		if (got == cap) {
			uint8_t *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		if (!hex) {
			buf[got++] = (uint8_t)c;
			continue;
		}
		if (comment || c == '#') {
			comment = c != '\n';
			continue;
		}
		if (isspace(c))
			continue;
		if (!isxdigit(c)) {
			fprintf(stderr, "bad-input-probe: %s: '%c' is not a hex digit\n", path, c);
			free(buf);
			fclose(f);
			return NULL;
		}
		int v = isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
		if (hi < 0) {
			hi = v;
		} else {
			buf[got++] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
	}
	fclose(f);
	if (!buf) {
		fprintf(stderr, "bad-input-probe: %s: out of memory\n", path);
		return NULL;
	}
	if (hi >= 0) {
		fprintf(stderr, "bad-input-probe: %s: odd number of hex digits\n", path);
		free(buf);
		return NULL;
	}
	/* Exactly len bytes, so a read past the input is a real overrun. */
	uint8_t *exact = malloc(got ? got : 1);
	if (exact)
		memcpy(exact, buf, got);
	free(buf);
	*len = got;
	return exact;
}

static int probe_wire_req(const uint8_t *b, size_t n)
{
	struct wire_req h;
	const char *why;

	if (wire_check(b, n, &h, &why) != 0) {
		printf("rejected: %s\n", why);
		if (n >= WIRE_HDR_SIZE)
			printf("  header: size %u magic %#x version %u op %u flags %#x key_len %u "
			       "val_len %u (%zu bytes given)\n", h.size, h.magic, h.version, h.op,
			       h.flags, h.key_len, h.val_len, n);
		return 1;
	}
	printf("accepted: op %u flags %#x key_len %u val_len %u seq %llu\n", h.op, h.flags,
	       h.key_len, h.val_len, (unsigned long long)h.seq);
	return 0;
}

static int probe_wire_resp(const uint8_t *b, size_t n)
{
	struct wire_resp r;
	const char *why;

	if (wire_check_resp(b, n, &r, &why) != 0) {
		printf("rejected: %s\n", why);
		if (n >= WIRE_RESP_HDR)
			printf("  header: kind %u op %u status %u val_len %u reserved %#llx (%zu bytes given)\n",
			       r.kind, r.op, r.status, r.val_len, (unsigned long long)r.reserved, n);
		return 1;
	}
	printf("accepted: kind %u op %u status %u val_len %u seq %llu\n", r.kind, r.op, r.status,
	       r.val_len, (unsigned long long)r.seq);
	return 0;
}

static int probe_ctl(const uint8_t *b, size_t n)
{
	char err[1024];
	int fd = memfd_create("bad-input", MFD_CLOEXEC), r, bad = 0;
	struct ctl *c;
	json_t *m;

	if (fd < 0 || write(fd, b, n) != (ssize_t)n || lseek(fd, 0, SEEK_SET) != 0) {
		fprintf(stderr, "bad-input-probe: memfd: %s\n", strerror(errno));
		return 2;
	}
	c = ctl_from_fd(fd, err, sizeof err);
	if (!c) {
		fprintf(stderr, "bad-input-probe: %s\n", err);
		return 2;
	}
	do {
		r = ctl_pump(c, err, sizeof err);
		if (r < 0) {
			printf("rejected: %s\n", err);
			bad = 1;
		}
		while ((m = ctl_pop(c)) != NULL) {
			printf("accepted: %s\n", json_string_value(json_object_get(m, "type")));
			json_decref(m);
		}
	} while (r != 0);
	ctl_close(c);
	return bad;
}

int main(int argc, char **argv)
{
	uint8_t *b;
	size_t n = 0;
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: bad-input-probe wire-req|wire-resp|ctl FILE\n");
		return 2;
	}
	b = load(argv[2], &n);
	if (!b)
		return 2;
	if (strcmp(argv[1], "wire-req") == 0) {
		rc = probe_wire_req(b, n);
	} else if (strcmp(argv[1], "wire-resp") == 0) {
		rc = probe_wire_resp(b, n);
	} else if (strcmp(argv[1], "ctl") == 0) {
		rc = probe_ctl(b, n);
	} else {
		fprintf(stderr, "bad-input-probe: unknown kind \"%s\"; use wire-req, wire-resp or ctl\n",
			argv[1]);
		rc = 2;
	}
	free(b);
	return rc;
}
