/* Every error path of the C API: each call below is given a bad argument and must return the
 * documented status with an error object (never crash, abort or touch memory it was not given).
 * Prints one line per check; exits 1 if any check fails. Run under valgrind by the test suite.
 */
#include <ndjit.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
static int checks = 0;

/* Checks a status and the error object that came with it, then frees the error. */
static void expect(const char *what, ndjit_status got, ndjit_status want, ndjit_error **err) {
    checks++;
    int ok = got == want;
    if (want != NDJIT_OK && *err == NULL) ok = 0;           /* failures must come with an error */
    if (want == NDJIT_OK && *err != NULL) ok = 0;           /* successes must clear *err */
    if (*err && ndjit_error_status(*err) != got) ok = 0;    /* the error repeats the status */
    if (*err && strlen(ndjit_error_message(*err)) == 0) ok = 0;
    printf("%s %-44s %-26s %s\n", ok ? "ok  " : "FAIL", what, ndjit_status_name(got),
           *err ? ndjit_error_message(*err) : "");
    if (!ok) {
        printf("     wanted %s\n", ndjit_status_name(want));
        failures++;
    }
    ndjit_error_free(*err);
    *err = NULL;
}

/* The same, plus the source position of a compile or run-time error. */
static void expect_at(const char *what, ndjit_status got, ndjit_status want, unsigned line,
                      unsigned column, ndjit_error **err) {
    if (*err && (ndjit_error_line(*err) != line || ndjit_error_column(*err) != column)) {
        printf("FAIL %s: at %u:%u, wanted %u:%u\n%s\n", what, ndjit_error_line(*err),
               ndjit_error_column(*err), line, column, ndjit_error_text(*err));
        failures++;
    }
    expect(what, got, want, err);
}

static void expect_true(const char *what, int cond) {
    checks++;
    printf("%s %s\n", cond ? "ok  " : "FAIL", what);
    if (!cond) failures++;
}

/* A poll hook that asks to stop from its fourth poll on, and counts its polls. */
static atomic_int polls;
static int stop_from_the_fourth_poll(void *user_data) {
    return user_data == (void *)&polls && atomic_fetch_add(&polls, 1) >= 3;
}

/* Stopping long calls: a filter that never returns, stopped by the poll hook. */
static void check_poll_hook(const ndjit_array *in, const ndjit_array *out) {
    ndjit_error *err = NULL;
    ndjit_filter *loop = NULL;
    expect("compile: an endless loop", ndjit_filter_compile("def f(x):\n    while True:\n        pass\n",
           NULL, 0, &loop, &err), NDJIT_OK, &err);
    ndjit_set_poll_hook(stop_from_the_fourth_poll, &polls);
    double buf[3] = {1, 2, 3}, r = 42;
    ndjit_status s = ndjit_filter_call(loop, buf, 3, &r, &err);
    expect_true("call: the hook's stop is a KeyboardInterrupt, the result untouched",
                err && strcmp(ndjit_error_kind(err), "KeyboardInterrupt") == 0 && r == 42 && polls >= 4);
    expect("call: stopped by the poll hook", s, NDJIT_ERR_RUNTIME, &err);
    ndjit_options *o = ndjit_options_new();
    intptr_t size3[2] = {3, 3};
    ndjit_options_set_size(o, size3, 2, NULL);
    ndjit_options_set_threads(o, 2, NULL);
    atomic_store(&polls, 0);
    s = ndjit_generic_filter(loop, in, out, o, &err);
    expect_true("driver: the hook's stop is a KeyboardInterrupt",
                err && strcmp(ndjit_error_kind(err), "KeyboardInterrupt") == 0);
    expect("driver on two threads: stopped by the poll hook", s, NDJIT_ERR_RUNTIME, &err);
    ndjit_set_poll_hook(NULL, NULL);
    ndjit_filter *plain = NULL;
    ndjit_filter_compile("x[0] + 1", NULL, 0, &plain, NULL);
    expect("call: no hook, no stop", ndjit_filter_call(plain, buf, 3, &r, &err), NDJIT_OK, &err);
    expect_true("call: no hook, the value", r == 2);
    ndjit_filter_free(plain);
    ndjit_options_free(o);
    ndjit_filter_free(loop);
}

/* A chained comparison is as deep as it is long once lowered: past the nesting limit it is a
 * compile error, not a stack overflow. */
static void check_long_chain(void) {
    ndjit_error *err = NULL;
    ndjit_filter *f = NULL;
    const char *link = "x[0] < ";
    size_t n = 4000, len = strlen(link);
    char *src = malloc(n * len + 8);
    for (size_t i = 0; i < n; i++) memcpy(src + i * len, link, len);
    strcpy(src + n * len, "x[0]");
    expect("compile: 4000 chained comparisons", ndjit_filter_compile(src, NULL, 0, &f, &err),
           NDJIT_ERR_COMPILE, &err);
    free(src);
    ndjit_filter_free(f);
}

int main(void) {
    ndjit_error *err = NULL;
    const char *bad_utf8 = "x[0] + \xff\xfe";

    /* --- errors and versions ------------------------------------------------------------- */
    expect_true("error accessors accept NULL",
                ndjit_error_status(NULL) == NDJIT_ERR_NULL && strcmp(ndjit_error_message(NULL), "") == 0 &&
                    strcmp(ndjit_error_text(NULL), "") == 0 && strcmp(ndjit_error_kind(NULL), "") == 0 &&
                    ndjit_error_line(NULL) == 0 && ndjit_error_column(NULL) == 0);
    expect_true("unknown status name", strcmp(ndjit_status_name(12345), "NDJIT_UNKNOWN_STATUS") == 0);
    expect_true("negative status name", strcmp(ndjit_status_name(-1), "NDJIT_UNKNOWN_STATUS") == 0);
    expect_true("version number matches the header",
                ndjit_version_number() == NDJIT_VERSION_MAJOR * 10000 + NDJIT_VERSION_MINOR * 100 + NDJIT_VERSION_PATCH);

    /* --- bindings ------------------------------------------------------------------------ */
    ndjit_bindings *b = ndjit_bindings_new();
    const double vals[2] = {1, 2};
    expect("set_double: NULL bindings", ndjit_bindings_set_double(NULL, "k", 1, &err), NDJIT_ERR_NULL, &err);
    expect("set_double: NULL name", ndjit_bindings_set_double(b, NULL, 1, &err), NDJIT_ERR_NULL, &err);
    expect("set_double: invalid UTF-8 name", ndjit_bindings_set_double(b, "\xc3(", 1, &err), NDJIT_ERR_UTF8, &err);
    expect("set_double: name not an identifier", ndjit_bindings_set_double(b, "2k", 1, &err),
           NDJIT_ERR_INVALID_ARGUMENT, &err);
    expect("set_double: empty name", ndjit_bindings_set_double(b, "", 1, &err), NDJIT_ERR_INVALID_ARGUMENT, &err);
    expect("set_int: NULL bindings", ndjit_bindings_set_int(NULL, "k", 1, &err), NDJIT_ERR_NULL, &err);
    expect("set_array: negative length", ndjit_bindings_set_array(b, "w", vals, -1, &err),
           NDJIT_ERR_INVALID_ARGUMENT, &err);
    expect("set_array: NULL values, length 2", ndjit_bindings_set_array(b, "w", NULL, 2, &err), NDJIT_ERR_NULL, &err);
    expect("set_array: NULL values, length 0", ndjit_bindings_set_array(b, "w", NULL, 0, &err), NDJIT_OK, &err);
    expect("set_array: ok", ndjit_bindings_set_array(b, "w", vals, 2, &err), NDJIT_OK, &err);
    expect("set_int: ok", ndjit_bindings_set_int(b, "k", 1, &err), NDJIT_OK, &err);
    expect_true("status only (error NULL)", ndjit_bindings_set_double(NULL, "k", 1, NULL) == NDJIT_ERR_NULL);

    /* --- compiling ----------------------------------------------------------------------- */
    /* Run-time errors below point at the index `k` in `x[k] * w[1]`: line 1, column 3. */
    ndjit_filter *f = (ndjit_filter *)&err; /* garbage that must be overwritten with NULL */
    expect("compile: NULL source", ndjit_filter_compile(NULL, NULL, 0, &f, &err), NDJIT_ERR_NULL, &err);
    expect_true("compile: *out is NULL after a failure", f == NULL);
    expect("compile: NULL out", ndjit_filter_compile("x[0]", NULL, 0, NULL, &err), NDJIT_ERR_NULL, &err);
    expect("compile: invalid UTF-8 source", ndjit_filter_compile(bad_utf8, NULL, 0, &f, &err), NDJIT_ERR_UTF8, &err);
    expect("compile: negative filter_size", ndjit_filter_compile("x[0]", NULL, -3, &f, &err),
           NDJIT_ERR_INVALID_ARGUMENT, &err);
    expect_at("compile: syntax error", ndjit_filter_compile("max(x", NULL, 0, &f, &err), NDJIT_ERR_COMPILE, 1, 6, &err);
    expect_at("compile: unknown name", ndjit_filter_compile("x[0] * q", NULL, 0, &f, &err), NDJIT_ERR_COMPILE, 1, 8, &err);
    expect_at("compile: unsupported, line 2",
              ndjit_filter_compile("def f(x):\n    print(x)\n    return 1.0\n", NULL, 0, &f, &err), NDJIT_ERR_COMPILE,
              2, 5, &err);
    expect("compile: float index", ndjit_filter_compile("x[w[0]]", b, 0, &f, &err), NDJIT_ERR_COMPILE, &err);
    expect_true("compile: error text has a caret",
                ndjit_filter_compile("x[0] * q", NULL, 0, &f, &err) == NDJIT_ERR_COMPILE &&
                    strstr(ndjit_error_text(err), "^") != NULL);
    ndjit_error_free(err);
    err = NULL;
    expect("compile: ok with bindings", ndjit_filter_compile("x[k] * w[1]", b, 3, &f, &err), NDJIT_OK, &err);

    /* --- rebinding ----------------------------------------------------------------------- */
    ndjit_bindings *wrong = ndjit_bindings_new();
    ndjit_bindings_set_double(wrong, "w", 2.0, NULL); /* w was compiled as an array */
    ndjit_filter *g = (ndjit_filter *)&err;
    expect("with_bindings: array -> double", ndjit_filter_with_bindings(f, wrong, &g, &err), NDJIT_ERR_BINDING, &err);
    expect_true("with_bindings: *out is NULL after a failure", g == NULL);
    ndjit_bindings_free(wrong);
    wrong = ndjit_bindings_new();
    ndjit_bindings_set_double(wrong, "k", 1.5, NULL); /* k was compiled as an int */
    expect("with_bindings: int -> double", ndjit_filter_with_bindings(f, wrong, &g, &err), NDJIT_ERR_BINDING, &err);
    ndjit_bindings_free(wrong);
    expect("with_bindings: NULL filter", ndjit_filter_with_bindings(NULL, b, &g, &err), NDJIT_ERR_NULL, &err);
    expect("with_bindings: NULL out", ndjit_filter_with_bindings(f, b, NULL, &err), NDJIT_ERR_NULL, &err);
    expect("with_bindings: NULL bindings is a copy", ndjit_filter_with_bindings(f, NULL, &g, &err), NDJIT_OK, &err);
    ndjit_filter_free(g);

    /* --- evaluating ---------------------------------------------------------------------- */
    double buf[3] = {10, 20, 30}, out = -1;
    expect("call: NULL filter", ndjit_filter_call(NULL, buf, 3, &out, &err), NDJIT_ERR_NULL, &err);
    expect("call: NULL buffer", ndjit_filter_call(f, NULL, 3, &out, &err), NDJIT_ERR_NULL, &err);
    expect("call: negative size", ndjit_filter_call(f, buf, -1, &out, &err), NDJIT_ERR_INVALID_ARGUMENT, &err);
    expect("call: NULL result", ndjit_filter_call(f, buf, 3, NULL, &err), NDJIT_ERR_NULL, &err);
    expect_at("call: index out of range", ndjit_filter_call(f, buf, 1, &out, &err), NDJIT_ERR_RUNTIME, 1, 3, &err);
    expect_true("call: result untouched after a failure", out == -1);
    expect("call: ok", ndjit_filter_call(f, buf, 3, &out, &err), NDJIT_OK, &err);
    expect_true("call: value", out == 40);
    expect("call: empty buffer", ndjit_filter_call(f, NULL, 0, &out, &err), NDJIT_ERR_RUNTIME, &err);

    /* --- the callback and contexts ------------------------------------------------------- */
    expect_true("callback(NULL) is NULL", ndjit_filter_callback(NULL) == NULL);
    expect_true("user_data(NULL) is NULL", ndjit_filter_user_data(NULL) == NULL);
    ndjit_callback cb = ndjit_filter_callback(f);
    expect_true("callback fails on a short buffer", cb(buf, 1, &out, ndjit_filter_user_data(f)) == 0);
    expect_true("and keeps failing until reset", cb(buf, 3, &out, ndjit_filter_user_data(f)) == 0);
    expect_at("filter_failure reports it", ndjit_filter_failure(f, &err), NDJIT_ERR_RUNTIME, 1, 3, &err);
    expect("filter_reset", ndjit_filter_reset(f), NDJIT_OK, &err);
    expect("filter_failure after reset", ndjit_filter_failure(f, &err), NDJIT_OK, &err);
    expect("filter_failure: NULL", ndjit_filter_failure(NULL, &err), NDJIT_ERR_NULL, &err);
    expect_true("filter_reset: NULL", ndjit_filter_reset(NULL) == NDJIT_ERR_NULL);

    ndjit_context *ctx = (ndjit_context *)&err;
    expect("context_new: NULL filter", ndjit_context_new(NULL, &ctx, &err), NDJIT_ERR_NULL, &err);
    expect_true("context_new: *out is NULL after a failure", ctx == NULL);
    expect("context_new: NULL out", ndjit_context_new(f, NULL, &err), NDJIT_ERR_NULL, &err);
    expect("context_new: ok", ndjit_context_new(f, &ctx, &err), NDJIT_OK, &err);
    expect_true("context callback fails on a short buffer",
                ndjit_context_callback(ctx)(buf, 1, &out, ndjit_context_user_data(ctx)) == 0);
    expect_at("context_failure reports it", ndjit_context_failure(ctx, &err), NDJIT_ERR_RUNTIME, 1, 3, &err);
    expect("filter's own context is unaffected", ndjit_filter_failure(f, &err), NDJIT_OK, &err);
    expect("context_reset", ndjit_context_reset(ctx), NDJIT_OK, &err);
    expect("context_failure after reset", ndjit_context_failure(ctx, &err), NDJIT_OK, &err);
    expect("context_failure: NULL", ndjit_context_failure(NULL, &err), NDJIT_ERR_NULL, &err);
    expect_true("context_reset: NULL", ndjit_context_reset(NULL) == NDJIT_ERR_NULL);
    expect_true("context accessors accept NULL",
                ndjit_context_user_data(NULL) == NULL && ndjit_context_callback(NULL) == NULL);

    /* --- options ------------------------------------------------------------------------- */
    ndjit_options *o = ndjit_options_new();
    intptr_t size3[2] = {3, 3}, negative[2] = {3, -1}, origin[2] = {0, 0};
    uint8_t mask[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    expect("set_size: NULL options", ndjit_options_set_size(NULL, size3, 2, &err), NDJIT_ERR_NULL, &err);
    expect("set_size: NULL size", ndjit_options_set_size(o, NULL, 2, &err), NDJIT_ERR_NULL, &err);
    expect("set_size: negative ndim", ndjit_options_set_size(o, size3, -2, &err), NDJIT_ERR_INVALID_ARGUMENT, &err);
    expect("set_size: negative extent", ndjit_options_set_size(o, negative, 2, &err), NDJIT_ERR_INVALID_ARGUMENT, &err);
    expect("set_size: ndim 65", ndjit_options_set_size(o, size3, 65, &err), NDJIT_ERR_INVALID_ARGUMENT, &err);
    expect("set_footprint: NULL mask", ndjit_options_set_footprint(o, size3, 2, NULL, &err), NDJIT_ERR_NULL, &err);
    expect("set_footprint: negative extent", ndjit_options_set_footprint(o, negative, 2, mask, &err),
           NDJIT_ERR_INVALID_ARGUMENT, &err);
    expect("set_footprint: NULL options", ndjit_options_set_footprint(NULL, size3, 2, mask, &err), NDJIT_ERR_NULL, &err);
    expect("set_mode: unknown mode", ndjit_options_set_mode(o, 42, &err), NDJIT_ERR_UNKNOWN_ENUM, &err);
    expect("set_mode: negative mode", ndjit_options_set_mode(o, -1, &err), NDJIT_ERR_UNKNOWN_ENUM, &err);
    expect("set_mode: NULL options", ndjit_options_set_mode(NULL, NDJIT_MODE_WRAP, &err), NDJIT_ERR_NULL, &err);
    expect("set_cval: NULL options", ndjit_options_set_cval(NULL, 1.0, &err), NDJIT_ERR_NULL, &err);
    expect("set_origin: negative n", ndjit_options_set_origin(o, origin, -1, &err), NDJIT_ERR_INVALID_ARGUMENT, &err);
    expect("set_origin: NULL origin", ndjit_options_set_origin(o, NULL, 2, &err), NDJIT_ERR_NULL, &err);
    expect("set_axes: negative n", ndjit_options_set_axes(o, origin, -1, &err), NDJIT_ERR_INVALID_ARGUMENT, &err);
    expect("set_axes: NULL options", ndjit_options_set_axes(NULL, NULL, 0, &err), NDJIT_ERR_NULL, &err);
    expect("set_threads: negative", ndjit_options_set_threads(o, -4, &err), NDJIT_ERR_INVALID_ARGUMENT, &err);
    expect("set_threads: NULL options", ndjit_options_set_threads(NULL, 1, &err), NDJIT_ERR_NULL, &err);

    /* --- the driver ---------------------------------------------------------------------- */
    double img[4][5], res[4][5];
    for (int i = 0; i < 20; i++) img[i / 5][i % 5] = i;
    intptr_t shape[2] = {4, 5}, shape_t[2] = {5, 4}, neg_shape[2] = {4, -5};
    ndjit_array in = {.data = img, .nbytes = sizeof img, .dtype = NDJIT_FLOAT64, .ndim = 2, .shape = shape};
    ndjit_array outa = {.data = res, .nbytes = sizeof res, .dtype = NDJIT_FLOAT64, .ndim = 2, .shape = shape};
    ndjit_array a;
    expect("generic_filter: no footprint", ndjit_generic_filter(f, &in, &outa, o, &err), NDJIT_ERR_INVALID_ARGUMENT, &err);
    ndjit_options_set_size(o, size3, 2, NULL);
    expect("generic_filter: NULL filter", ndjit_generic_filter(NULL, &in, &outa, o, &err), NDJIT_ERR_NULL, &err);
    expect("generic_filter: NULL input", ndjit_generic_filter(f, NULL, &outa, o, &err), NDJIT_ERR_NULL, &err);
    expect("generic_filter: NULL output", ndjit_generic_filter(f, &in, NULL, o, &err), NDJIT_ERR_NULL, &err);
    expect("generic_filter: NULL options", ndjit_generic_filter(f, &in, &outa, NULL, &err), NDJIT_ERR_NULL, &err);
    a = in; a.dtype = 99;
    expect("input: unknown dtype", ndjit_generic_filter(f, &a, &outa, o, &err), NDJIT_ERR_UNKNOWN_ENUM, &err);
    a = outa; a.dtype = -1;
    expect("output: unknown dtype", ndjit_generic_filter(f, &in, &a, o, &err), NDJIT_ERR_UNKNOWN_ENUM, &err);
    a = in; a.ndim = -2;
    expect("input: negative ndim", ndjit_generic_filter(f, &a, &outa, o, &err), NDJIT_ERR_INVALID_ARGUMENT, &err);
    a = in; a.ndim = 65;
    expect("input: ndim 65", ndjit_generic_filter(f, &a, &outa, o, &err), NDJIT_ERR_INVALID_ARGUMENT, &err);
    a = in; a.shape = NULL;
    expect("input: NULL shape", ndjit_generic_filter(f, &a, &outa, o, &err), NDJIT_ERR_NULL, &err);
    a = in; a.shape = neg_shape;
    expect("input: negative extent", ndjit_generic_filter(f, &a, &outa, o, &err), NDJIT_ERR_INVALID_ARGUMENT, &err);
    a = in; a.data = NULL;
    expect("input: NULL data", ndjit_generic_filter(f, &a, &outa, o, &err), NDJIT_ERR_NULL, &err);
    a = in; a.nbytes = sizeof img - 1;
    expect("input: block one byte short", ndjit_generic_filter(f, &a, &outa, o, &err), NDJIT_ERR_SHAPE, &err);
    a = in; a.nbytes = -8;
    expect("input: negative nbytes", ndjit_generic_filter(f, &a, &outa, o, &err), NDJIT_ERR_INVALID_ARGUMENT, &err);
    a = in; a.offset = sizeof img + 8;
    expect("input: offset past the block", ndjit_generic_filter(f, &a, &outa, o, &err), NDJIT_ERR_SHAPE, &err);
    a = in; a.offset = -8;
    expect("input: negative offset", ndjit_generic_filter(f, &a, &outa, o, &err), NDJIT_ERR_INVALID_ARGUMENT, &err);
    intptr_t flipped[2] = {-40, 8};
    a = in; a.strides = flipped;
    expect("input: negative stride before the block", ndjit_generic_filter(f, &a, &outa, o, &err), NDJIT_ERR_SHAPE, &err);
    a.offset = 3 * 40;
    expect("input: flipped view with offset", ndjit_generic_filter(f, &a, &outa, o, &err), NDJIT_OK, &err);
    intptr_t huge[2] = {INTPTR_MAX, 8};
    a = in; a.strides = huge;
    expect("input: overflowing stride", ndjit_generic_filter(f, &a, &outa, o, &err), NDJIT_ERR_SHAPE, &err);
    a = outa; a.nbytes = 8;
    expect("output: block too small", ndjit_generic_filter(f, &in, &a, o, &err), NDJIT_ERR_SHAPE, &err);
    a = outa; a.shape = shape_t;
    expect("output: other shape", ndjit_generic_filter(f, &in, &a, o, &err), NDJIT_ERR_SHAPE, &err);
    a = outa; a.ndim = 1;
    expect("output: other rank", ndjit_generic_filter(f, &in, &a, o, &err), NDJIT_ERR_SHAPE, &err);

    intptr_t axes_bad[1] = {2}, axes_dup[2] = {1, -1}, origin_bad[2] = {0, 2}, size1[1] = {3};
    ndjit_options_set_axes(o, axes_bad, 1, NULL);
    ndjit_options_set_size(o, size1, 1, NULL);
    expect("axes: out of range", ndjit_generic_filter(f, &in, &outa, o, &err), NDJIT_ERR_INVALID_ARGUMENT, &err);
    ndjit_options_set_axes(o, axes_dup, 2, NULL);
    ndjit_options_set_size(o, size3, 2, NULL);
    expect("axes: repeated (1 and -1)", ndjit_generic_filter(f, &in, &outa, o, &err), NDJIT_ERR_INVALID_ARGUMENT, &err);
    ndjit_options_set_axes(o, NULL, 0, NULL);
    ndjit_options_set_size(o, size1, 1, NULL);
    expect("size: rank differs from the image", ndjit_generic_filter(f, &in, &outa, o, &err), NDJIT_ERR_SHAPE, &err);
    ndjit_options_set_footprint(o, size1, 1, mask, NULL);
    expect("footprint: rank differs", ndjit_generic_filter(f, &in, &outa, o, &err), NDJIT_ERR_SHAPE, &err);
    ndjit_options_set_size(o, size3, 2, NULL);
    ndjit_options_set_origin(o, origin_bad, 2, NULL);
    expect("origin: outside the footprint", ndjit_generic_filter(f, &in, &outa, o, &err), NDJIT_ERR_SHAPE, &err);
    ndjit_options_set_origin(o, origin_bad, 1, NULL);
    expect("origin: wrong length", ndjit_generic_filter(f, &in, &outa, o, &err), NDJIT_ERR_SHAPE, &err);
    ndjit_options_set_origin(o, NULL, 0, NULL);
    intptr_t zero_size[2] = {3, 0};
    ndjit_options_set_size(o, zero_size, 2, NULL);
    expect("size: an extent of 0", ndjit_generic_filter(f, &in, &outa, o, &err), NDJIT_ERR_SHAPE, &err);
    /* Extents whose product overflows: refused, not wrapped to an empty footprint. */
    intptr_t wraps[2] = {(intptr_t)1 << 32, (intptr_t)1 << 32}, overflows[2] = {3, (intptr_t)1 << 62};
    ndjit_options_set_size(o, wraps, 2, NULL);
    expect("size: 2^32 x 2^32", ndjit_generic_filter(f, &in, &outa, o, &err), NDJIT_ERR_INVALID_ARGUMENT, &err);
    ndjit_options_set_size(o, overflows, 2, NULL);
    expect("size: 3 x 2^62", ndjit_generic_filter(f, &in, &outa, o, &err), NDJIT_ERR_INVALID_ARGUMENT, &err);
    intptr_t size1x1[2] = {1, 1}; /* buffers of one value: x[k] with k = 1 fails */
    ndjit_options_set_size(o, size1x1, 2, NULL);
    expect_at("filter fails on a pixel", ndjit_generic_filter(f, &in, &outa, o, &err), NDJIT_ERR_RUNTIME, 1, 3, &err);
    expect_true("the driver leaves the filter's context alone",
                ndjit_filter_failure(f, NULL) == NDJIT_OK);

    /* Edge cases that are not errors. */
    ndjit_options_set_size(o, size3, 2, NULL);
    intptr_t empty_shape[2] = {0, 5};
    ndjit_array e = {.data = NULL, .nbytes = 0, .dtype = NDJIT_INT16, .ndim = 2, .shape = empty_shape};
    expect("empty image with NULL data", ndjit_generic_filter(f, &e, &e, o, &err), NDJIT_OK, &err);
    intptr_t zero_strides[2] = {0, 0};
    double one = 0;
    a = outa; a.data = &one; a.nbytes = sizeof one; a.strides = zero_strides;
    expect("output with zero strides (sequential)", ndjit_generic_filter(f, &in, &a, o, &err), NDJIT_OK, &err);
    expect("in place (output == input)", ndjit_generic_filter(f, &in, &in, o, &err), NDJIT_OK, &err);
    intptr_t axes_last[1] = {-1};
    ndjit_options_set_axes(o, axes_last, 1, NULL);
    ndjit_options_set_size(o, size1, 1, NULL);
    expect("axes: -1", ndjit_generic_filter(f, &in, &outa, o, &err), NDJIT_OK, &err);

    check_poll_hook(&in, &outa);
    check_long_chain();

    /* --- freeing NULL -------------------------------------------------------------------- */
    ndjit_error_free(NULL);
    ndjit_bindings_free(NULL);
    ndjit_filter_free(NULL);
    ndjit_context_free(NULL);
    ndjit_options_free(NULL);
    expect_true("every free accepts NULL", 1);

    ndjit_options_free(o);
    ndjit_context_free(ctx);
    ndjit_filter_free(f);
    ndjit_bindings_free(b);
    printf("%d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
