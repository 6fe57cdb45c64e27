//! Decoding a line allocates nothing per string without escapes. A counting
//! global allocator watches a warmed-up parser.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    // Only the measuring thread counts: the test harness allocates on its own threads.
    static MEASURING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn count() {
    if MEASURING.with(|m| m.get()) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards its arguments unchanged to the system allocator.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn a_warm_parser_allocates_nothing_per_line() {
    use agentx_wire::json::Parser;
    let lines: [&[u8]; 3] = [
        br#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"hello \"world\"\n"},{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"/a/b.rs"}}]},"session_id":"s","uuid":"u"}"#,
        br#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"caf\u00e9 \ud83d\ude00"}},"parent_tool_use_id":null}"#,
        br#"{"type":"result","subtype":"success","total_cost_usd":null,"usage":{"input_tokens":12,"output_tokens":3},"is_error":false}"#,
    ];
    let mut parser = Parser::new();
    for line in lines {
        parser.parse(line).unwrap();
    }
    MEASURING.with(|m| m.set(true));
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    let mut strings = 0;
    for _ in 0..100 {
        for line in lines {
            let root = parser.parse(line).unwrap();
            // Borrowed access to names and unescaped values allocates nothing either.
            for (name, value) in root.as_object().unwrap().iter() {
                strings += name.decode().len();
                if let Some(s) = value.as_str() {
                    strings += s.as_plain().map_or(0, str::len);
                }
            }
        }
    }
    let after = ALLOCATIONS.load(Ordering::Relaxed);
    MEASURING.with(|m| m.set(false));
    assert!(strings > 0);
    assert_eq!(after - before, 0, "a warmed parser allocated while parsing");
}
