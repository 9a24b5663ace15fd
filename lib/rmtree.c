/*
 * rmtree.c - see rmtree.h.  A depth-first walk that removes each entry
 * and carries on past one it cannot remove; whether dir is gone at the
 * end is the answer.
 */
#include "rmtree.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

int rm_tree(const char *dir)
{
	struct stat st;
	if (nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0 && errno != ENOENT)
		return -1;
	if (lstat(dir, &st) == 0) {
		errno = ENOTEMPTY;
		return -1;
	}
	return 0;
}
