/*
 * rdb_facts.c - the facts of rdb_facts.h, found out, never assumed.
 *
 * Version: RocksDB's C API has no version call, and its version.h is C++;
 * the Makefile reads ROCKSDB_MAJOR/MINOR/PATCH from that header into
 * OQB_ROCKSDB_HDR_VERSION.  The library actually loaded may differ from
 * the header, so its file is named too: dl_iterate_phdr gives the path the
 * loader used (Debian's librocksdb.so.7.8, a symlink), resolved to the
 * file (librocksdb.so.7.8.3).
 *
 * Assertions: assert() calls __assert_fail only when NDEBUG was not
 * defined at the library's build, so a librocksdb whose dynamic symbol
 * table imports __assert_fail was built with assertions; one that does not
 * was built without.  The file's .dynsym section is read for that symbol.
 * Anything that cannot be read leaves "unknown" with the reason.
 */
#if OQB_HAVE_ROCKSDB
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rdb_facts.h"

#ifndef OQB_ROCKSDB_HDR_VERSION
#define OQB_ROCKSDB_HDR_VERSION "unknown"
#endif

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char lib_path[PATH_MAX];
static char asserts[16] = "unknown";
static char how[300];

static int find_lib(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (info->dlpi_name && strstr(info->dlpi_name, "librocksdb.so")) {
		if (!realpath(info->dlpi_name, lib_path))
			snprintf(lib_path, sizeof lib_path, "%s", info->dlpi_name);
		return 1;
	}
	return 0;
}

/* 1: imports __assert_fail, 0: does not, -1: unknown (how says why). */
static int imports_assert(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = -1;
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(Elf64_Ehdr)) {
		snprintf(how, sizeof how, "cannot read the library file");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	size_t size = (size_t)st.st_size;
	const uint8_t *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		snprintf(how, sizeof how, "cannot map the library file");
		return -1;
	}
	const Elf64_Ehdr *eh = (const void *)m;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > size ||
	    (size - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum) {
		snprintf(how, sizeof how, "the library file is not a 64-bit ELF file with section headers");
		goto out;
	}
	const Elf64_Shdr *sh = (const void *)(m + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum)
			continue;
		const Elf64_Shdr *str = &sh[sh[i].sh_link];
		if (sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset || str->sh_offset > size ||
		    str->sh_size > size - str->sh_offset)
			break;
		const Elf64_Sym *sym = (const void *)(m + sh[i].sh_offset);
		const char *names = (const char *)m + str->sh_offset;
		size_t n = sh[i].sh_size / sizeof *sym;
		rc = 0;
		for (size_t k = 0; k < n; k++)
			if (sym[k].st_shndx == SHN_UNDEF && sym[k].st_name < str->sh_size &&
			    strncmp(names + sym[k].st_name, "__assert_fail", str->sh_size - sym[k].st_name) == 0) {
				rc = 1;
				break;
			}
		snprintf(how, sizeof how, "the library %s __assert_fail (what assert() calls when NDEBUG is not "
			 "defined), read from its dynamic symbol table", rc ? "imports" : "does not import");
		break;
	}
	if (rc < 0 && !how[0])
		snprintf(how, sizeof how, "the library file has no dynamic symbol table to read");
out:
	munmap((void *)m, size);
	return rc;
}

static void facts_once(void)
{
	dl_iterate_phdr(find_lib, NULL);
	if (!lib_path[0]) {
		snprintf(how, sizeof how, "librocksdb is not among the loaded objects (statically linked?)");
		return;
	}
	int r = imports_assert(lib_path);
	if (r >= 0)
		snprintf(asserts, sizeof asserts, "%s", r ? "on" : "off");
}

json_t *rdb_facts_json(void)
{
	pthread_once(&once, facts_once);
	const char *base = strrchr(lib_path, '/');
	return json_pack("{s:s,s:s,s:s,s:s}", "header_version", OQB_ROCKSDB_HDR_VERSION, "library",
			 base ? base + 1 : lib_path[0] ? lib_path : "unknown", "assertions", asserts,
			 "assertions_how", how);
}
#endif
