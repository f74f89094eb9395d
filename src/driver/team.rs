//! The driver's threads: the calling thread works, alongside helper threads that sleep between
//! runs and are kept off the caller's CPU.
//!
//! [`for_each_init`] hands out the items of a run in order from one shared counter, to the caller
//! and to up to `threads - 1` helpers, and returns once every helper that took part has finished.
//!
//! Why not a rayon pool. With `ThreadPool::install` the caller injects the job and sleeps, the
//! first worker wakes, and it wakes the second while the caller is often still on its way to
//! sleep. Linux then queues the second worker behind the first on one CPU: measured on this
//! project's 2-core machine, in most processes up to half of the two-thread runs of a light filter
//! ran at one-thread speed. Here nothing waits for the caller to sleep, and before a helper is woken its affinity is
//! set to the caller's CPUs minus the one the caller runs on, so the scheduler cannot queue it
//! behind the caller. With this scheme no run fell back to one-thread speed in the same test.
//!
//! Helpers are plain threads, started when a run first needs them and kept for later runs. Runs
//! on several caller threads at once take disjoint helpers: a run that finds none free proceeds
//! with fewer (at worst, on the caller alone), so no run waits for another.

use std::cell::UnsafeCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::{self, Thread};

/// Calls `work(state, item)` for every item, in order of a shared counter, on the calling thread
/// and up to `threads - 1` helpers; `init` makes one state per thread that takes part, when it
/// takes its first item. A panic in `work` or `init`, on any thread, is resumed on the caller
/// after every helper has stopped.
pub(crate) fn for_each_init<T, S>(
    threads: usize,
    items: &[T],
    init: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, &T) + Sync,
) where
    T: Sync,
{
    let next = AtomicUsize::new(0);
    let body = || {
        let mut state = None;
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else { break };
            work(state.get_or_insert_with(&init), item);
        }
    };
    let wanted = threads.min(items.len()).saturating_sub(1);
    let mut team = Team::post(wanted, &body);
    let own = catch_unwind(AssertUnwindSafe(body));
    let helper_panicked = team.finish();
    if let Err(panic) = own {
        std::panic::resume_unwind(panic);
    }
    if helper_panicked {
        panic!("an ndjit driver helper thread panicked");
    }
}

/// A helper's states.
const IDLE: u8 = 0;
/// A task is posted and not yet taken: the caller may still withdraw it.
const POSTED: u8 = 1;
const RUNNING: u8 = 2;

/// The caller's task, with its lifetime erased: it is only called between a helper taking it
/// (`POSTED` → `RUNNING`) and setting `IDLE`, and the caller does not return before then.
type Task = *const (dyn Fn() + Sync + 'static);

struct Helper {
    state: AtomicU8,
    task: UnsafeCell<Task>,
    panicked: AtomicBool,
    thread: Thread,
    placement: placement::Handle,
}

// SAFETY: `task` is written only by the caller that owns the helper, while the helper is `IDLE`,
// and read only by the helper thread after it has taken the task (Release/Acquire on `state`).
unsafe impl Sync for Helper {}
unsafe impl Send for Helper {}

/// Helpers not in use by any run, and the process they belong to: a child made by `fork` has
/// none of its parent's threads, so it starts helpers of its own.
static FREE: Mutex<(u32, Vec<Arc<Helper>>)> = Mutex::new((0, Vec::new()));

/// The free helpers of this process.
fn free_helpers() -> std::sync::MutexGuard<'static, (u32, Vec<Arc<Helper>>)> {
    let mut free = FREE.lock().unwrap_or_else(|p| p.into_inner());
    let pid = std::process::id();
    if free.0 != pid {
        *free = (pid, Vec::new());
    }
    free
}

impl Helper {
    /// Starts a helper thread; `None` if the system refuses one.
    fn spawn() -> Option<Arc<Helper>> {
        let (tx, rx) = mpsc::sync_channel(1);
        thread::Builder::new()
            .name("ndjit-helper".into())
            .spawn(move || {
                let me = Arc::new(Helper {
                    state: AtomicU8::new(IDLE),
                    task: UnsafeCell::new(std::ptr::null::<fn()>() as Task),
                    panicked: AtomicBool::new(false),
                    thread: thread::current(),
                    placement: placement::Handle::current(),
                });
                if tx.send(me.clone()).is_ok() {
                    me.serve();
                }
            })
            .ok()?;
        rx.recv().ok()
    }

    /// The helper thread's loop: sleep until a task is posted, run it, report.
    fn serve(&self) {
        loop {
            thread::park();
            // A stale wake-up (the task was withdrawn, or already run) finds no posted task.
            if self
                .state
                .compare_exchange(POSTED, RUNNING, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                continue;
            }
            // SAFETY: the task was written before `POSTED` (Release), and the caller keeps it
            // alive until it sees `IDLE`.
            let task = unsafe { &**self.task.get() };
            if catch_unwind(AssertUnwindSafe(task)).is_err() {
                self.panicked.store(true, Ordering::Relaxed);
            }
            self.state.store(IDLE, Ordering::Release);
        }
    }
}

/// The helpers of one run.
struct Team {
    helpers: Vec<Arc<Helper>>,
}

impl Team {
    /// Takes up to `n` helpers (starting new ones when none are free), places them off the
    /// caller's CPU, posts `task` to each and wakes them.
    fn post(n: usize, task: &(dyn Fn() + Sync)) -> Team {
        let mut helpers = Vec::with_capacity(n);
        if n > 0 {
            let free = &mut free_helpers().1;
            helpers.extend(free.drain(free.len().saturating_sub(n)..));
        }
        while helpers.len() < n {
            match Helper::spawn() {
                Some(h) => helpers.push(h),
                None => break,
            }
        }
        if !helpers.is_empty() {
            let away = placement::away_from_caller();
            // SAFETY: only the lifetime is erased; see `Task`.
            let task: Task = unsafe { std::mem::transmute(task) };
            for h in &helpers {
                h.placement.apply(away.as_ref());
                // SAFETY: the helper is IDLE and owned by this run.
                unsafe { *h.task.get() = task };
                h.state.store(POSTED, Ordering::Release);
                h.thread.unpark();
            }
        }
        Team { helpers }
    }

    /// Withdraws the tasks no helper has taken, waits for the helpers running theirs, and gives
    /// the helpers back; whether any of them panicked.
    fn finish(&mut self) -> bool {
        let mut panicked = false;
        for h in self.helpers.drain(..) {
            let mut spins = 0u32;
            loop {
                match h
                    .state
                    .compare_exchange(POSTED, IDLE, Ordering::Acquire, Ordering::Acquire)
                {
                    Ok(_) | Err(IDLE) => break,
                    // It is finishing its last item: that is at most one item's time.
                    Err(_) => {
                        spins += 1;
                        if spins < 1 << 12 {
                            std::hint::spin_loop();
                        } else {
                            thread::yield_now();
                        }
                    }
                }
            }
            panicked |= h.panicked.swap(false, Ordering::Relaxed);
            free_helpers().1.push(h);
        }
        panicked
    }
}

impl Drop for Team {
    /// Reached with helpers left only when the caller's `for_each_init` itself unwinds before
    /// `finish`: the helpers must still stop using the caller's task before its frame goes.
    fn drop(&mut self) {
        self.finish();
    }
}

/// Where helpers may run: the caller's CPUs but the caller's own (Linux; elsewhere, anywhere).
mod placement {
    #[cfg(target_os = "linux")]
    pub(super) use linux::*;

    #[cfg(target_os = "linux")]
    mod linux {
        use std::mem::{size_of, zeroed};
        use std::sync::Mutex;

        pub(crate) type CpuSet = libc::cpu_set_t;

        /// The CPUs the calling thread may run on, less the one it runs on now (unless that is
        /// the only one); `None` if the system does not say.
        pub(crate) fn away_from_caller() -> Option<CpuSet> {
            // SAFETY: plain system calls on a zeroed set of the size passed.
            unsafe {
                let mut set: CpuSet = zeroed();
                if libc::sched_getaffinity(0, size_of::<CpuSet>(), &mut set) != 0 {
                    return None;
                }
                let cpu = libc::sched_getcpu();
                Some(without(set, usize::try_from(cpu).ok()?))
            }
        }

        /// `set` less `cpu`, when that leaves at least one CPU.
        pub(crate) fn without(mut set: CpuSet, cpu: usize) -> CpuSet {
            // SAFETY: the CPU_* functions index the set's bits, and `cpu` is checked in range.
            unsafe {
                if cpu < libc::CPU_SETSIZE as usize
                    && libc::CPU_ISSET(cpu, &set)
                    && libc::CPU_COUNT(&set) > 1
                {
                    libc::CPU_CLR(cpu, &mut set);
                }
            }
            set
        }

        /// A helper thread's affinity, set only when it changes (a system call per run
        /// otherwise).
        pub(crate) struct Handle {
            tid: libc::pid_t,
            applied: Mutex<Option<CpuSet>>,
        }

        impl Handle {
            /// The calling thread's.
            pub(crate) fn current() -> Handle {
                Handle {
                    // SAFETY: a plain system call.
                    tid: unsafe { libc::gettid() },
                    applied: Mutex::new(None),
                }
            }

            pub(crate) fn apply(&self, set: Option<&CpuSet>) {
                let Some(set) = set else { return };
                let mut applied = self.applied.lock().unwrap_or_else(|p| p.into_inner());
                // SAFETY: compares two whole sets.
                if applied
                    .as_ref()
                    .is_some_and(|a| unsafe { libc::CPU_EQUAL(a, set) })
                {
                    return;
                }
                // A placement hint: if the system refuses it, the helper runs where it may.
                // SAFETY: a system call on a valid set for a live thread of this process.
                if self.tid > 0
                    && unsafe { libc::sched_setaffinity(self.tid, size_of::<CpuSet>(), set) } == 0
                {
                    *applied = Some(*set);
                }
            }

            /// The thread's affinity now.
            #[cfg(test)]
            pub(crate) fn affinity(&self) -> Option<CpuSet> {
                // SAFETY: as in `away_from_caller`.
                unsafe {
                    let mut set: CpuSet = zeroed();
                    (libc::sched_getaffinity(self.tid, size_of::<CpuSet>(), &mut set) == 0)
                        .then_some(set)
                }
            }
        }
    }

    #[cfg(not(target_os = "linux"))]
    mod other {
        pub(crate) struct CpuSet;
        pub(crate) fn away_from_caller() -> Option<CpuSet> {
            None
        }
        pub(crate) struct Handle;
        impl Handle {
            pub(crate) fn current() -> Handle {
                Handle
            }
            pub(crate) fn apply(&self, _: Option<&CpuSet>) {}
        }
    }
    #[cfg(not(target_os = "linux"))]
    pub(super) use other::*;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    /// Every item is worked exactly once, and no more states are made than threads.
    #[test]
    fn every_item_once_and_one_state_per_thread() {
        for threads in [1, 2, 3, 8] {
            let items: Vec<usize> = (0..1000).collect();
            let seen: Vec<AtomicU32> = (0..1000).map(|_| AtomicU32::new(0)).collect();
            let states = AtomicUsize::new(0);
            for_each_init(
                threads,
                &items,
                || states.fetch_add(1, Ordering::Relaxed),
                |_, &i| {
                    // Enough work per item that the helpers get some.
                    std::hint::black_box((0..2000).fold(0u64, |a, b| a ^ (b * i as u64)));
                    seen[i].fetch_add(1, Ordering::Relaxed);
                },
            );
            assert!(seen.iter().all(|s| s.load(Ordering::Relaxed) == 1));
            let s = states.load(Ordering::Relaxed);
            assert!(
                (1..=threads).contains(&s),
                "{s} states for {threads} threads"
            );
        }
    }

    #[test]
    fn no_items_no_calls() {
        let calls = AtomicUsize::new(0);
        for_each_init(
            4,
            &[] as &[u8],
            || calls.fetch_add(1, Ordering::Relaxed),
            |_, _| {
                calls.fetch_add(1, Ordering::Relaxed);
            },
        );
        assert_eq!(calls.load(Ordering::Relaxed), 0);
    }

    /// A panic on a helper, or on the caller, reaches the caller; the helpers serve later runs.
    #[test]
    fn panics_reach_the_caller_and_the_team_recovers() {
        let items: Vec<usize> = (0..64).collect();
        for bad in [0, 63] {
            let r = std::panic::catch_unwind(|| {
                for_each_init(
                    2,
                    &items,
                    || (),
                    |_, &i| {
                        std::thread::sleep(std::time::Duration::from_micros(200));
                        assert_ne!(i, bad, "item {i} fails");
                    },
                )
            });
            assert!(r.is_err(), "the panic of item {bad} was lost");
        }
        let sum = AtomicUsize::new(0);
        for_each_init(
            2,
            &items,
            || (),
            |_, &i| {
                sum.fetch_add(i, Ordering::Relaxed);
            },
        );
        assert_eq!(sum.load(Ordering::Relaxed), 63 * 64 / 2);
    }

    /// Runs from several threads at once share the helpers without waiting for each other.
    #[test]
    fn concurrent_runs_are_independent() {
        let items: Vec<u64> = (0..5000).collect();
        thread::scope(|s| {
            let runs: Vec<_> = (0..4)
                .map(|k| {
                    let items = &items;
                    s.spawn(move || {
                        let sum = std::sync::atomic::AtomicU64::new(0);
                        for_each_init(
                            3,
                            items,
                            || (),
                            |_, &i| {
                                sum.fetch_add(i * k, Ordering::Relaxed);
                            },
                        );
                        sum.into_inner()
                    })
                })
                .collect();
            for (k, r) in runs.into_iter().enumerate() {
                assert_eq!(r.join().unwrap(), 4999 * 5000 / 2 * k as u64);
            }
        });
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn helpers_are_kept_off_the_callers_cpu() {
        use std::mem::zeroed;
        let set = |cpus: &[usize]| {
            // SAFETY: a zeroed set is the empty set.
            let mut s: placement::CpuSet = unsafe { zeroed() };
            for &c in cpus {
                // SAFETY: `c` < 64 < CPU_SETSIZE.
                unsafe { libc::CPU_SET(c, &mut s) };
            }
            s
        };
        let cpus = |s: &placement::CpuSet| -> Vec<usize> {
            // SAFETY: `c` < 64 < CPU_SETSIZE.
            (0..64)
                .filter(|&c| unsafe { libc::CPU_ISSET(c, s) })
                .collect()
        };
        assert_eq!(cpus(&placement::without(set(&[2, 3]), 2)), [3]);
        assert_eq!(cpus(&placement::without(set(&[0, 1, 5]), 5)), [0, 1]);
        // The only CPU is kept; a CPU outside the set changes nothing.
        assert_eq!(cpus(&placement::without(set(&[4]), 4)), [4]);
        assert_eq!(cpus(&placement::without(set(&[0, 1]), 7)), [0, 1]);

        // And a real helper gets that set.
        let helper = Helper::spawn().expect("a helper thread");
        let away = placement::away_from_caller().expect("the caller's CPUs");
        helper.placement.apply(Some(&away));
        let now = helper.placement.affinity().expect("the helper's CPUs");
        assert_eq!(cpus(&now), cpus(&away));
        free_helpers().1.push(helper);
    }
}
