/*
 * oqb_tgap_main.c - bin/oqb-tgap: the `oqb tgap` command on its own (the
 * driver's `oqb` binary dispatches `tgap` to the same tgap_main).
 */
#include "tgap.h"

int main(int argc, char **argv)
{
	return tgap_main(argc, argv);
}
