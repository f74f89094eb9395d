use ndjit_gpu::codegen::*;
fn main() {
    let src = std::env::args().nth(1).unwrap();
    let size: usize = std::env::args().nth(2).map(|s| s.parse().unwrap()).unwrap_or(3);
    let v: u32 = std::env::args().nth(3).map(|s| s.parse().unwrap()).unwrap_or(0);
    let mut spec = KernelSpec::boxed(2, size);
    spec.outputs_per_thread = v;
    let f = ndjit::Filter::builder(&src).filter_size(spec.filter_size()).compile().unwrap();
    let t = std::time::Instant::now();
    let k = generate(f.specialized_ir().unwrap(), f.layout(), f.bound_values(), &spec).unwrap();
    let ptx = k.module.to_ptx();
    eprintln!("codegen {:?}, V={}, {} lines", t.elapsed(), k.outputs_per_thread, ptx.lines().count());
    print!("{ptx}");
}
