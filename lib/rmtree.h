/*
 * rmtree.h - removing a directory and everything under it (the server's
 * private run directory, pmem and DB directories, the crash tester's).
 */
#ifndef OQB_RMTREE_H
#define OQB_RMTREE_H

/* Removes dir and all below it, never following a symbolic link.  0 when
 * dir is gone (or was never there), else -1 with errno set. */
int rm_tree(const char *dir);

#endif
