/*
 * rdb_facts.h - what the `rocksdb` back end runs on, for run.json: the
 * version of the C API header it was built against, the librocksdb file
 * the process loaded, and whether that library was built with assertions.
 */
#ifndef OQB_RDB_FACTS_H
#define OQB_RDB_FACTS_H

#include <jansson.h>

/* {"header_version", "library", "assertions": "on"|"off"|"unknown",
 *  "assertions_how"}; computed once per process.  A new reference. */
json_t *rdb_facts_json(void);

#endif
