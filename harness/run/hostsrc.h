/*
 * hostsrc.h - hosts from the engine that already knows them.
 *
 * `"hosts": {"from": "slurm"}` takes the nodes of the Slurm allocation the
 * driver runs in (SLURM_JOB_NODELIST, expanded as Slurm expands it);
 * `"hosts": {"from": "cloudlab", "manifest": FILE}` takes the nodes of a
 * CloudLab/Emulab experiment from its manifest RSpec, with each node's
 * address on the experiment LAN.  Either way the server runs on the first
 * node (or the node hosts.server names), the clients on the others (on
 * the server's node when there is no other, and always with transport
 * shm, which runs on one machine).  A manifest also gives verbs.addr's
 * default: the server's LAN address, the address the RDMA device owns.
 * docs/config.md ("hosts") has the syntax, docs/ci.md the CI recipes.
 */
#ifndef OQB_HOSTSRC_H
#define OQB_HOSTSRC_H

#include <stddef.h>
#include <jansson.h>

struct runconf;

/*
 * Expands a Slurm host list ("n[1-3,5],gpu[01-02]x") into a new JSON
 * array of names in Slurm's order: comma-separated items, each bracket a
 * set of numbers and ranges, a range keeping the width of its lower end
 * ("[08-10]": 08, 09, 10), several brackets in one item multiplied out.
 * At most max names.  NULL with err naming the list and what is wrong.
 */
json_t *hostsrc_slurm_list(const char *list, size_t max, char *err, size_t errlen);

/*
 * The nodes of the manifest RSpec at path that sit on the experiment LAN
 * `lan` (a <link> client_id; NULL: the manifest's only link), in the
 * manifest's order: a new JSON array of {"node": client_id, "host": the
 * name the launcher reaches it by (its <host name>, else its login
 * hostname), "addr": its address on that LAN}.  NULL with err naming the
 * file, the element and the fix.
 */
json_t *hostsrc_manifest(const char *path, const char *lan, char *err, size_t errlen);

/*
 * hosts.from: fills rc's server_host, client_hosts, launcher default and
 * lan_addr from the source the hosts object h names (the strings live in
 * rc->hosts_from).  0, or -1 with err.
 */
int hostsrc_resolve(struct runconf *rc, const json_t *h, char *err, size_t errlen);

#endif
