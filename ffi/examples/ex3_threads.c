/* Example 3: call one compiled filter from several pthreads, each with its own context.
 *
 * The compiled callback is reentrant: threads may share one user_data. Giving each its own
 * context (ndjit_context_new) keeps their failure records apart: here the last thread makes one
 * bad call, and only its context reports it.
 */
#include <ndjit.h>
#include <pthread.h>
#include <stdio.h>

#define N 4096
#define WIN 5
#define THREADS 4

static double signal[N + WIN - 1];
static double result[N];

struct job {
    ndjit_callback cb;
    ndjit_context *ctx;
    int begin, end;
    int bad_call; /* make one call with a buffer too short for the filter */
    int failed;
};

static void *work(void *arg) {
    struct job *j = arg;
    void *user_data = ndjit_context_user_data(j->ctx);
    for (int i = j->begin; i < j->end; i++) {
        double buf[WIN];
        for (int k = 0; k < WIN; k++) buf[k] = signal[i + k];
        if (!j->cb(buf, WIN, &result[i], user_data)) j->failed++;
    }
    if (j->bad_call) {
        double buf[2] = {1, 2}, out = 0;
        if (!j->cb(buf, 2, &out, user_data)) j->failed++;
    }
    return NULL;
}

int main(void) {
    ndjit_error *err = NULL;
    for (int i = 0; i < N + WIN - 1; i++) signal[i] = (double)((i * 7919) % 1000) / 10.0;

    /* A median with a centre check: x[2] fails on a buffer of 2 values. */
    ndjit_filter *f = NULL;
    const char *src =
        "def despike(x):\n"
        "    med = np.median(x)\n"
        "    return med if abs(x[2] - med) > 20 else x[2]\n";
    if (ndjit_filter_compile(src, NULL, WIN, &f, &err)) {
        fprintf(stderr, "%s\n", ndjit_error_text(err));
        ndjit_error_free(err);
        return 1;
    }

    pthread_t tid[THREADS];
    struct job jobs[THREADS];
    for (int t = 0; t < THREADS; t++) {
        jobs[t] = (struct job){.cb = ndjit_filter_callback(f), .begin = t * N / THREADS,
                               .end = (t + 1) * N / THREADS, .bad_call = t == THREADS - 1};
        if (ndjit_context_new(f, &jobs[t].ctx, &err)) {
            fprintf(stderr, "%s\n", ndjit_error_text(err));
            ndjit_error_free(err);
            return 1;
        }
    }
    /* Contexts keep the code alive: the filter handle may go now. */
    ndjit_filter_free(f);

    for (int t = 0; t < THREADS; t++) pthread_create(&tid[t], NULL, work, &jobs[t]);
    for (int t = 0; t < THREADS; t++) pthread_join(tid[t], NULL);

    for (int t = 0; t < THREADS; t++) {
        ndjit_status st = ndjit_context_failure(jobs[t].ctx, &err);
        if (st == NDJIT_OK) {
            printf("thread %d: %d failed calls, no failure recorded\n", t, jobs[t].failed);
        } else {
            printf("thread %d: %d failed calls, %s at %u:%u: %s\n", t, jobs[t].failed, ndjit_error_kind(err),
                   ndjit_error_line(err), ndjit_error_column(err), ndjit_error_message(err));
            ndjit_error_free(err);
        }
        ndjit_context_free(jobs[t].ctx);
    }
    double sum = 0;
    for (int i = 0; i < N; i++) sum += result[i];
    printf("sum %.17g\n", sum);
    for (int i = 0; i < N; i += N / 8) printf("result[%d] = %.17g\n", i, result[i]);
    return 0;
}
