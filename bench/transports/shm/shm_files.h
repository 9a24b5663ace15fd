/*
 * shm_files.h - the shared-memory transport's files: mapping
 * them, making a range persistent, and replacing one atomically.  Private
 * to bench/transports/shm.
 */
#ifndef OQB_SHM_FILES_H
#define OQB_SHM_FILES_H

#include <stddef.h>

#include <libpmem.h>

/* Maps path (created at size bytes, 0600, if create; else it must hold at
 * least size bytes) read-write and shared; NULL with err naming the file. */
void *map_file(const char *path, size_t size, int create, char *err, size_t errlen);

/* Maps a ring file with libpmem (durable mode): an existing one must be
 * size bytes, a missing one is created.  *existed says whether the file
 * was already there (a previous server's ring, to recover); *is_pmem
 * whether the mapping is real persistent memory. */
void *pmap_file(const char *path, size_t size, int *existed, int *is_pmem, char *err, size_t errlen);

/* Makes [p, p+len) persistent: pmem_persist on real PM, msync elsewhere. */
static inline void persist(const void *p, size_t len, int is_pmem)
{
	if (is_pmem)
		pmem_persist(p, len);
	else
		pmem_msync(p, len);
}

/* Renames from over to, both in dir, then syncs dir so that the rename
 * survives a power loss; 0, or -1 with err naming the file and the fix. */
int replace_file(const char *from, const char *to, const char *dir, char *err, size_t errlen);

#endif
