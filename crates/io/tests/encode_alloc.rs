//! The encoder allocates nothing per record in steady state (a reused buffer, no
//! allocation per record), with and without credentials, directly and through the FIFO; and an
//! unusually large record's buffer is given back afterwards.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io;

use agentx_io::OutputFifo;
use agentx_wire::control::Outbox;
use agentx_wire::encode::{CredentialSet, FrameEncoder};
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
        // The sans-IO encoder, and the blocking driver around it.
        let mut frames = FrameEncoder::new();
        frames.set_credentials(set.clone()).unwrap();
        let enc = OutputFifo::new(sink());
        enc.set_credentials(set).unwrap();
        // Warm up: buffers grow to the largest record (twice: the driver's two frame buffers
        // take records in turn, whatever the parity of the record count).
        for d in docs.iter().chain(&docs) {
            frames.encode(&d.root()).unwrap();
            enc.push(&d.root()).unwrap();
        }
        let count = allocations(|| {
            for d in &docs {
                std::hint::black_box(frames.encode(&d.root()).unwrap());
            }
        });
        eprintln!(
            "FrameEncoder: {} records, {n} credentials: {count} allocations",
            docs.len()
        );
        assert_eq!(count, writer_allocs, "{n} credentials");
        let count = allocations(|| {
            for d in &docs {
                enc.push(&d.root()).unwrap();
            }
        });
        eprintln!(
            "OutputFifo: {} records, {n} credentials: {count} allocations",
            docs.len()
        );
        assert_eq!(count, writer_allocs, "{n} credentials");
    }
}

#[test]
fn steady_state_fifo_push_allocates_nothing_beyond_the_record() {
    let fifo = OutputFifo::new(sink());
    fifo.set_credentials(CredentialSet::new(["sk-zq-secret"]).unwrap())
        .unwrap();
    for _ in 0..100 {
        fifo.push(&br#"{"type":"keep_alive"}"#[..]).unwrap();
    }
    let count = allocations(|| {
        for _ in 0..1000 {
            fifo.push(&br#"{"type":"keep_alive"}"#[..]).unwrap();
        }
    });
    assert_eq!(count, 0);
}

#[test]
fn steady_state_outbox_allocates_nothing() {
    let mut encoder = FrameEncoder::new();
    let mut outbox = Outbox::new();
    let record = br#"{"type":"keep_alive"}"#;
    let cycle = |encoder: &mut FrameEncoder, outbox: &mut Outbox| {
        for _ in 0..8 {
            outbox.push(encoder.encode(&record[..]).unwrap()).unwrap();
        }
        while let Some(frame) = outbox.pop() {
            std::hint::black_box(frame);
        }
    };
    for _ in 0..10 {
        cycle(&mut encoder, &mut outbox);
    }
    let count = allocations(|| {
        for _ in 0..100 {
            cycle(&mut encoder, &mut outbox);
        }
    });
    assert_eq!(count, 0);
}

#[test]
fn a_large_record_is_given_back() {
    let enc = OutputFifo::new(sink());
    let big = [&b"\""[..], &vec![b'a'; 4 << 20], b"\""].concat();
    for _ in 0..4 {
        enc.push(&b"{}"[..]).unwrap();
    }
    enc.push(&big).unwrap();
    // The large frame buffer is dropped, not kept; the next small records reuse the small
    // buffers; a second large record has to grow one again (an allocation), which shows the
    // first one was released.
    let small = allocations(|| {
        for _ in 0..4 {
            enc.push(&b"{}"[..]).unwrap();
        }
    });
    assert_eq!(small, 0);
    let regrow = allocations(|| {
        enc.push(&big).unwrap();
    });
    assert!(regrow > 0, "the large buffer was kept");
}
