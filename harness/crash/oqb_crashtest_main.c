/* oqb-crashtest: the same as `oqb crashtest` (harness/crash/crashtest.c). */
#include "crashtest.h"

int main(int argc, char **argv)
{
	return crashtest_main(argc, argv);
}
