/* Callgrind's client requests, for bench/i18n_bench.py --instructions: the bench
   loads this library with ctypes and marks where a request starts and ends, so
   callgrind counts the instructions of the requests alone (not of Django's start,
   the warm-up rounds or the bench's own bookkeeping). Outside valgrind every call
   is a no-op. */
#include <valgrind/callgrind.h>

void marks_start_instrumentation(void) { CALLGRIND_START_INSTRUMENTATION; }

void marks_zero(void) { CALLGRIND_ZERO_STATS; }

void marks_dump(const char *name) { CALLGRIND_DUMP_STATS_AT(name); }
