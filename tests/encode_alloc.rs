//! The encoder allocates nothing per record in steady state (issue 4: a reused buffer, no
//! allocation per record), with and without credentials, directly and through the FIFO; and an
//! unusually large record's buffer is given back afterwards.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io;

use agentx_wire::control::OutputFifo;
use agentx_wire::encode::{CredentialSet, Encoder};
use agentx_wire::json;

/// Counts allocations made by the current thread while counting is on.
struct Counting;

thread_local! {
    static ON: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if ON.with(|on| on.get()) {
            COUNT.with(|c| c.set(c.get() + 1));
        }
        // SAFETY: forwarding the caller's layout to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if ON.with(|on| on.get()) {
            COUNT.with(|c| c.set(c.get() + 1));
        }
        // SAFETY: forwarding a block from `System.alloc` with its layout.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations(f: impl FnOnce()) -> usize {
    COUNT.with(|c| c.set(0));
    ON.with(|on| on.set(true));
    f();
    ON.with(|on| on.set(false));
    COUNT.with(|c| c.get())
}

fn sink() -> impl FnMut(&[u8]) -> io::Result<usize> + Send {
    |frame: &[u8]| Ok(std::hint::black_box(frame).len())
}

#[test]
fn steady_state_encoding_allocates_nothing() {
    let stream = agentx_wire::sample::realistic_stream(9, 512 << 10);
    let docs: Vec<json::Document<'_>> = stream
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| json::parse(l).unwrap())
        .collect();
    // The JSON writer's own allocations are not the encoder's: measure them apart.
    let mut plain = Vec::new();
    for d in &docs {
        plain.clear();
        json::write_value(&mut plain, d.root());
    }
    let writer_allocs = allocations(|| {
        for d in &docs {
            plain.clear();
            json::write_value(&mut plain, d.root());
        }
    });
    eprintln!("json::write_value alone: {writer_allocs} allocations");
    let creds: Vec<String> = (0..64)
        .map(|i| format!("sk-zq-{i:04}-never-seen"))
        .collect();
    for set in [CredentialSet::empty(), CredentialSet::new(&creds).unwrap()] {
        let n = set.len();
        let enc = Encoder::new(sink());
        enc.set_credentials(set).unwrap();
        // Warm up: buffers grow to the largest record once.
        for d in &docs {
            enc.encode(|out| json::write_value(out, d.root())).unwrap();
        }
        let count = allocations(|| {
            for d in &docs {
                enc.encode(|out| json::write_value(out, d.root())).unwrap();
            }
        });
        eprintln!(
            "{} records, {n} credentials: {count} allocations",
            docs.len()
        );
        assert_eq!(count, writer_allocs, "{n} credentials");
    }
}

#[test]
fn steady_state_fifo_push_allocates_nothing_beyond_the_record() {
    let enc = Encoder::new(sink());
    enc.set_credentials(CredentialSet::new(["sk-zq-secret"]).unwrap())
        .unwrap();
    let fifo: OutputFifo<&'static [u8]> = OutputFifo::new(enc);
    for _ in 0..100 {
        fifo.push(br#"{"type":"keep_alive"}"#).unwrap();
    }
    let count = allocations(|| {
        for _ in 0..1000 {
            fifo.push(br#"{"type":"keep_alive"}"#).unwrap();
        }
    });
    assert_eq!(count, 0);
}

#[test]
fn a_large_record_is_given_back() {
    let enc = Encoder::new(sink());
    let big = vec![b'a'; 4 << 20];
    enc.encode(|out| {
        out.push(b'"');
        out.extend_from_slice(&big);
        out.push(b'"');
    })
    .unwrap();
    // After the shrink, the next small record reuses a small buffer; a second large record
    // has to grow it again (an allocation), which shows the first one was released.
    let small = allocations(|| enc.encode(|out| out.extend_from_slice(b"{}")).unwrap());
    assert_eq!(small, 0);
    let regrow = allocations(|| {
        enc.encode(|out| {
            out.push(b'"');
            out.extend_from_slice(&big);
            out.push(b'"');
        })
        .unwrap()
    });
    assert!(regrow > 0, "the large buffer was kept");
}
