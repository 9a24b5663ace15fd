/*
 * hostsrc.c - hosts from a Slurm allocation or a CloudLab manifest
 * (hostsrc.h).
 *
 * Slurm's host lists: items split on the commas outside brackets; a
 * bracket holds numbers and ranges split on commas; the first bracket of
 * an item is expanded and the rest of the item expanded again for each
 * value, so "r[1-2]n[1-2]" gives r1n1 r1n2 r2n1 r2n2, Slurm's order.
 *
 * The manifest is read with a small scanner, not a full XML parser: it
 * sees start tags, end tags and their attributes (the five named entities
 * and numeric ones decoded), and skips comments, processing instructions,
 * CDATA and declarations.  An RSpec manifest says everything needed in
 * attributes: <node client_id> holds <interface client_id> with <ip
 * address>, <host name> and <services><login hostname>; a <link
 * client_id> lists its <interface_ref client_id>s.  Element names are
 * compared without their namespace prefix.
 */
#include "hostsrc.h"
#include "runconf.h"
#include "conf.h"
#include "log.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_LEN 256
#define MANIFEST_MAX (16 << 20)

/* ---------------------------------------------------------------- Slurm */

static int expand_item(const char *item, size_t len, json_t *out, size_t max, const char *list, char *err,
		       size_t errlen);

/* One value v (width w, zero padded) of the bracket in item: prefix, the
 * number, then the rest of the item expanded again. */
static int expand_one(const char *item, size_t pre, unsigned long v, int w, const char *rest, size_t restlen,
		      json_t *out, size_t max, const char *list, char *err, size_t errlen)
{
	char buf[NAME_MAX_LEN * 2];
	int n = snprintf(buf, sizeof buf, "%.*s%0*lu%.*s", (int)pre, item, w, v, (int)restlen, rest);
	if (n < 0 || (size_t)n >= NAME_MAX_LEN) {
		err_set(err, errlen, "SLURM_JOB_NODELIST \"%.200s\": a node name is longer than %d characters", list,
			NAME_MAX_LEN - 1);
		return -1;
	}
	return expand_item(buf, (size_t)n, out, max, list, err, errlen);
}

static int expand_item(const char *item, size_t len, json_t *out, size_t max, const char *list, char *err,
		       size_t errlen)
{
	const char *open = memchr(item, '[', len), *close;
	if (!open) {
		if (memchr(item, ']', len)) {
			err_set(err, errlen, "SLURM_JOB_NODELIST \"%.200s\": a ']' without its '['", list);
			return -1;
		}
		if (json_array_size(out) >= max) {
			err_set(err, errlen, "SLURM_JOB_NODELIST \"%.200s\": more than %zu nodes; oqb uses at most %zu "
				"hosts (allocate fewer nodes)", list, max, max);
			return -1;
		}
		json_array_append_new(out, json_stringn(item, len));
		return 0;
	}
	close = memchr(open, ']', len - (size_t)(open - item));
	if (!close || close == open + 1 || memchr(open + 1, '[', (size_t)(close - open - 1))) {
		err_set(err, errlen, "SLURM_JOB_NODELIST \"%.200s\": %s", list,
			!close ? "a '[' without its ']'" : close == open + 1 ? "an empty '[]'" : "a '[' inside a '['");
		return -1;
	}
	size_t pre = (size_t)(open - item);
	const char *rest = close + 1;
	size_t restlen = len - (size_t)(rest - item);
	const char *p = open + 1;
	while (p < close) {
		const char *e = memchr(p, ',', (size_t)(close - p));
		if (!e)
			e = close;
		const char *dash = memchr(p, '-', (size_t)(e - p));
		const char *lo_end = dash ? dash : e;
		const char *hi = dash ? dash + 1 : p;
		unsigned long lo, hv;
		int ok = lo_end > p && e > hi;
		for (const char *q = p; ok && q < lo_end; q++)
			ok = isdigit((unsigned char)*q);
		for (const char *q = hi; ok && q < e; q++)
			ok = isdigit((unsigned char)*q);
		if (!ok || lo_end - p > 9 || e - hi > 9) {
			err_set(err, errlen, "SLURM_JOB_NODELIST \"%.200s\": \"%.*s\" in a bracket is not a number or a "
				"range of numbers (like 3 or 1-4)", list, (int)(e - p), p);
			return -1;
		}
		lo = strtoul(p, NULL, 10);
		hv = strtoul(hi, NULL, 10);
		if (hv < lo) {
			err_set(err, errlen, "SLURM_JOB_NODELIST \"%.200s\": the range \"%.*s\" runs backwards", list,
				(int)(e - p), p);
			return -1;
		}
		if (hv - lo >= max) {
			err_set(err, errlen, "SLURM_JOB_NODELIST \"%.200s\": more than %zu nodes; oqb uses at most %zu "
				"hosts (allocate fewer nodes)", list, max, max);
			return -1;
		}
		int w = (int)(lo_end - p);
		for (unsigned long v = lo; v <= hv; v++)
			if (expand_one(item, pre, v, w, rest, restlen, out, max, list, err, errlen) < 0)
				return -1;
		p = e + 1;
	}
	return 0;
}

json_t *hostsrc_slurm_list(const char *list, size_t max, char *err, size_t errlen)
{
	json_t *out = json_array();
	const char *p = list, *start = list;
	int depth = 0;

	if (!*list) {
		err_set(err, errlen, "SLURM_JOB_NODELIST is empty: run oqb inside an allocation (salloc or sbatch)");
		goto fail;
	}
	for (;; p++) {
		if (*p == '[')
			depth++;
		else if (*p == ']')
			depth--;
		if ((*p == ',' && depth == 0) || !*p) {
			if (p == start || isspace((unsigned char)*start)) {
				err_set(err, errlen, "SLURM_JOB_NODELIST \"%.200s\": an empty node name", list);
				goto fail;
			}
			if (expand_item(start, (size_t)(p - start), out, max, list, err, errlen) < 0)
				goto fail;
			start = p + 1;
		}
		if (!*p)
			break;
	}
	return out;
fail:
	json_decref(out);
	return NULL;
}

/* ---------------------------------------------------------------- XML */

struct attr {
	char name[64];
	char *value;      /* decoded, malloc'd */
};

struct tag {
	char name[64];    /* without its namespace prefix */
	int end;          /* </name> */
	int empty;        /* <name ... /> */
	struct attr attr[24];
	int nattr;
};

static void tag_clear(struct tag *t)
{
	for (int i = 0; i < t->nattr; i++)
		free(t->attr[i].value);
	t->nattr = 0;
}

static const char *tag_attr(const struct tag *t, const char *name)
{
	for (int i = 0; i < t->nattr; i++)
		if (strcmp(t->attr[i].name, name) == 0)
			return t->attr[i].value;
	return NULL;
}

/* s[0..n) with XML's entities decoded, malloc'd; NULL on a bad entity. */
static char *decode(const char *s, size_t n)
{
	static const struct { const char *e; char c; } ents[] = {
		{ "amp;", '&' }, { "lt;", '<' }, { "gt;", '>' }, { "quot;", '"' }, { "apos;", '\'' },
	};
	char *out = malloc(n + 1), *o = out;
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '&') {
			*o++ = s[i];
			continue;
		}
		size_t k, rem = n - i - 1;
		for (k = 0; k < 5; k++) {
			size_t el = strlen(ents[k].e);
			if (rem >= el && strncmp(s + i + 1, ents[k].e, el) == 0) {
				*o++ = ents[k].c;
				i += el;
				break;
			}
		}
		if (k < 5)
			continue;
		if (rem >= 3 && s[i + 1] == '#') {
			char *end;
			int hex = s[i + 2] == 'x';
			long v = strtol(s + i + 2 + hex, &end, hex ? 16 : 10);
			if (end > s + i + 2 + hex && (size_t)(end - s) < n && *end == ';' && v > 0 && v < 128) {
				*o++ = (char)v;
				i = (size_t)(end - s);
				continue;
			}
		}
		free(out);
		return NULL;
	}
	*o = '\0';
	return out;
}

/*
 * The next tag at or after *pp (text between tags is skipped).  1 with t
 * filled, 0 at the end, -1 with why set.  *line counts newlines passed.
 */
static int next_tag(const char **pp, struct tag *t, int *line, const char **why)
{
	const char *p = *pp;
	static const struct { const char *open, *close; } skips[] = {
		{ "<!--", "-->" }, { "<?", "?>" }, { "<![CDATA[", "]]>" }, { "<!", ">" },
	};

	tag_clear(t);
	for (;;) {
		while (*p && *p != '<') {
			*line += *p == '\n';
			p++;
		}
		if (!*p) {
			*pp = p;
			return 0;
		}
		size_t k;
		for (k = 0; k < 4; k++)
			if (strncmp(p, skips[k].open, strlen(skips[k].open)) == 0)
				break;
		if (k == 4)
			break;
		const char *e = strstr(p, skips[k].close);
		if (!e) {
			*why = "a comment, declaration or CDATA section is not closed";
			return -1;
		}
		for (; p < e; p++)
			*line += *p == '\n';
		p = e + strlen(skips[k].close);
	}
	p++;
	t->end = *p == '/';
	t->empty = 0;
	p += t->end;
	const char *n0 = p;
	while (*p && !isspace((unsigned char)*p) && *p != '>' && *p != '/')
		p++;
	if (p == n0) {
		*why = "a '<' that starts no element";
		return -1;
	}
	const char *colon = memchr(n0, ':', (size_t)(p - n0));
	const char *ln = colon ? colon + 1 : n0;
	snprintf(t->name, sizeof t->name, "%.*s", (int)(p - ln), ln);
	for (;;) {
		while (isspace((unsigned char)*p)) {
			*line += *p == '\n';
			p++;
		}
		if (*p == '>') {
			p++;
			break;
		}
		if (p[0] == '/' && p[1] == '>') {
			t->empty = 1;
			p += 2;
			break;
		}
		if (!*p) {
			*why = "the file ends inside a tag";
			return -1;
		}
		const char *a0 = p;
		while (*p && *p != '=' && !isspace((unsigned char)*p) && *p != '>' && *p != '/')
			p++;
		const char *a1 = p;
		while (isspace((unsigned char)*p))
			p++;
		if (a1 == a0 || *p != '=') {
			*why = "an attribute without '=\"value\"'";
			return -1;
		}
		p++;
		while (isspace((unsigned char)*p))
			p++;
		char q = *p;
		if (q != '"' && q != '\'') {
			*why = "an attribute value not in quotes";
			return -1;
		}
		const char *v0 = ++p, *v1 = strchr(p, q);
		if (!v1) {
			*why = "an attribute value whose quote is not closed";
			return -1;
		}
		if (t->nattr < (int)(sizeof t->attr / sizeof t->attr[0])) {
			struct attr *a = &t->attr[t->nattr];
			colon = memchr(a0, ':', (size_t)(a1 - a0));
			snprintf(a->name, sizeof a->name, "%.*s", (int)(a1 - (colon ? colon + 1 : a0)), colon ? colon + 1 : a0);
			a->value = decode(v0, (size_t)(v1 - v0));
			if (!a->value) {
				*why = "an attribute value with an unknown entity (&...;)";
				return -1;
			}
			t->nattr++;
		}
		for (; p < v1; p++)
			*line += *p == '\n';
		p = v1 + 1;
	}
	*pp = p;
	return 1;
}

/* ---------------------------------------------------------------- manifest */

/*
 * What the scan keeps: nodes [{node, host, login, ifaces: {iface: ip}}] and
 * links [{link, refs: [iface]}], in the file's order.
 */
static int scan_manifest(const char *path, const char *text, json_t *nodes, json_t *links, int *is_request,
			 char *err, size_t errlen)
{
	struct tag t = { 0 };
	const char *p = text, *why = NULL;
	int line = 1, rspec = 0, r;
	json_t *node = NULL, *link = NULL;
	char iface[NAME_MAX_LEN] = "";

	while ((r = next_tag(&p, &t, &line, &why)) > 0) {
		const char *n = t.name;
		if (strcmp(n, "rspec") == 0 && !t.end) {
			const char *type = tag_attr(&t, "type");
			rspec = 1;
			*is_request = type && strcmp(type, "request") == 0;
		} else if (strcmp(n, "node") == 0) {
			if (t.end) {
				node = NULL;
				continue;
			}
			const char *id = tag_attr(&t, "client_id");
			if (!id || !*id) {
				err_set(err, errlen, "%s:%d: a <node> without client_id: is this an RSpec manifest?", path, line);
				goto fail;
			}
			node = json_pack("{s:s, s:o}", "node", id, "ifaces", json_object());
			json_array_append_new(nodes, node);
			if (t.empty)
				node = NULL;
		} else if (strcmp(n, "interface") == 0 && node) {
			if (t.end) {
				iface[0] = '\0';
				continue;
			}
			const char *id = tag_attr(&t, "client_id");
			snprintf(iface, sizeof iface, "%s", id ? id : "");
			if (t.empty)
				iface[0] = '\0';
		} else if (strcmp(n, "ip") == 0 && node && iface[0] && !t.end) {
			const char *a = tag_attr(&t, "address");
			if (a && *a)
				json_object_set_new(json_object_get(node, "ifaces"), iface, json_string(a));
		} else if (strcmp(n, "host") == 0 && node && !t.end) {
			const char *h = tag_attr(&t, "name");
			if (h && *h)
				json_object_set_new(node, "host", json_string(h));
		} else if (strcmp(n, "login") == 0 && node && !t.end) {
			const char *h = tag_attr(&t, "hostname");
			if (h && *h && !json_object_get(node, "login"))
				json_object_set_new(node, "login", json_string(h));
		} else if (strcmp(n, "link") == 0) {
			if (t.end) {
				link = NULL;
				continue;
			}
			const char *id = tag_attr(&t, "client_id");
			link = json_pack("{s:s, s:[]}", "link", id ? id : "", "refs");
			json_array_append_new(links, link);
			if (t.empty)
				link = NULL;
		} else if (strcmp(n, "interface_ref") == 0 && link && !t.end) {
			const char *id = tag_attr(&t, "client_id");
			if (id)
				json_array_append_new(json_object_get(link, "refs"), json_string(id));
		}
	}
	if (r < 0) {
		err_set(err, errlen, "%s:%d: not well-formed XML: %s; give the manifest as the testbed wrote it", path,
			line, why);
		goto fail;
	}
	if (!rspec) {
		err_set(err, errlen, "%s: no <rspec> element: not an RSpec manifest; save the experiment's manifest "
			"(CloudLab: the experiment page's \"Manifest\" tab; Emulab: geni-get manifest on a node)", path);
		goto fail;
	}
	tag_clear(&t);
	return 0;
fail:
	tag_clear(&t);
	return -1;
}

json_t *hostsrc_manifest(const char *path, const char *lan, char *err, size_t errlen)
{
	json_t *nodes = json_array(), *links = json_array(), *out = NULL, *link = NULL, *v;
	char *text = NULL;
	size_t len = 0, i;
	int is_request = 0;
	FILE *f = fopen(path, "r");

	if (!f) {
		err_set(err, errlen, "%s: cannot read the manifest: %s (hosts.manifest, read from the directory "
			"oqb runs in)", path, strerror(errno));
		goto out;
	}
	text = malloc(MANIFEST_MAX + 1);
	if (text)
		len = fread(text, 1, MANIFEST_MAX + 1, f);
	fclose(f);
	if (!text || len > MANIFEST_MAX) {
		err_set(err, errlen, "%s: %s", path, text ? "larger than 16 MiB: not a manifest" : "out of memory");
		goto out;
	}
	text[len] = '\0';
	if (memchr(text, '\0', len)) {
		err_set(err, errlen, "%s: holds a NUL byte: not an XML manifest", path);
		goto out;
	}
	if (scan_manifest(path, text, nodes, links, &is_request, err, errlen) < 0)
		goto out;
	if (json_array_size(nodes) == 0) {
		err_set(err, errlen, "%s: no <node> in the manifest: %s", path, is_request ?
			"it is a request RSpec; give the manifest the testbed returns once the experiment is ready" :
			"give the manifest of a running experiment");
		goto out;
	}
	if (json_array_size(links) == 0) {
		err_set(err, errlen, "%s: the manifest has no experiment LAN (no <link>): the nodes have no address "
			"for the benchmark's traffic; add a LAN joining the nodes to the profile and instantiate it "
			"again, or list hosts.server and hosts.clients and verbs.addr yourself", path);
		goto out;
	}
	if (lan) {
		json_array_foreach(links, i, v)
			if (strcmp(json_string_value(json_object_get(v, "link")), lan) == 0)
				link = v;
	} else if (json_array_size(links) == 1) {
		link = json_array_get(links, 0);
	}
	if (!link) {
		char names[1024] = "";
		size_t n = 0;
		json_array_foreach(links, i, v)
			n += (size_t)snprintf(names + n, n < sizeof names ? sizeof names - n : 0, "%s\"%s\"", i ? ", " : "",
					      json_string_value(json_object_get(v, "link")));
		if (lan)
			err_set(err, errlen, "%s: no <link client_id=\"%s\"> (hosts.lan); the manifest's links: %s", path,
				lan, names);
		else
			err_set(err, errlen, "%s: the manifest has %zu links (%s): set hosts.lan to the one the "
				"benchmark's traffic should use", path, json_array_size(links), names);
		goto out;
	}
	out = json_array();
	json_array_foreach(nodes, i, v) {
		const json_t *ifaces = json_object_get(v, "ifaces"), *r;
		const char *addr = NULL, *node = json_string_value(json_object_get(v, "node"));
		size_t k;
		json_array_foreach(json_object_get(link, "refs"), k, r) {
			const char *ip = json_string_value(json_object_get(ifaces, json_string_value(r)));
			if (ip && !addr)
				addr = ip;
		}
		if (!addr)
			continue;   /* not on this LAN */
		const json_t *host = json_object_get(v, "host");
		if (!host)
			host = json_object_get(v, "login");
		if (!host) {
			err_set(err, errlen, "%s: node \"%s\" has no <host name> and no <login hostname>: the launcher "
				"has no name to reach it by; give the manifest of a running experiment", path, node);
			json_decref(out);
			out = NULL;
			goto out;
		}
		json_array_append_new(out, json_pack("{s:s, s:O, s:s}", "node", node, "host", host, "addr", addr));
	}
	if (json_array_size(out) == 0) {
		err_set(err, errlen, "%s: no node has an address on the LAN \"%s\" (no <ip> on an interface the link "
			"lists): give the manifest of a running experiment, or another hosts.lan", path,
			json_string_value(json_object_get(link, "link")));
		json_decref(out);
		out = NULL;
	}
out:
	free(text);
	json_decref(nodes);
	json_decref(links);
	return out;
}

/* ---------------------------------------------------------------- resolve */

int hostsrc_resolve(struct runconf *rc, const json_t *h, char *err, size_t errlen)
{
	const char *from = conf_str(h, "from", NULL), *want = conf_str(h, "server", NULL);
	const char *manifest = conf_str(h, "manifest", NULL), *lan = conf_str(h, "lan", NULL);
	json_t *nodes = NULL, *v;
	char e[1024];
	size_t i, srv = 0, n;
	int cloudlab = strcmp(from, "cloudlab") == 0;

	if (json_object_get(h, "clients")) {
		err_set(err, errlen, "%s: hosts.clients is set and hosts.from is \"%s\", which names the clients; "
			"remove one of them", rc->path, from);
		return -1;
	}
	if (cloudlab && !manifest) {
		err_set(err, errlen, "%s: hosts.manifest: missing; hosts.from \"cloudlab\" reads the experiment's "
			"manifest RSpec: give its file", rc->path);
		return -1;
	}
	if (!cloudlab && (manifest || lan)) {
		err_set(err, errlen, "%s: hosts.%s: only used with hosts.from \"cloudlab\"; remove it", rc->path,
			manifest ? "manifest" : "lan");
		return -1;
	}
	if (cloudlab) {
		nodes = hostsrc_manifest(manifest, lan, e, sizeof e);
		if (!nodes) {
			err_set(err, errlen, "%s: hosts.manifest: %s", rc->path, e);
			return -1;
		}
	} else {
		const char *list = getenv("SLURM_JOB_NODELIST");
		if (!list) {
			err_set(err, errlen, "%s: hosts.from is \"slurm\" but SLURM_JOB_NODELIST is not set: run oqb "
				"inside an allocation (salloc or sbatch), or list hosts.server and hosts.clients", rc->path);
			return -1;
		}
		json_t *names = hostsrc_slurm_list(list, RUNCONF_MAX_HOSTS, e, sizeof e);
		if (!names) {
			err_set(err, errlen, "%s: hosts.from \"slurm\": %s", rc->path, e);
			return -1;
		}
		nodes = json_array();
		json_array_foreach(names, i, v)
			json_array_append_new(nodes, json_pack("{s:O, s:O}", "node", v, "host", v));
		json_decref(names);
	}
	n = json_array_size(nodes);
	if (want) {
		srv = n;
		json_array_foreach(nodes, i, v)
			if (srv == n && (strcmp(json_string_value(json_object_get(v, "node")), want) == 0 ||
					 strcmp(json_string_value(json_object_get(v, "host")), want) == 0))
				srv = i;
		if (srv == n) {
			char names[1024] = "";
			size_t k = 0;
			json_array_foreach(nodes, i, v)
				k += (size_t)snprintf(names + k, k < sizeof names ? sizeof names - k : 0, "%s%s", i ? " " : "",
						      json_string_value(json_object_get(v, "node")));
			err_set(err, errlen, "%s: hosts.server \"%s\" is not a node of %s (%s): name one of them, or leave "
				"hosts.server out for the first", rc->path, want, cloudlab ? manifest : "the allocation", names);
			json_decref(nodes);
			return -1;
		}
	}
	rc->hosts_from = nodes;
	v = json_array_get(nodes, srv);
	rc->server_host = json_string_value(json_object_get(v, "host"));
	rc->lan_addr = json_string_value(json_object_get(v, "addr"));
	rc->nclient_hosts = 0;
	if (strcmp(rc->transport, "shm") != 0)
		json_array_foreach(nodes, i, v)
			if (i != srv)
				rc->client_hosts[rc->nclient_hosts++] = json_string_value(json_object_get(v, "host"));
	if (rc->nclient_hosts == 0)
		rc->client_hosts[rc->nclient_hosts++] = rc->server_host;
	rc->launcher = conf_str(h, "launcher", cloudlab ? "ssh" : "slurm");
	return 0;
}
