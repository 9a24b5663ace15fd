/*
 * exitcodes.c - the exit-status table (exitcodes.h) and its help lines.
 */
#include <stddef.h>
#include <stdio.h>

#include "exitcodes.h"

static const struct {
	const char *name;
	const char *meaning;
} codes[OQB_EXIT_COUNT] = {
	[OQB_EXIT_OK] = { "ok", "finished; same or better; every check passed" },
	[OQB_EXIT_FAIL] = { "failed", "a regression, a failed check, a violation or a lost commit" },
	[OQB_EXIT_USAGE] = { "bad input", "usage, an unknown option, a missing argument, or a config or "
			     "file that cannot be read or is invalid; nothing was run" },
	[OQB_EXIT_INCONCLUSIVE] = { "inconclusive", "the evidence decides neither way (more trials may)" },
	[OQB_EXIT_NOISY] = { "too noisy", "the machine's canary spread too far to judge; nothing was run" },
	[OQB_EXIT_ERROR] = { "error", "could not finish: a process, host or tool failed, or a result could "
			     "not be written; there is no answer" },
};

const char *exitcode_name(int code)
{
	return code >= 0 && code < OQB_EXIT_COUNT ? codes[code].name : NULL;
}

const char *exitcode_meaning(int code)
{
	return code >= 0 && code < OQB_EXIT_COUNT ? codes[code].meaning : NULL;
}

void exitcodes_help(FILE *f, unsigned set)
{
	if (!set)
		return;
	fprintf(f, "\nexit status:\n");
	for (int c = 0; c < OQB_EXIT_COUNT; c++)
		if (set & OQB_EXITS(c))
			fprintf(f, "  %d  %s: %s\n", c, codes[c].name, codes[c].meaning);
}

void exitcodes_list(unsigned set, char *buf, size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	for (int c = 0; c < OQB_EXIT_COUNT && used < len; c++)
		if (set & OQB_EXITS(c))
			used += (size_t)snprintf(buf + used, len - used, "%s%d", used ? "/" : "", c);
}
