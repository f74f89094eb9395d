use ndjit::jit::kernel::{compile_row_kernel, Taps};
use ndjit::{Bindings, Filter};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let src = &args[1];
    let k: usize = args[2].parse().unwrap();
    let (slot, col): (Vec<u32>, Vec<i64>) = if k == 0 {
        (vec![0, 1, 1, 1, 2], vec![0, -1, 0, 1, 0])
    } else {
        let r = (k / 2) as i64;
        (0..k * k).map(|i| ((i / k) as u32, (i % k) as i64 - r)).unzip()
    };
    let n = slot.len();
    let f = Filter::builder(src).bindings(&Bindings::new()).filter_size(n).compile().unwrap();
    let taps = Taps { slot, col, slots: if k == 0 { 3 } else { k } };
    let t = std::time::Instant::now();
    let kern = compile_row_kernel(f.specialized_ir().unwrap(), &taps, true).unwrap();
    eprintln!("compile {:.3} ms", t.elapsed().as_secs_f64() * 1e3);
    println!("{}", kern.disasm().unwrap());
}
