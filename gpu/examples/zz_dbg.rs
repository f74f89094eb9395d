use ndjit_gpu::codegen::*;
use ndjit_gpu::plan::ArrayDesc;
fn main() {
    let src = "def g(cells):\n    alive = int(cells[4])\n    return alive\n";
    let f = ndjit::Filter::builder(src).filter_size(9).compile().unwrap();
    let ir = f.specialized_ir().unwrap();
    let mut spec = KernelSpec::boxed(2, 3);
    spec.mode = Mode::Constant;
    spec.outputs_per_thread = 1;
    let k = generate(ir, f.layout(), f.bound_values(), &spec).unwrap();
    let shape = [2usize, 3];
    let vals: Vec<f64> = vec![1.0, f64::NAN, 2.0, 3.0, 4.0, 5.0];
    let input: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
    let d = ArrayDesc::contiguous(DType::F64, &shape);
    let r = ndjit_gpu::emulate::run(&k, &f, &input, &d, &d, 0xA5).unwrap();
    println!("{:?}", r.error.map(|e| e.to_string()));
    println!("{:?}", ndjit_gpu::reference::to_f64(&r.output, DType::F64));
    if std::env::args().nth(1).is_some() { println!("{}", k.module.to_ptx()); }
}
