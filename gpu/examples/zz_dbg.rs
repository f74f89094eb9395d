use ndjit_gpu::codegen::*;
use ndjit_gpu::plan::ArrayDesc;
struct Inputs(u64);
impl Inputs {
    fn new(seed: u64) -> Inputs {
        Inputs(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn value(&mut self) -> f64 {
        let r = self.next();
        match r % 16 {
            0 => f64::NAN,
            1 => f64::INFINITY,
            2 => f64::NEG_INFINITY,
            3 => -0.0,
            4 => 0.0,
            5 => 5e-324 * (r >> 40) as f64,
            6 => (r >> 11) as f64 * 1e300 / (1u64 << 53) as f64,
            7 => ((r >> 8) % 5) as f64,
            _ => (r >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 0.5,
        }
    }
}
fn main() {
    let src = std::env::var("SRC").unwrap();
    let f = ndjit::Filter::builder(&src)
        .filter_size(std::env::var("N").map(|v| v.parse().unwrap()).unwrap_or(9))
        .compile()
        .unwrap();
    let ir = f.specialized_ir().unwrap();
    let mut spec = KernelSpec::boxed(
        2,
        std::env::var("S").map(|v| v.parse().unwrap()).unwrap_or(3),
    );
    spec.mode = Mode::Constant;
    spec.cval = -1.5;
    spec.outputs_per_thread = std::env::var("V").map(|v| v.parse().unwrap()).unwrap_or(0);
    let t0 = std::time::Instant::now();
    let b = BoundValues::new(f.layout(), f.bound_values());
    let p = prepare(ir, &b);
    eprintln!(
        "prepared in {:?}, {} stmts",
        t0.elapsed(),
        ndjit::ir::block_size(&p.body)
    );
    let k = generate(ir, f.layout(), f.bound_values(), &spec).unwrap();
    eprintln!(
        "generated in {:?}, {} lines",
        t0.elapsed(),
        k.module.to_ptx().lines().count()
    );
    let shape = [6usize, 8];
    let mut g = Inputs::new(
        std::env::var("SEED")
            .map(|v| v.parse().unwrap())
            .unwrap_or(497),
    );
    let vals: Vec<f64> = (0..48).map(|_| g.value()).collect();
    let input: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
    let d = ArrayDesc::contiguous(DType::F64, &shape);
    let r = ndjit_gpu::emulate::run(&k, &f, &input, &d, &d, 0xA5).unwrap();
    if std::env::var("PTX").is_ok() {
        println!("{}", k.module.to_ptx());
        return;
    }
    println!("gpu {:?}", r.error.map(|e| e.to_string()));
    let want = ndjit_gpu::reference::generic_filter(&f, &vals, &shape, &spec);
    for i in 0..4 {
        println!(
            "pixel {i}: cpu {:?} gpu {:?} nb {:?}",
            want[i].as_ref().map_err(|e| e.message.clone()),
            ndjit_gpu::reference::to_f64(&r.output[i * 8..i * 8 + 8], DType::F64),
            ndjit_gpu::reference::gather(&vals, &shape, &spec, &[0, i])
        );
    }
}
#[allow(dead_code)]
fn prep_only() {}
