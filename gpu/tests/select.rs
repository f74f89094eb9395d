//! Medians of boxes and footprints selected by bisection over ordered keys (`codegen::separable::select`), run by
//! the emulator (the very kernel the device would load) against the CPU's general engine, bit
//! for bit: every dtype in and out, every mode, origins, odd and even boxes, one and two axes,
//! planes of a 3-D image, cval cases, and float data with NaN, infinities and both zeros.

mod common;

use common::{forced, run, Inputs, Launch, ALL, MODES};
use ndjit::driver::{Dtype, Footprint, Mode, Options};
use ndjit_gpu::emulate::Emulator;
use ndjit_gpu::{GpuFilter, Target, Tuning};

/// Whether the median kernel serves these arguments under `tuning`.
fn selected(
    gpu: &GpuFilter,
    opts: &Options,
    rank: usize,
    dts: (Dtype, Dtype),
    tuning: Tuning,
) -> bool {
    let ptx = gpu
        .ptx_tuned(opts, rank, dts, Target::SM90, tuning)
        .expect("generates");
    ptx.contains("ndjit_keys")
}

/// The emulated kernel of `source` against the CPU's general engine, with the grid's rows of
/// blocks as the launch gives them and capped at 2 (each block then loops over several runs of
/// rows; [`common::agree_with_cpu`]); returns whether both refused a choice between zeros.
fn agree(source: &str, data: &[u8], shape: &[usize], dts: (Dtype, Dtype), opts: &Options) -> bool {
    let gpu = GpuFilter::compile(source, &ndjit::Bindings::new()).expect("compiles");
    assert!(
        selected(&gpu, opts, shape.len(), dts, forced(true)),
        "{source} {dts:?} {opts:?}: not planned as the selection kernel"
    );
    let runs = [
        Launch::new(forced(true), 65535),
        Launch::new(forced(true), 2),
    ];
    common::agree_with_cpu(&gpu, (data, shape), dts, opts, &runs)
}

/// Values of `dt` with many ties (floats: small integers and halves), and for floats one in
/// `awkward` of NaN, ±inf, -0.0 and +0.0.
fn values(n: usize, dt: Dtype, seed: u64, awkward: u64) -> Vec<u8> {
    let mut r = Inputs::new(seed);
    let special = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0];
    let float = |r: &mut Inputs| match r.next() % awkward.max(1) {
        0 if awkward > 0 => special[(r.next() % 5) as usize],
        _ => (r.next() % 41) as f64 * 0.5 - 10.0,
    };
    match dt {
        Dtype::F64 => (0..n).flat_map(|_| float(&mut r).to_le_bytes()).collect(),
        Dtype::F32 => (0..n)
            .flat_map(|_| (float(&mut r) as f32).to_le_bytes())
            .collect(),
        _ => r.bytes(n, dt),
    }
}

fn boxed(size: &[usize]) -> Options {
    Options::new(Footprint::from_size(size))
}

#[test]
fn every_dtype_in_and_out_odd_and_even_boxes() {
    // 19×37: two blocks across with a partial one, two runs of rows down with a partial one.
    let shape = [19, 37];
    for (i, &dt) in ALL.iter().enumerate() {
        let data = values(19 * 37, dt, i as u64 + 1, 7);
        for out in [dt, Dtype::F64, Dtype::U8] {
            for size in [[3, 3], [4, 2], [1, 5], [6, 1]] {
                agree("np.median(x)", &data, &shape, (dt, out), &boxed(&size));
            }
        }
    }
}

#[test]
fn every_mode_with_origins_and_cvals() {
    let shape = [9, 11];
    for (i, &dt) in [Dtype::F64, Dtype::F32, Dtype::I16, Dtype::U8]
        .iter()
        .enumerate()
    {
        let data = values(99, dt, 10 + i as u64, 5);
        for mode in MODES {
            for (size, origin) in [([3, 5], [0, 0]), ([4, 4], [-2, 1]), ([5, 2], [2, 0])] {
                for cval in [0.0, 2.0, -3.5] {
                    let opts = Options {
                        mode,
                        cval,
                        origin: origin.to_vec(),
                        ..boxed(&size)
                    };
                    let holds = dt == Dtype::F64 || dt == Dtype::F32 || cval.fract() == 0.0;
                    let holds = holds && !(dt == Dtype::U8 && cval < 0.0);
                    if matches!(mode, Mode::Constant | Mode::GridConstant) && !holds {
                        // A cval the type cannot hold runs the general kernel.
                        let gpu =
                            GpuFilter::compile("np.median(x)", &ndjit::Bindings::new()).unwrap();
                        assert!(
                            !selected(&gpu, &opts, 2, (dt, dt), forced(true)),
                            "{dt:?} {cval}"
                        );
                        continue;
                    }
                    agree("np.median(x)", &data, &shape, (dt, dt), &opts);
                }
            }
        }
    }
}

#[test]
fn nan_infinities_and_zeros_of_both_signs() {
    let shape = [17, 33];
    for dt in [Dtype::F32, Dtype::F64] {
        for awkward in [1, 2, 4] {
            let data = values(17 * 33, dt, awkward, awkward);
            for size in [[3, 3], [2, 2], [5, 4]] {
                let refused = agree("np.median(x)", &data, &shape, (dt, dt), &boxed(&size));
                assert!(!refused, "the median leaves nothing to choose");
            }
        }
    }
}

/// NumPy's quantiles and `np.sort(x)[k]`, both ends and the middle.
const SORTED: [&str; 6] = [
    "np.percentile(x, 30)",
    "np.quantile(x, 0.75)",
    "np.percentile(x, 100)",
    "np.percentile(x, 0)",
    "np.sort(x)[2]",
    "np.sort(x)[-1]",
];

#[test]
fn quantiles_and_kth_values_of_every_dtype() {
    let shape = [19, 37];
    for (i, &dt) in ALL.iter().enumerate() {
        let data = values(19 * 37, dt, 40 + i as u64, 0);
        for (j, source) in SORTED.iter().enumerate() {
            let out = [dt, Dtype::F64][j % 2];
            for size in [[3, 3], [4, 2], [1, 5]] {
                assert!(
                    !agree(source, &data, &shape, (dt, out), &boxed(&size)),
                    "{source}"
                );
            }
        }
    }
}

/// How many of the general kernel's thread positions the kernel of `source` flagged for the
/// patch on `data` (3×3 boxes), checked against the CPU first.
fn flagged(source: &str, data: &[u8], shape: &[usize], dt: Dtype) -> usize {
    let opts = boxed(&[3, 3]);
    agree(source, data, shape, (dt, dt), &opts);
    let gpu = GpuFilter::compile(source, &ndjit::Bindings::new()).expect("compiles");
    let emu = Emulator {
        tuning: forced(true),
        ..Emulator::new(&gpu)
    };
    let _ = run(&emu, gpu.filter(), (data, dt), shape, dt, &opts);
    emu.flagged.load(std::sync::atomic::Ordering::Relaxed)
}

#[test]
fn zeros_and_nans_where_the_result_shows_them_run_the_filters_own_code() {
    let shape = [17, 33];
    let n = 17 * 33;
    for dt in [Dtype::F32, Dtype::F64] {
        let of = |v: &[f64]| -> Vec<u8> {
            match dt {
                Dtype::F64 => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
                _ => v.iter().flat_map(|&x| (x as f32).to_le_bytes()).collect(),
            }
        };
        let base: Vec<f64> = (0..n).map(|i| (i % 7) as f64 - 3.0).collect();
        let mut negative = base.clone();
        let mut nans = base.clone();
        let mut both = base.clone();
        for i in (0..n).step_by(29) {
            negative[i] = -0.0;
            nans[i] = f64::NAN;
            both[i] = [-0.0, 0.0, f64::NAN][i % 3];
        }
        let (negative, nans, both) = (of(&negative), of(&nans), of(&both));
        for source in ["np.percentile(x, 30)", "np.sort(x)[4]"] {
            // Windows holding -0.0 are the filter's own code's; a clean image flags none.
            assert_eq!(
                flagged(source, &of(&base), &shape, dt),
                0,
                "{source} {dt:?}"
            );
            assert!(
                flagged(source, &negative, &shape, dt) > 0,
                "{source} {dt:?}"
            );
            agree(source, &both, &shape, (dt, dt), &boxed(&[4, 3]));
        }
        // NaN: NumPy's quantiles are NaN, which the kernel writes; `np.sort` orders it last,
        // the filter's own code's.
        assert_eq!(
            flagged("np.percentile(x, 30)", &nans, &shape, dt),
            0,
            "{dt:?}"
        );
        assert!(flagged("np.sort(x)[8]", &nans, &shape, dt) > 0, "{dt:?}");
        // The median needs neither.
        assert_eq!(flagged("np.median(x)", &both, &shape, dt), 0, "{dt:?}");
    }
}

#[test]
fn one_axis_and_planes_of_three() {
    let data = values(2 * 7 * 40, Dtype::F32, 3, 6);
    // One axis, odd and even; planes of a 3-D image, each its own (the box spans none of the
    // first axis).
    for (shape, out, size) in [
        (&[560][..], Dtype::F32, &[5][..]),
        (&[560], Dtype::F32, &[4]),
        (&[2, 7, 40], Dtype::F64, &[1, 3, 3]),
    ] {
        agree(
            "np.median(x)",
            &data,
            shape,
            (Dtype::F32, out),
            &boxed(size),
        );
    }
    let opts = Options {
        axes: Some(vec![1, -1]),
        ..boxed(&[3, 2])
    };
    agree(
        "np.median(x)",
        &data,
        &[2, 7, 40],
        (Dtype::F32, Dtype::F32),
        &opts,
    );
    // A box along the first axis is not the kernel's.
    let gpu = GpuFilter::compile("np.median(x)", &ndjit::Bindings::new()).unwrap();
    let dts = (Dtype::F32, Dtype::F32);
    assert!(!selected(&gpu, &boxed(&[3, 3, 3]), 3, dts, forced(true)));
}

#[test]
fn random_cases_agree() {
    let mut r = Inputs::new(20261130);
    for case in 0..60 {
        let rank = 1 + (r.next() % 2) as usize;
        let shape: Vec<usize> = (0..rank)
            .map(|_| 1 + (r.next() % [70, 24][rank - 1]) as usize)
            .collect();
        let size: Vec<usize> = (0..rank).map(|_| 1 + (r.next() % 7) as usize).collect();
        if size.iter().all(|&k| k == 1) {
            continue;
        }
        let origin: Vec<isize> = size
            .iter()
            .map(|&k| -((k / 2) as isize) + (r.next() % k as u64) as isize)
            .collect();
        let dt = ALL[(r.next() % ALL.len() as u64) as usize];
        let out = ALL[(r.next() % ALL.len() as u64) as usize];
        let n: usize = shape.iter().product();
        let data = values(n, dt, case, 1 + r.next() % 8);
        let opts = Options {
            mode: MODES[(r.next() % MODES.len() as u64) as usize],
            cval: (r.next() % 2) as f64,
            origin,
            ..boxed(&size)
        };
        let sources = ["np.median(x)", "np.percentile(x, 30)", "np.sort(x)[0]"];
        let source = sources[(r.next() % 3) as usize];
        agree(source, &data, &shape, (dt, out), &opts);
    }
}

/// Footprints that are not boxes, counted cell by cell: a cross, disks, a ring, random masks
/// with holes, even extents shifted by origins; every dtype in turn, the modes, and float data
/// with NaN, infinities and both zeros.
#[test]
fn footprints_that_are_not_boxes() {
    let shape = [19, 37];
    let ring = Footprint::try_from_fn(&[5, 5], |i| {
        let (dy, dx) = (i[0] as i64 - 2, i[1] as i64 - 2);
        (2..=4).contains(&(dy * dy + dx * dx))
    })
    .unwrap();
    let mut footprints = vec![
        Footprint::cross(2, 1),
        Footprint::disk(2),
        Footprint::disk(3),
        ring,
        Footprint::new(vec![1, 6], vec![true, false, false, true, true, false]).unwrap(),
        Footprint::new(vec![4, 1], vec![false, true, true, true]).unwrap(),
    ];
    let mut r = Inputs::new(20261205);
    while footprints.len() < 14 {
        let (h, w) = (1 + r.next() % 6, 1 + r.next() % 7);
        let mask: Vec<bool> = (0..h * w).map(|_| !r.next().is_multiple_of(3)).collect();
        if let Ok(fp) = Footprint::new(vec![h as usize, w as usize], mask) {
            footprints.push(fp);
        }
    }
    // The extremes too: the windows' least and largest keys, floats holding `-0.0` or NaN
    // patched by the filter's own code.
    let sources = [
        "np.median(x)",
        "np.percentile(x, 30)",
        "np.sort(x)[0]",
        "np.min(x)",
        "max(x)",
        "np.max(x) - np.min(x)",
    ];
    for (i, fp) in footprints.into_iter().enumerate() {
        let dt = ALL[i % ALL.len()];
        let data = values(19 * 37, dt, 70 + i as u64, 1 + (i as u64 % 5));
        let origin = fp
            .shape()
            .iter()
            .map(|&k| -((k / 2) as isize) + (r.next() % k as u64) as isize)
            .collect();
        let opts = Options {
            mode: MODES[i % MODES.len()],
            cval: 1.0,
            origin,
            ..Options::new(fp)
        };
        for (j, source) in sources.iter().enumerate() {
            let out = [dt, Dtype::F64, Dtype::U8][(i + j) % 3];
            agree(source, &data, &shape, (dt, out), &opts);
        }
    }
}

#[test]
fn only_box_statistics_of_sorted_windows_are_selected() {
    let f = |s: &str| GpuFilter::compile(s, &ndjit::Bindings::new()).unwrap();
    let dts = (Dtype::F64, Dtype::F64);
    let on = forced(true);
    assert!(selected(&f("np.median(x)"), &boxed(&[3, 3]), 2, dts, on));
    assert!(!selected(
        &f("np.median(x)"),
        &boxed(&[3, 3]),
        2,
        dts,
        forced(false)
    ));
    assert!(selected(
        &f("np.percentile(x, 30)"),
        &boxed(&[3, 3]),
        2,
        dts,
        on
    ));
    assert!(selected(&f("np.sort(x)[3]"), &boxed(&[3, 3]), 2, dts, on));
    assert!(!selected(&f("np.mean(x)"), &boxed(&[3, 3]), 2, dts, on));
    assert!(!selected(
        &f("np.median(x) + 1"),
        &boxed(&[3, 3]),
        2,
        dts,
        on
    ));
    // Footprints within the last two axes whose every cell unrolls (`select::MASKED_CELLS`).
    let cross = Options::new(Footprint::cross(2, 1));
    assert!(selected(&f("np.median(x)"), &cross, 2, dts, on));
    let disk = |r| Options::new(Footprint::disk(r));
    assert!(selected(&f("np.median(x)"), &disk(15), 2, dts, on));
    assert!(!selected(&f("np.median(x)"), &disk(23), 2, dts, on));
    // Extremes of footprints: from past the general kernel's register window (64 values: a
    // 9×9 disk holds 49, an 11×11 one 81), one extreme of doubles past 200 (a 15×15 disk holds
    // 149, a 21×21 one 317: `separable::WIDE_EXTREME_MIN_TAPS`), and never of boxes (their
    // passes).
    let auto = Tuning::default();
    let singles = (Dtype::F32, Dtype::F32);
    assert!(!selected(&f("np.min(x)"), &disk(4), 2, singles, auto));
    assert!(selected(&f("np.min(x)"), &disk(5), 2, singles, auto));
    assert!(selected(
        &f("np.max(x) - np.min(x)"),
        &disk(5),
        2,
        dts,
        auto
    ));
    assert!(!selected(&f("np.min(x)"), &disk(7), 2, dts, auto));
    assert!(selected(&f("np.min(x)"), &disk(10), 2, dts, auto));
    assert!(!selected(&f("np.min(x)"), &boxed(&[11, 11]), 2, dts, on));
    let cross3 = Options::new(Footprint::cross(3, 1));
    assert!(!selected(&f("np.median(x)"), &cross3, 3, dts, on));
    // Rows longer than the kernel unrolls run the general kernel.
    assert!(!selected(&f("np.median(x)"), &boxed(&[1, 65]), 2, dts, on));
    assert!(selected(&f("np.median(x)"), &boxed(&[1, 64]), 2, dts, on));
    // Without the tuning's say: a median past the sorting networks' values
    // (`select::MEDIAN_MIN_TAPS`), quantiles and `np.sort(x)[k]` past the registers' sort.
    let median = f("np.median(x)");
    assert!(!selected(&median, &boxed(&[11, 11]), 2, dts, auto));
    assert!(selected(&median, &boxed(&[12, 11]), 2, dts, auto));
    // A 15×15 disk holds 149 values, a 13×13 one 113.
    assert!(selected(&median, &disk(7), 2, dts, auto));
    assert!(!selected(&median, &disk(6), 2, dts, auto));
    assert!(selected(
        &median,
        &boxed(&[31, 31]),
        2,
        (Dtype::U8, Dtype::U8),
        auto
    ));
    let percentile = f("np.percentile(x, 90)");
    assert!(!selected(&percentile, &boxed(&[4, 8]), 2, dts, auto));
    assert!(selected(&percentile, &boxed(&[3, 11]), 2, dts, auto));
    assert!(selected(&f("np.sort(x)[0]"), &boxed(&[7, 7]), 2, dts, auto));
}

/// A q of -0.0 keeps NumPy's gamma sign (`-0.0 - 0`: the previous index is an int), in the
/// kernel's run-time quantile as in `ndjit::runtime::QuantilePlan`: with -0.0 the lowest value,
/// `np.quantile` at q = -0.0 is -0.0 (at q = 0.0 it would be 0.0).
#[test]
fn a_negative_zero_q_keeps_gammas_sign() {
    let source = "np.quantile(x, x[4] * 0.0)";
    let gpu = GpuFilter::compile(source, &ndjit::Bindings::new()).expect("compiles");
    let window = [-0.0, 1.0, 2.0, 1.0, -0.0, 2.0, 1.0, 1.0, 2.0];
    let q_negative_zero = gpu.filter().call(&window).expect("runs");
    assert_eq!(q_negative_zero.to_bits(), (-0.0f64).to_bits());
    let shape = [9, 11];
    let values = [-0.0f64, 1.0, 2.0];
    let data: Vec<u8> = (0..99)
        .flat_map(|i| values[(i * 7 % 5) % 3].to_le_bytes())
        .collect();
    let dts = (Dtype::F64, Dtype::F64);
    let runs = [
        Launch::new(forced(true), 65535),
        Launch::new(forced(false), 2),
    ];
    let refused = common::agree_with_cpu(&gpu, (&data, &shape), dts, &boxed(&[3, 3]), &runs);
    assert!(!refused, "no window holds both zeros");
}
