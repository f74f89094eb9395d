/* Example 1: compile a filter with bound values and call its callback over buffers.
 *
 * The callback has scipy.ndimage.generic_filter's C signature, so any loop that gathers
 * neighbourhoods into a buffer can drive it. Here: a weighted 3-point smoothing of a signal,
 * then the same code with a new gain, without recompiling.
 */
#include <ndjit.h>
#include <stdio.h>

static int fail(const char *what, ndjit_error *err) {
    fprintf(stderr, "%s failed: %s\n", what, ndjit_error_text(err));
    ndjit_error_free(err);
    return 1;
}

int main(void) {
    ndjit_error *err = NULL;
    printf("ndjit %s\n", ndjit_version());

    /* Bound values: the names the source reads besides its buffer `x` (copied when set). */
    const double weights[3] = {0.25, 0.5, 0.25};
    ndjit_bindings *b = ndjit_bindings_new();
    if (ndjit_bindings_set_array(b, "weights", weights, 3, &err) != NDJIT_OK ||
        ndjit_bindings_set_double(b, "gain", 2.0, &err) != NDJIT_OK) {
        ndjit_bindings_free(b);
        return fail("binding", err);
    }

    /* Compile, specialised to buffers of 3 values (other sizes still work). */
    ndjit_filter *f = NULL;
    ndjit_status st = ndjit_filter_compile("gain * np.sum(x * weights)", b, 3, &f, &err);
    ndjit_bindings_free(b); /* the filter holds its own copies */
    if (st != NDJIT_OK) return fail("compile", err);

    /* The callback and its user_data, exactly as scipy would call them. */
    ndjit_callback cb = ndjit_filter_callback(f);
    void *user_data = ndjit_filter_user_data(f);
    const double signal[8] = {1, 2, 4, 8, 16, 32, 64, 128};
    for (int i = 0; i + 3 <= 8; i++) {
        double buf[3] = {signal[i], signal[i + 1], signal[i + 2]};
        double out = 0.0;
        if (!cb(buf, 3, &out, user_data)) {
            ndjit_filter_failure(f, &err);
            ndjit_filter_free(f);
            return fail("call", err);
        }
        printf("y[%d] = %.17g\n", i + 1, out);
    }

    /* New values for the bound names: same machine code, new context. */
    ndjit_bindings *b2 = ndjit_bindings_new();
    ndjit_bindings_set_double(b2, "gain", 10.0, NULL);
    ndjit_filter *g = NULL;
    st = ndjit_filter_with_bindings(f, b2, &g, &err);
    ndjit_bindings_free(b2);
    if (st != NDJIT_OK) {
        ndjit_filter_free(f);
        return fail("rebind", err);
    }
    double out = 0.0;
    const double window[3] = {1, 2, 3};
    if (ndjit_filter_call(g, window, 3, &out, &err) != NDJIT_OK) {
        ndjit_filter_free(g);
        ndjit_filter_free(f);
        return fail("evaluate", err);
    }
    printf("gain 10: %.17g\n", out);

    /* A compile error: message, position and the caret rendering. */
    ndjit_filter *bad = NULL;
    if (ndjit_filter_compile("np.sum(x * weigths)", NULL, 0, &bad, &err) != NDJIT_OK) {
        printf("error at %u:%u: %s\n%s\n", ndjit_error_line(err), ndjit_error_column(err),
               ndjit_error_message(err), ndjit_error_text(err));
        ndjit_error_free(err);
    }

    ndjit_filter_free(g);
    ndjit_filter_free(f);
    return 0;
}
