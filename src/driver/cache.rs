//! Compiled code kept between runs: a filter specialised to a footprint size, and row kernels.
//!
//! A run needs the filter compiled for its footprint's size and a row kernel for its footprint's
//! geometry, about a millisecond of compilation each. Both are kept, keyed by what determines
//! them, so that repeated runs (a Python loop over images, say) pay once:
//! - a specialisation by the filter's source, general IR, bound values and size;
//! - a kernel by the same and the taps.
//!
//! Each cache holds a bounded number of entries and drops the least recently used.

use crate::jit::kernel::{compile_row_kernel, RowKernel, Taps};
use crate::{Filter, Value};
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, OnceLock};

/// A small map that forgets its least recently used entries (also the GPU's kernel cache).
pub struct Lru<K, V> {
    map: HashMap<K, (V, u64)>,
    cap: usize,
    clock: u64,
}

impl<K: Hash + Eq + Clone, V: Clone> Lru<K, V> {
    pub fn new(cap: usize) -> Self {
        Lru {
            map: HashMap::new(),
            cap,
            clock: 0,
        }
    }

    pub fn get(&mut self, k: &K) -> Option<V> {
        self.clock += 1;
        let clock = self.clock;
        self.map.get_mut(k).map(|(v, used)| {
            *used = clock;
            v.clone()
        })
    }

    pub fn insert(&mut self, k: K, v: V) {
        if self.map.len() >= self.cap {
            if let Some(old) = self
                .map
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| k.clone())
            {
                self.map.remove(&old);
            }
        }
        self.clock += 1;
        self.map.insert(k, (v, self.clock));
    }
}

const SPECIALISED: usize = 32;
const KERNELS: usize = 64;

/// `filter` compiled for `n` values (itself if it already is); `None` if that fails to compile.
pub(crate) fn specialised(filter: &Filter, n: usize) -> Option<Filter> {
    if filter.filter_size() == Some(n) {
        return Some(filter.clone());
    }
    static CACHE: OnceLock<Mutex<Lru<String, Filter>>> = OnceLock::new();
    let key = filter_key(filter, n);
    let cache = CACHE.get_or_init(|| Mutex::new(Lru::new(SPECIALISED)));
    if let Some(f) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return Some(f);
    }
    let f = filter.specialize(n).ok()?;
    cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(key, f.clone());
    Some(f)
}

/// What determines a filter's specialised IR: its source, its general IR (which reflects the
/// imports and the signature it was compiled with), its bound values and the size.
fn filter_key(filter: &Filter, n: usize) -> String {
    let mut key = format!("{n}\u{0}{}\u{0}{:?}", filter.source(), filter.ir());
    for (name, v) in filter.bound_values() {
        // The values by their bits: `{:?}` would not tell NaN payloads apart.
        let bits: Vec<u64> = match v {
            Value::Float(x) => vec![x.to_bits()],
            Value::Int(i) => vec![*i as u64, 1],
            Value::Array(a) => a.iter().map(|x| x.to_bits()).chain([2]).collect(),
        };
        key.push_str(&format!("\u{0}{name}={bits:?}"));
    }
    key
}

/// A row kernel of the specialised `filter` for `taps`; `None` if it cannot be compiled.
pub(crate) fn kernel(filter: &Filter, taps: &Taps) -> Option<Arc<RowKernel>> {
    let ir = filter.specialized_ir()?;
    type Kernels = Mutex<Lru<(String, Taps), Arc<RowKernel>>>;
    static CACHE: OnceLock<Kernels> = OnceLock::new();
    let key = (filter_key(filter, taps.slot.len()), taps.clone());
    let cache = CACHE.get_or_init(|| Mutex::new(Lru::new(KERNELS)));
    if let Some(k) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return Some(k);
    }
    let k = Arc::new(compile_row_kernel(ir, taps, false).ok()?);
    cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(key, k.clone());
    Some(k)
}
