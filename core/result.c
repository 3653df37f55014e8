/*
 * result — what a job comes to (struct dump_result): its refusal or
 * failure line, its log lines waiting for the loop, its body's release.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "reason.h"
#include "result.h"

/* A failure's reason: a disk that filled is one of its own (HTTP's 503,
 * as for the disk guard). */
enum core_reason dump_fail_why(int e)
{
	return e == ENOSPC ? REASON_NO_SPACE : REASON_FAILED;
}

/* Fill a refusal or failure: its reason, its errno and its line. */
void dump_why(struct dump_result *r, enum dump_status s, enum core_reason why,
    int err, const char *fmt, ...)
{
	va_list ap;

	r->status = s;
	r->why = why;
	r->err = err;
	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
}

/* A job's log sink: lines wait in the result for the loop. */
void dump_log(void *arg, int level, const char *msg)
{
	struct dump_result *r = arg;
	size_t n = strlen(msg);

	if (r->loglen + n + 2 >= sizeof(r->log))
		return; /* the first lines say enough */
	r->log[r->loglen++] = (char)('0' + level);
	memcpy(r->log + r->loglen, msg, n);
	r->loglen += n;
	r->log[r->loglen++] = '\n';
	r->log[r->loglen] = '\0';
}

void dump_result_release(struct dump_result *r)
{
	if (r->body && r->body_fd != -1)
		close(r->body_fd);
	r->body = 0;
	r->body_fd = -1;
}

/* jmfp's path, or a view that keeps its dump (jmdf). */
int dump_keeps(const struct dump_result *r)
{
	return r->answer == DUMP_ANSWER_PATH ||
	    (r->answer == DUMP_ANSWER_VIEW && views[r->view].keeps);
}
