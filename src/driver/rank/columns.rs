//! Selection networks for a box whose columns arrive sorted. Neighbouring pixels of a line share
//! all but one column of their box, so sorting each column once (a small network run on whole
//! lines) and merging the sorted columns per pixel costs fewer comparators than a network on
//! the unsorted values: a pixel's 5×5 median takes 9 + 74 against 113, its 7×7 median 16 + 205
//! against 319 (see the tests).
//!
//! # The merging network
//! The sorted columns are merged pairwise, up a tree, by Batcher's odd–even merge, each pair's
//! lists padded with `+inf` to a power of two. The padding is resolved while the network is
//! generated, not at run time: a comparator with `+inf` on its upper wire does nothing, and one
//! with `+inf` on its lower wire moves the real value down, which is a relabelling of wires. So
//! only comparators of two real values are emitted, each on the physical wires holding them,
//! and the sorted position `p` of the merged list ends on a known wire, `out[p]`. The comparators
//! the wanted positions do not depend on are then dropped (as [`super::order`]'s networks are).
//!
//! # Why it selects exactly
//! Batcher's merge sorts the concatenation of two sorted lists, for any values (the 0-1
//! principle; the padding values are larger than every real one, so they stay at the end). The
//! tests check every 0-1 input whose columns are sorted for boxes up to 5×5, which by the same
//! principle is every input; the values themselves are moved, never computed, so a window's
//! multiset, and the value at each sorted position, is the filter's.

use crate::ir::network;

/// A box's per-pixel network: the comparators on wires `c * rows + r` (column `c`'s value of
/// rank `r`), and the wires where the wanted sorted positions end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Merge {
    pub pairs: Vec<(u32, u32)>,
    pub out: (usize, usize),
}

/// Up to this many columns, every order of pairwise merges is tried (5 columns: 180 orders);
/// beyond, the lists are merged in balanced pairs.
const SEARCH_COLUMNS: usize = 5;

/// The network that merges `cols` sorted columns of `rows` values and keeps what the sorted
/// positions `pa <= pb` depend on: the fewest comparators over the merge orders tried (for a
/// 5×5 median, merging two pairs of columns, then the fifth into one pair, then the two lists,
/// keeps 74, where balanced pairs keep 82).
pub(crate) fn merge(cols: usize, rows: usize, pa: usize, pb: usize) -> Merge {
    let (pairs, out) = merge_keeping(cols, rows, &[pa, pb]);
    Merge {
        pairs,
        out: (out[0], out[1]),
    }
}

/// [`merge`] for any sorted positions `keep`: the comparators, and the wire each position ends
/// on, in the order of `keep`.
pub(crate) fn merge_keeping(cols: usize, rows: usize, keep: &[usize]) -> Pruned {
    let lists: Vec<Vec<u32>> = (0..cols)
        .map(|c| ((c * rows) as u32..((c + 1) * rows) as u32).collect())
        .collect();
    let mut best: Option<Pruned> = None;
    let mut consider = |pairs: &[(u32, u32)], sorted: &[u32]| {
        let found = pruned(pairs, sorted, keep);
        if best.as_ref().is_none_or(|b| found.0.len() < b.0.len()) {
            best = Some(found);
        }
    };
    match cols <= SEARCH_COLUMNS {
        true => every_order(lists, Vec::new(), &mut consider),
        false => {
            let mut pairs = Vec::new();
            let sorted = balanced(lists, &mut pairs);
            consider(&pairs, &sorted);
        }
    }
    best.expect("at least one merge order")
}

/// Comparators, and the wires the wanted sorted positions end on.
pub(crate) type Pruned = (Vec<(u32, u32)>, Vec<usize>);

/// The network that finds sorted position `at` of `sorted + loose` values: wires `0..sorted`
/// hold sorted values, wires `sorted..` values in any order. The loose ones are sorted by
/// Batcher's network, the two lists merged by Batcher's merge, and only the comparators
/// position `at` depends on kept. (The generator of a network written in code: see
/// `registers`.)
#[cfg(test)]
pub(crate) fn merge_loose(sorted: usize, loose: usize, at: usize) -> Pruned {
    use crate::ir::network::batcher_pairs;
    let mut pairs: Vec<(u32, u32)> = batcher_pairs(loose)
        .into_iter()
        .map(|(i, j)| ((sorted + i) as u32, (sorted + j) as u32))
        .collect();
    let a: Vec<u32> = (0..sorted as u32).collect();
    let b: Vec<u32> = (sorted as u32..(sorted + loose) as u32).collect();
    let merged = merge_two(&a, &b, &mut pairs);
    pruned(&pairs, &merged, &[at])
}

/// Calls `done` with the comparators and the merged list of every order of pairwise merges.
fn every_order(
    lists: Vec<Vec<u32>>,
    pairs: Vec<(u32, u32)>,
    done: &mut impl FnMut(&[(u32, u32)], &[u32]),
) {
    if lists.len() <= 1 {
        return done(&pairs, lists.first().map_or(&[], |l| &l[..]));
    }
    for i in 0..lists.len() {
        for j in i + 1..lists.len() {
            let mut p = pairs.clone();
            let merged = merge_two(&lists[i], &lists[j], &mut p);
            let mut rest: Vec<Vec<u32>> = lists
                .iter()
                .enumerate()
                .filter(|&(k, _)| k != i && k != j)
                .map(|(_, l)| l.clone())
                .collect();
            rest.push(merged);
            every_order(rest, p, done);
        }
    }
}

/// The lists merged in balanced pairs, level by level.
fn balanced(mut lists: Vec<Vec<u32>>, pairs: &mut Vec<(u32, u32)>) -> Vec<u32> {
    while lists.len() > 1 {
        let mut next = Vec::with_capacity(lists.len().div_ceil(2));
        let mut it = lists.into_iter();
        while let Some(a) = it.next() {
            next.push(match it.next() {
                Some(b) => merge_two(&a, &b, pairs),
                None => a,
            });
        }
        lists = next;
    }
    lists.pop().unwrap_or_default()
}

/// The comparators of `pairs` that the wires of the sorted positions `keep` depend on (`sorted`:
/// the wire of each position after all of `pairs`), and those wires.
fn pruned(pairs: &[(u32, u32)], sorted: &[u32], keep: &[usize]) -> Pruned {
    let wires: Vec<usize> = keep.iter().map(|&p| sorted[p] as usize).collect();
    let pairs: Vec<(usize, usize)> = pairs
        .iter()
        .map(|&(i, j)| (i as usize, j as usize))
        .collect();
    let kept = network::pruned(&pairs, &wires)
        .iter()
        .map(|c| (c.i as u32, c.j as u32))
        .collect();
    (kept, wires)
}

/// Batcher's odd–even merge of the sorted lists of wires `a` and `b`, padded with `+inf`
/// (`None`), emitting the comparators of real values into `pairs`; the merged list of wires.
fn merge_two(a: &[u32], b: &[u32], pairs: &mut Vec<(u32, u32)>) -> Vec<u32> {
    let half = a.len().max(b.len()).next_power_of_two();
    let mut slots: Vec<Option<u32>> = vec![None; 2 * half];
    for (s, &w) in slots.iter_mut().zip(a) {
        *s = Some(w);
    }
    for (s, &w) in slots[half..].iter_mut().zip(b) {
        *s = Some(w);
    }
    odd_even_merge(&mut slots, 0, 2 * half, 1, pairs);
    slots.into_iter().map_while(|s| s).collect()
}

/// Batcher's recursive merge of `v[lo..lo + n]` with stride `r`, its two halves sorted.
fn odd_even_merge(
    v: &mut [Option<u32>],
    lo: usize,
    n: usize,
    r: usize,
    pairs: &mut Vec<(u32, u32)>,
) {
    let step = 2 * r;
    if step < n {
        odd_even_merge(v, lo, n, step, pairs);
        odd_even_merge(v, lo + r, n, step, pairs);
        for i in (lo + r..lo + n - r).step_by(step) {
            compare(v, i, i + r, pairs);
        }
    } else {
        compare(v, lo, lo + r, pairs);
    }
}

/// The comparator of positions `i < j`: emitted on the wires for two real values; a real value
/// below `+inf` stays; `+inf` below a real value swaps the labels.
fn compare(v: &mut [Option<u32>], i: usize, j: usize, pairs: &mut Vec<(u32, u32)>) {
    match (v[i], v[j]) {
        (Some(x), Some(y)) => pairs.push((x, y)),
        (None, Some(_)) => v.swap(i, j),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::order;
    use super::*;
    use crate::ir::network::batcher_pairs;

    /// Runs comparators on `v`: after `(i, j)`, `v[i] <= v[j]`.
    fn apply(pairs: &[(u32, u32)], v: &mut [u8]) {
        for &(i, j) in pairs {
            let (i, j) = (i as usize, j as usize);
            if v[j] < v[i] {
                v.swap(i, j);
            }
        }
    }

    /// Every 0-1 box whose columns are sorted (a column is its count of ones), for every
    /// position: the merged network's wire holds the sorted value, so it does for any values.
    #[test]
    fn selects_every_position_of_every_sorted_0_1_box() {
        for (cols, rows) in [
            (1, 1),
            (2, 3),
            (3, 3),
            (4, 2),
            (3, 5),
            (5, 5),
            (5, 3),
            (7, 1),
        ] {
            let n = cols * rows;
            for p in 0..n {
                let net = merge(cols, rows, p, p.max(n / 2));
                let combos = (rows + 1).pow(cols as u32);
                for mut code in 0..combos {
                    let mut v = vec![0u8; n];
                    for c in 0..cols {
                        let ones = code % (rows + 1);
                        code /= rows + 1;
                        for r in rows - ones..rows {
                            v[c * rows + r] = 1;
                        }
                    }
                    let mut sorted = v.clone();
                    sorted.sort_unstable();
                    apply(&net.pairs, &mut v);
                    assert_eq!(v[net.out.0], sorted[p], "{cols}x{rows} position {p}");
                    assert_eq!(v[net.out.1], sorted[p.max(n / 2)], "{cols}x{rows} upper");
                }
            }
        }
    }

    /// Sorted columns plus the merge cost fewer comparators a pixel than the plain network for
    /// the medians of 5×5 and 7×7 boxes (the figures in the module docs).
    #[test]
    fn columns_cost_fewer_comparators_than_the_plain_network() {
        for (k, cost) in [(5, 9 + 74), (7, 16 + 205)] {
            let n = k * k;
            let column = batcher_pairs(k).len();
            let merged = merge(k, k, n / 2, n / 2).pairs.len();
            let plain = order::pruned(n, &[n / 2, n / 2]).len();
            eprintln!("{k}x{k}: column {column} + merge {merged}, plain {plain}");
            assert_eq!(column + merged, cost);
            assert!(column + merged < plain, "{k}x{k}");
        }
    }
}
