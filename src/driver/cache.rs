//! Compiled code kept between runs: a filter specialised to a footprint size, and row kernels.
//!
//! A run needs the filter compiled for its footprint's size and a row kernel for its footprint's
//! geometry, about a millisecond of compilation each. Both are kept, keyed by what determines
//! them, so that repeated runs (a Python loop over images, say) pay once:
//! - a specialisation by the filter's content (source, general IR, bound values) and size;
//! - a kernel by the specialised filter's content and the taps.
//!
//! A repeated run on a small image takes a few microseconds, so the keys themselves must be cheap:
//! a filter's content is looked up once per filter object ([`content_id`]).
//!
//! Each cache holds a bounded number of entries and drops the least recently used.

use crate::filter::FilterRef;
use crate::jit::kernel::{compile_row_kernel, RowKernel, Taps};
use crate::{Filter, Value};
use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

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

    /// The value of `k` (any borrowed form of the key), marked as used now.
    pub fn get<Q>(&mut self, k: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.clock += 1;
        let clock = self.clock;
        self.map.get_mut(k).map(|(v, used)| {
            *used = clock;
            v.clone()
        })
    }

    pub fn insert(&mut self, k: K, v: V) {
        if self.map.len() >= self.cap && !self.map.contains_key(&k) {
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
const IDENTITIES: usize = 64;

/// Locks a cache; a panic while it was held leaves it consistent (every update is one call).
fn lock<T>(m: &'static OnceLock<Mutex<T>>, init: impl FnOnce() -> T) -> MutexGuard<'static, T> {
    m.get_or_init(|| Mutex::new(init()))
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

/// `filter` compiled for `n` values (itself if it already is); `None` if that fails to compile.
pub(crate) fn specialised(filter: &Filter, n: usize) -> Option<Filter> {
    if filter.filter_size() == Some(n) {
        return Some(filter.clone());
    }
    static CACHE: OnceLock<Mutex<Lru<(u64, usize), Filter>>> = OnceLock::new();
    let key = (content_id(filter), n);
    if let Some(f) = lock(&CACHE, || Lru::new(SPECIALISED)).get(&key) {
        return Some(f);
    }
    let f = filter.specialize(n).ok()?;
    lock(&CACHE, || Lru::new(SPECIALISED)).insert(key, f.clone());
    Some(f)
}

/// A row kernel of the specialised `filter` for `taps`; `None` if it cannot be compiled.
pub(crate) fn kernel(filter: &Filter, taps: &Taps) -> Option<Arc<RowKernel>> {
    let ir = filter.specialized_ir()?;
    type Kernels = Mutex<Lru<(u64, Taps), Arc<RowKernel>>>;
    static CACHE: OnceLock<Kernels> = OnceLock::new();
    let key = (content_id(filter), taps.clone());
    if let Some(k) = lock(&CACHE, || Lru::new(KERNELS)).get(&key) {
        return Some(k);
    }
    let k = Arc::new(compile_row_kernel(ir, taps, false).ok()?);
    lock(&CACHE, || Lru::new(KERNELS)).insert(key, k.clone());
    Some(k)
}

/// Content numbers of recently seen filter objects, searched by identity ([`FilterRef`]), most
/// recently used last. A `Vec`: a few dozen identity comparisons cost less than hashing, and its
/// weak references, reached from the start of its buffer, are not reported as lost at exit.
struct Seen {
    entries: Vec<(FilterRef, u64)>,
}

impl Seen {
    fn get(&mut self, filter: &Filter) -> Option<u64> {
        let k = self.entries.iter().rposition(|(r, _)| r.is(filter))?;
        let entry = self.entries.remove(k);
        let id = entry.1;
        self.entries.push(entry);
        Some(id)
    }

    fn insert(&mut self, filter: &Filter, id: u64) {
        if self.entries.len() >= IDENTITIES {
            self.entries.remove(0);
        }
        self.entries.push((FilterRef::of(filter), id));
    }
}

/// A number per distinct [`filter_key`]: filters of equal content share one, so that they share
/// their compiled code. Building the key formats the whole IR, microseconds that a small image's
/// run would pay on every call; it is built once per filter object (the number is remembered by
/// identity in [`Seen`]). Numbers are never reused, so an evicted key only costs a recompilation.
pub(crate) fn content_id(filter: &Filter) -> u64 {
    static SEEN: OnceLock<Mutex<Seen>> = OnceLock::new();
    static BY_CONTENT: OnceLock<Mutex<Lru<String, u64>>> = OnceLock::new();
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let seen = || Seen {
        entries: Vec::new(),
    };
    if let Some(id) = lock(&SEEN, seen).get(filter) {
        return id;
    }
    let key = filter_key(filter);
    let mut by_content = lock(&BY_CONTENT, || Lru::new(SPECIALISED + KERNELS));
    let id = by_content.get(&key).unwrap_or_else(|| {
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        by_content.insert(key, id);
        id
    });
    drop(by_content);
    lock(&SEEN, seen).insert(filter, id);
    id
}

/// What determines a filter's specialised IR: its source, its general IR (which reflects the
/// imports and the signature it was compiled with) and its bound values.
fn filter_key(filter: &Filter) -> String {
    let mut key = format!("{}\u{0}{:?}", filter.source(), filter.ir());
    for (name, v) in filter.bound_values() {
        // A tag for the kind, then the values by their bits (`{:?}` would not tell NaN payloads
        // apart).
        let bits: Vec<u64> = match v {
            Value::Float(x) => vec![0, x.to_bits()],
            Value::Int(i) => vec![1, *i as u64],
            Value::NpFloat64(x) => vec![2, x.to_bits()],
            Value::NpInt64(i) => vec![3, *i as u64],
            Value::Bool(b) => vec![6, *b as u64],
            Value::Array(a, kind) => [4, *kind as u64]
                .into_iter()
                .chain(a.iter().map(|x| x.to_bits()))
                .collect(),
            // Folded into the IR, which is part of the key already.
            Value::Str(_) => vec![5],
        };
        key.push_str(&format!("\u{0}{name}={bits:?}"));
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Bindings;

    fn compile(k: f64) -> Filter {
        let mut b = Bindings::new();
        b.set_float("k", k);
        Filter::compile("k * min(x)", &b).unwrap()
    }

    #[test]
    fn the_least_recently_used_entry_goes_first_and_keys_are_found_by_their_borrowed_form() {
        let mut lru: Lru<Arc<str>, usize> = Lru::new(2);
        lru.insert("a".into(), 1);
        lru.insert("b".into(), 2);
        assert_eq!(lru.get("a"), Some(1)); // "b" is now the least recently used
        lru.insert("c".into(), 3);
        assert_eq!(
            (lru.get("a"), lru.get("b"), lru.get("c")),
            (Some(1), None, Some(3))
        );
        lru.insert("d".into(), 4);
        assert_eq!(lru.get("a"), None);
        assert_eq!(lru.map.len(), 2);
        // A key already held is replaced, evicting nothing.
        lru.insert("d".into(), 5);
        assert_eq!((lru.get("c"), lru.get("d")), (Some(3), Some(5)));
    }

    #[test]
    fn filters_of_equal_content_share_an_id() {
        let (f, g) = (compile(1.0), compile(1.0));
        assert_eq!(content_id(&f), content_id(&f));
        assert_eq!(content_id(&f), content_id(&g));
        let mut same = Bindings::new();
        same.set_float("k", 1.0);
        assert_eq!(content_id(&f), content_id(&f.with_bindings(&same).unwrap()));
    }

    #[test]
    fn bound_values_and_source_tell_filters_apart() {
        let f = compile(1.0);
        let mut other = Bindings::new();
        other.set_float("k", 2.0);
        assert_ne!(
            content_id(&f),
            content_id(&f.with_bindings(&other).unwrap())
        );
        let g = Filter::compile("k * max(x)", &other).unwrap();
        assert_ne!(
            content_id(&f.with_bindings(&other).unwrap()),
            content_id(&g)
        );
    }

    #[test]
    fn a_filter_dropped_and_replaced_at_its_address_is_not_confused() {
        // The remembered identity keeps the addresses: a new filter cannot take them.
        let id = content_id(&compile(3.0));
        let other = compile(4.0);
        assert_ne!(id, content_id(&other));
        assert_eq!(id, content_id(&compile(3.0)));
    }
}
