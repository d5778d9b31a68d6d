//! The page's memory made ready for a model on its way, while the worker decodes.
//!
//! A model taken from the worker lands in memory the page's module has just grown: fresh
//! pages, each faulted in by the copy that first writes it (on a busy machine about as dear
//! as the copy itself, and all of it after the hand-off, while the user waits). The page's
//! thread is idle while the worker decodes, so once the worker knows the model's size (its
//! memory guard's estimate, [`warm_memory`]), the page allocates a block of that size and
//! writes a byte of each 4 KiB page, a few milliseconds a step with the browser's turn
//! between. The block is freed when the model arrives ([`release`]): the allocator keeps
//! it as free space, and the columns the page then copies in are carved from pages
//! already written (docs/PERFORMANCE.md, "The page, one worker").

use std::cell::RefCell;
use std::mem::MaybeUninit;

use web_time::{Duration, Instant};

/// The least model worth warming for: below it the faults cost a millisecond or two.
const MIN_BYTES: usize = 8 << 20;
/// How long one step writes before the browser's turn.
const STEP: Duration = Duration::from_millis(8);
/// The memory's page size (Linux's), the stride of the writes.
const OS_PAGE: usize = 4 << 10;
/// Pages written between two looks at the clock (1 MiB).
const BATCH: usize = 256;

/// The block being warmed: its pages below `done` written.
struct Warm {
    block: Vec<u8>,
    done: usize,
}

thread_local! {
    static WARM: RefCell<Option<Warm>> = const { RefCell::new(None) };
}

/// Warms `bytes` of the page's memory for the model the worker is building (its estimate),
/// in steps between the browser's turns; nothing where the block cannot be allocated (the
/// page's memory near its 4 GiB) or the model is small. A block already warming is
/// replaced. `<body data-warm>` is the block's size (0: none).
pub fn warm_memory(bytes: f64) {
    release();
    let n = bytes.clamp(0.0, (u32::MAX >> 1) as f64) as usize;
    let mut block = Vec::new();
    let ok = n >= MIN_BYTES && block.try_reserve_exact(n).is_ok();
    if let Some(body) = super::document().and_then(|d| d.body()) {
        let _ = body
            .dataset()
            .set("warm", if ok { n } else { 0 }.to_string().as_str());
    }
    if ok {
        WARM.with(|w| *w.borrow_mut() = Some(Warm { block, done: 0 }));
        super::spawn(step);
    }
}

/// Frees the block (the model has arrived, or the load ended): its pages, written, are
/// the allocator's free space for the model's columns.
pub fn release() {
    WARM.with(|w| w.borrow_mut().take());
}

/// Writes pages for about [`STEP`], then yields to the browser until the next step.
fn step() {
    let more = WARM.with(|w| {
        let mut w = w.borrow_mut();
        let Some(warm) = w.as_mut() else {
            return false;
        };
        let until = Instant::now() + STEP;
        let spare: &mut [MaybeUninit<u8>] = warm.block.spare_capacity_mut();
        let len = spare.len();
        while warm.done < len {
            let end = len.min(warm.done + BATCH * OS_PAGE);
            for b in spare[warm.done..end].iter_mut().step_by(OS_PAGE) {
                b.write(0);
            }
            warm.done = end;
            if Instant::now() >= until {
                break;
            }
        }
        // The writes must happen: nothing reads the block before it is freed.
        std::hint::black_box(&warm.block);
        warm.done < len
    });
    if more {
        super::spawn(step);
    }
}
