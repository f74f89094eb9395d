"""The CuPy prototype of the GPU's box median by bisection over ordered keys
(`gpu/src/codegen/separable/select.rs`), which chose its shape: outputs per thread down the
column (P), rows of threads (BY). Run on the device: `python3 select_prototype.py 8192`; its
output on an H200 is `select-prototype-h200-2026-11-30.log`. Reflect mode only; checked against
cupyx's median_filter on a small image, and for NaN windows."""
import sys
import numpy as np, cupy as cp
import cupyx.scipy.ndimage as cnd

SRC = r'''
#if F64
typedef double V; typedef unsigned long long K;
__device__ K key_of(V v){ K u = __double_as_longlong(v); K k = (u >> 63) ? ~u : (u | 0x8000000000000000ULL); return v != v ? ~0ULL : k; }
__device__ V val_of(K k){ K u = (k >> 63) ? (k & 0x7FFFFFFFFFFFFFFFULL) : ~k; return __longlong_as_double(u); }
#define BITS 64
#define QNAN __longlong_as_double(0x7ff8000000000000ULL)
#else
typedef float V; typedef unsigned int K;
__device__ K key_of(V v){ K u = __float_as_uint(v); K k = (u >> 31) ? ~u : (u | 0x80000000u); return v != v ? ~0u : k; }
__device__ V val_of(K k){ K u = (k >> 31) ? (k & 0x7FFFFFFFu) : ~k; return __uint_as_float(u); }
#define BITS 32
#define QNAN __int_as_float(0x7fc00000)
#endif
__device__ int reflect(int i, int n){ if (n == 1) return 0; int p = 2*n; i = ((i % p) + p) % p; return i < n ? i : p - 1 - i; }
extern "C" __global__ void med(const V* in, V* out, int H, int W) {
  extern __shared__ unsigned char smem[];
  K* tile = (K*)smem;
  const int R = KS / 2, TW = 32 + KS - 1, TH = BY * P + KS - 1;
  int x0 = blockIdx.x * 32, y0 = blockIdx.y * BY * P;
  for (int i = threadIdx.y * 32 + threadIdx.x; i < TW * TH; i += 32 * BY) {
    int ty = i / TW, tx = i - ty * TW;
    int gy = reflect(y0 + ty - R, H), gx = reflect(x0 + tx - R, W);
    tile[i] = key_of(in[(size_t)gy * W + gx]);
  }
  __syncthreads();
  int x = x0 + threadIdx.x;
  const int N = KS * KS, RANK = N / 2;
  const K* base = tile + threadIdx.y * P * TW + threadIdx.x;
  K res[P]; int nan[P];
  {
    int cnt[P];
    #pragma unroll
    for (int p = 0; p < P; p++) cnt[p] = 0;
    #pragma unroll UR
    for (int r = 0; r < KS + P - 1; r++) {
      #pragma unroll
      for (int c = 0; c < KS; c++) {
        K k = base[r * TW + c];
        #pragma unroll
        for (int p = 0; p < P; p++) if (r >= p && r < p + KS) cnt[p] += (k == (K)~(K)0);
      }
    }
    #pragma unroll
    for (int p = 0; p < P; p++) { nan[p] = cnt[p]; res[p] = 0; }
  }
  #pragma unroll 1
  for (int b = BITS - 1; b >= 0; b--) {
    K cand[P]; int cnt[P];
    #pragma unroll
    for (int p = 0; p < P; p++) { cand[p] = res[p] | ((K)1 << b); cnt[p] = 0; }
    #pragma unroll UR
    for (int r = 0; r < KS + P - 1; r++) {
      #pragma unroll
      for (int c = 0; c < KS; c++) {
        K k = base[r * TW + c];
        #pragma unroll
        for (int p = 0; p < P; p++) if (r >= p && r < p + KS) cnt[p] += (k < cand[p]);
      }
    }
    #pragma unroll
    for (int p = 0; p < P; p++) if (cnt[p] <= RANK) res[p] = cand[p];
  }
  if (x < W) {
    #pragma unroll
    for (int p = 0; p < P; p++) {
      int y = y0 + threadIdx.y * P + p;
      if (y < H) out[(size_t)y * W + x] = nan[p] ? QNAN : val_of(res[p]);
    }
  }
}
'''


def kernel(ks, f64, P, BY, UR):
    opts = (f"-DKS={ks}", f"-DP={P}", f"-DBY={BY}", f"-DUR={UR}", f"-DF64={int(f64)}", "-std=c++14")
    return cp.RawKernel(SRC, "med", options=opts)


def bench(f, reps=10):
    s, e = cp.cuda.Event(), cp.cuda.Event()
    f(); cp.cuda.Device().synchronize()
    ts = []
    for _ in range(reps):
        s.record(); f(); e.record(); e.synchronize()
        ts.append(cp.cuda.get_elapsed_time(s, e))
    return float(np.median(ts))


n = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
rng = np.random.default_rng(0)
for f64 in (False, True):
    dt = np.float64 if f64 else np.float32
    x = cp.asarray(rng.random((n, n)).astype(dt))
    small = cp.asarray(rng.random((300, 307)).astype(dt))
    for ks in [3, 5, 7, 9, 11, 15, 21, 31]:
        best = None
        for P, BY, UR in [(4, 8, 1), (8, 4, 1), (2, 8, 1), (4, 4, 2)]:
            TW, TH = 32 + ks - 1, BY * P + ks - 1
            sh = TW * TH * (8 if f64 else 4)
            if sh > 200 * 1024: continue
            k = kernel(ks, f64, P, BY, UR)
            k.max_dynamic_shared_size_bytes = sh
            def run(x=x, out=None):
                H, W = x.shape
                o = cp.empty_like(x)
                k(((W + 31) // 32, (H + BY * P - 1) // (BY * P)), (32, BY), (x, o, np.int32(H), np.int32(W)), shared_mem=sh)
                return o
            got = run(small); want = cnd.median_filter(small, size=ks, mode="reflect")
            ok = bool(cp.array_equal(got, want))
            s2 = small.copy(); s2[5, 7] = np.nan; g2 = cp.asnumpy(run(s2)); m = cp.zeros(s2.shape, cp.int32); m[5, 7] = 1; w2 = cp.asnumpy(cnd.maximum_filter(m, size=ks, mode="reflect")) > 0
            ok = ok and bool((np.isnan(g2) == w2).all())
            t = bench(lambda: run()) if ks <= 21 or not f64 else bench(lambda: run(), 3)
            print(f"{dt.__name__} k={ks} P={P} BY={BY} UR={UR} shared={sh} ok={ok} {t:.3f} ms", flush=True)
            best = t if best is None else min(best, t)
        tc = bench(lambda: cnd.median_filter(x, size=ks, mode="reflect"), 3) if ks <= 15 else float("nan")
        print(f"== {dt.__name__} k={ks} best {best:.3f} ms cupyx {tc:.3f} ms ratio {tc/best:.2f}", flush=True)
