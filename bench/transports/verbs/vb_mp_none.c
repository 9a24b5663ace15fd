/*
 * vb_mp_none.c - recv_mode mp in a build without MLNX_OFED's experimental
 * verbs: vb_mp_hooks is NULL, and the server refuses --recv-mode mp with
 * what it needs (vb_srv.c, parse_recv_mode).
 *
 * Compiled in every build.  The Makefile compiles vb_mp_exp.c, which
 * defines vb_mp_hooks for real, only with HAVE_VERBS_EXP=1, and passes
 * -DOQB_HAVE_VERBS_EXP=1 exactly then; so exactly one of the two files
 * defines the symbol, and nothing else in this folder needs to know which
 * build it is in.  The verbs suite checks the refusal (rxe under Debian's
 * rdma-core has no experimental verbs).
 */
#include "vb_internal.h"

#if !OQB_HAVE_VERBS_EXP
const struct vb_recv_hooks *const vb_mp_hooks = NULL;
#endif
