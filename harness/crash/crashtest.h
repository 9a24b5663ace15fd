/*
 * crashtest.h - `oqb crashtest CONFIG`: kill a durable oq server over and
 * over under a write-heavy load and prove that no committed put is lost.
 */
#ifndef OQB_CRASHTEST_H
#define OQB_CRASHTEST_H

int crashtest_main(int argc, char **argv);

#endif
