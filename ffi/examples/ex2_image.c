/* Example 2: filter a raw 2-D image with ndjit's native driver.
 *
 * The same as, in Python,
 *     out  = generic_filter(img, "max(x) - min(x)", size=3, mode="nearest")
 *     out2 = generic_filter(img[:, ::2], "np.mean(x)", footprint=cross, mode="constant",
 *                           cval=100, output=np.float64)
 * The image is described by a pointer, dtype, shape and byte strides; ndjit checks that every
 * element lies inside the memory block described and runs on all cores.
 */
#include <ndjit.h>
#include <stdint.h>
#include <stdio.h>

#define H 6
#define W 8

static int fail(const char *what, ndjit_error *err) {
    fprintf(stderr, "%s failed: %s\n", what, ndjit_error_text(err));
    ndjit_error_free(err);
    return 1;
}

static void print_u8(const char *name, const uint8_t *a, int rows, int cols) {
    printf("%s %d %d\n", name, rows, cols);
    for (int r = 0; r < rows; r++) {
        for (int c = 0; c < cols; c++) printf("%s%d", c ? " " : "", a[r * cols + c]);
        printf("\n");
    }
}

static void print_f64(const char *name, const double *a, int rows, int cols) {
    printf("%s %d %d\n", name, rows, cols);
    for (int r = 0; r < rows; r++) {
        for (int c = 0; c < cols; c++) printf("%s%.17g", c ? " " : "", a[r * cols + c]);
        printf("\n");
    }
}

int main(void) {
    ndjit_error *err = NULL;
    uint8_t img[H][W];
    for (int r = 0; r < H; r++)
        for (int c = 0; c < W; c++) img[r][c] = (uint8_t)((r * 37 + c * c * 11) % 251);
    print_u8("input", &img[0][0], H, W);

    /* 1. Morphological gradient over 3x3, nearest-edge mode, uint8 in and out. */
    ndjit_filter *range = NULL;
    if (ndjit_filter_compile("max(x) - min(x)", NULL, 9, &range, &err)) return fail("compile", err);
    uint8_t grad[H][W];
    intptr_t shape[2] = {H, W};
    ndjit_array in = {.data = img, .nbytes = sizeof img, .dtype = NDJIT_UINT8, .ndim = 2, .shape = shape};
    ndjit_array out = {.data = grad, .nbytes = sizeof grad, .dtype = NDJIT_UINT8, .ndim = 2, .shape = shape};
    ndjit_options *opts = ndjit_options_new();
    intptr_t size[2] = {3, 3};
    ndjit_options_set_size(opts, size, 2, NULL);
    ndjit_options_set_mode(opts, NDJIT_MODE_NEAREST, NULL);
    if (ndjit_generic_filter(range, &in, &out, opts, &err)) {
        ndjit_options_free(opts);
        ndjit_filter_free(range);
        return fail("generic_filter", err);
    }
    print_u8("gradient", &grad[0][0], H, W);
    ndjit_options_free(opts);
    ndjit_filter_free(range);

    /* 2. Mean over a cross footprint on every other column (a strided view: shape H x W/2,
     * strides W and 2 bytes), constant mode with cval 100, float64 output on 2 threads. */
    ndjit_filter *mean = NULL;
    if (ndjit_filter_compile("np.mean(x)", NULL, 5, &mean, &err)) return fail("compile", err);
    double smooth[H][W / 2];
    intptr_t vshape[2] = {H, W / 2}, vstrides[2] = {W, 2};
    ndjit_array view = {.data = img, .nbytes = sizeof img, .dtype = NDJIT_UINT8, .ndim = 2,
                        .shape = vshape, .strides = vstrides};
    ndjit_array vout = {.data = smooth, .nbytes = sizeof smooth, .dtype = NDJIT_FLOAT64, .ndim = 2,
                        .shape = vshape};
    const uint8_t cross[9] = {0, 1, 0, 1, 1, 1, 0, 1, 0};
    intptr_t fshape[2] = {3, 3};
    opts = ndjit_options_new();
    ndjit_options_set_footprint(opts, fshape, 2, cross, NULL);
    ndjit_options_set_mode(opts, NDJIT_MODE_CONSTANT, NULL);
    ndjit_options_set_cval(opts, 100.0, NULL);
    ndjit_options_set_threads(opts, 2, NULL);
    ndjit_status st = ndjit_generic_filter(mean, &view, &vout, opts, &err);
    ndjit_options_free(opts);
    ndjit_filter_free(mean);
    if (st) return fail("generic_filter", err);
    print_f64("cross_mean", &smooth[0][0], H, W / 2);

    /* 3. A view that reaches outside the memory described is refused, not read. */
    intptr_t too_far[2] = {W + 1, 2};
    view.strides = too_far;
    ndjit_filter *id = NULL;
    ndjit_filter_compile("x[0]", NULL, 0, &id, NULL);
    opts = ndjit_options_new();
    ndjit_options_set_size(opts, size, 2, NULL);
    st = ndjit_generic_filter(id, &view, &vout, opts, &err);
    printf("out of bounds view: %s: %s\n", ndjit_status_name(st), ndjit_error_message(err));
    ndjit_error_free(err);
    ndjit_options_free(opts);
    ndjit_filter_free(id);
    return st == NDJIT_ERR_SHAPE ? 0 : 1;
}
