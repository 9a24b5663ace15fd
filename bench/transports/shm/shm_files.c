/*
 * shm_files.c - the shared-memory transport's files: mapping them (plain,
 * or with libpmem for durable rings) and replacing one atomically
 * (shm_files.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libpmem.h>

#include "shm_files.h"

void *map_file(const char *path, size_t size, int create, char *err, size_t errlen)
{
	int fd = open(path, create ? (O_RDWR | O_CREAT | O_EXCL) : O_RDWR, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (create && ftruncate(fd, (off_t)size) != 0) {
		snprintf(err, errlen, "%s: cannot size to %zu bytes: %s", path, size, strerror(errno));
		close(fd);
		return NULL;
	}
	if (!create) {
		struct stat st;
		if (fstat(fd, &st) != 0 || (size_t)st.st_size < size) {
			snprintf(err, errlen, "%s: file is shorter than the %zu bytes this build expects; "
				 "start the client and the server from the same oqbench build", path, size);
			close(fd);
			return NULL;
		}
	}
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int e = errno;
	close(fd);
	if (p == MAP_FAILED) {
		snprintf(err, errlen, "%s: mmap of %zu bytes: %s", path, size, strerror(e));
		return NULL;
	}
	return p;
}

void *pmap_file(const char *path, size_t size, int *existed, int *is_pmem,
		       char *err, size_t errlen)
{
	size_t mapped = 0;
	struct stat st;
	*existed = stat(path, &st) == 0;
	if (*existed && (size_t)st.st_size != size) {
		snprintf(err, errlen, "%s: ring file is %lld bytes, but this server's --ring-slots/--slot-size "
			 "need %zu; start with the geometry it was written with, or remove the file to "
			 "discard the requests it holds", path, (long long)st.st_size, size);
		return NULL;
	}
	void *p = pmem_map_file(path, *existed ? 0 : size, *existed ? 0 : PMEM_FILE_CREATE, 0600,
				&mapped, is_pmem);
	if (!p) {
		snprintf(err, errlen, "%s: pmem_map_file: %s", path, pmem_errormsg());
		return NULL;
	}
	if (mapped < size) {
		pmem_unmap(p, mapped);
		snprintf(err, errlen, "%s: mapped %zu bytes, need %zu", path, mapped, size);
		return NULL;
	}
	return p;
}

int replace_file(const char *from, const char *to, const char *dir, char *err, size_t errlen)
{
	if (rename(from, to) != 0) {
		snprintf(err, errlen, "%s: cannot replace it with %s: %s; check that %s is writable",
			 to, from, strerror(errno), dir);
		return -1;
	}
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	if (fd < 0 || fsync(fd) != 0) {
		snprintf(err, errlen, "%s: cannot sync the directory after replacing %s: %s; check that "
			 "its file system supports fsync", dir, to, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}
