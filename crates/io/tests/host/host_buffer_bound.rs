//! The blocking client's record queue is bounded (issue 46, `ClientOptions::max_buffered_records`
//! and `max_buffered_bytes`): with nobody calling `recv`, the client stops reading the agent's
//! output once the queue is full, so backpressure reaches the agent; a `recv` loop started
//! later receives every record, in order. A property test drives random interleavings of the
//! agent's writes and `recv` calls and checks the bound and the order after every step.

use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentx_io::host::{Client, ClientOptions};

/// Every record is exactly this long (LF included), so bytes read count records.
pub(crate) const LINE: usize = 200;

fn record(i: usize) -> Vec<u8> {
    let head = format!(
        r#"{{"type":"stream_event","event":{{"type":"ping"}},"parent_tool_use_id":null,"uuid":"3f1e7948-5c1f-4c1f-8e2c-{i:012x}","session_id":"93ba9bd5-b18d-4283-afcb-95d00a53b0a9","pad":""#
    );
    let mut line = head.into_bytes();
    line.resize(LINE - 3, b'p');
    line.extend_from_slice(b"\"}\n");
    line
}

/// An agent's stdout of `total` records, handing out at most `per_read` records per read and
/// counting the records it handed out.
struct Flood {
    next: usize,
    total: usize,
    per_read: usize,
    handed: Arc<AtomicUsize>,
}

impl Read for Flood {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = (buf.len() / LINE)
            .min(self.per_read)
            .min(self.total - self.next);
        for k in 0..n {
            buf[k * LINE..(k + 1) * LINE].copy_from_slice(&record(self.next + k));
        }
        self.next += n;
        self.handed.store(self.next, Ordering::SeqCst);
        Ok(n * LINE)
    }
}

fn flood(total: usize, per_read: usize, options: ClientOptions) -> (Client, Arc<AtomicUsize>) {
    let handed = Arc::new(AtomicUsize::new(0));
    let reader = Flood {
        next: 0,
        total,
        per_read,
        handed: Arc::clone(&handed),
    };
    (Client::attach(reader, std::io::sink(), options), handed)
}

/// Waits until the client has not read for 200 ms (it stopped at its bound) or everything was
/// read. A slow machine can only make the wait end early, never the bound look tighter.
fn settle(handed: &AtomicUsize, total: usize) -> usize {
    let mut last = handed.load(Ordering::SeqCst);
    let mut since = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(10));
        let now = handed.load(Ordering::SeqCst);
        if now == total {
            return now;
        }
        if now != last {
            (last, since) = (now, Instant::now());
        } else if since.elapsed() > Duration::from_millis(200) {
            return now;
        }
    }
}

/// The sequence number of a record (the tail of its `uuid`).
pub(crate) fn number(
    item: Result<agentx_wire::wire::OutputRecord<'static>, agentx_io::host::HostError>,
) -> usize {
    let record = item.expect("a record");
    let shown = format!("{record:?}");
    let at = shown
        .find("3f1e7948-5c1f-4c1f-8e2c-")
        .expect("the numbered uuid")
        + 24;
    usize::from_str_radix(&shown[at..at + 12], 16).unwrap()
}

#[test]
fn with_nobody_calling_recv_the_client_stops_at_its_bound_and_loses_nothing() {
    let total = 20_000;
    // 64 KiB reads, as from a pipe: 327 records a read.
    let (client, handed) = flood(total, 65_536 / LINE, ClientOptions::default());
    let read = settle(&handed, total);
    let per_read = 65_536 / LINE;
    assert!(
        read <= 1024 + per_read,
        "{read} records read with nobody calling recv (bound 1024 + one read)"
    );
    for i in 0..total {
        assert_eq!(number(client.recv().expect("every record")), i);
    }
    assert!(client.recv().is_none());
}

#[test]
fn the_byte_budget_bounds_the_queue_too() {
    let total = 20_000;
    let options = ClientOptions::default().max_buffered_bytes(100 * LINE);
    let (client, handed) = flood(total, 65_536 / LINE, options);
    let read = settle(&handed, total);
    // Counted per read: the budget may be passed by one read.
    assert!(read <= 100 + 65_536 / LINE, "{read} records read");
    for i in 0..total {
        assert_eq!(number(client.recv().unwrap()), i);
    }
}

/// xorshift64*: a seeded, dependency-free sequence for the interleavings.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) % n
    }
}

#[test]
fn random_interleavings_of_reads_and_recvs_keep_the_bound_and_the_order() {
    for seed in 1..=8u64 {
        let (total, bound) = (1500, 1 + (seed as usize * 7) % 40);
        // One record per read, so the queue's length is exactly read minus received.
        let options = ClientOptions::default().max_buffered_records(bound);
        let (client, handed) = flood(total, 1, options);
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut received = 0;
        while received < total {
            match rng.below(3) {
                // Let the helper read on its own.
                0 => std::thread::sleep(Duration::from_millis(rng.below(8))),
                _ => {
                    for _ in 0..rng.below(2 * bound as u64 + 2) {
                        if received == total {
                            break;
                        }
                        assert_eq!(number(client.recv().unwrap()), received, "seed {seed}");
                        received += 1;
                    }
                }
            }
            let queued = handed.load(Ordering::SeqCst) - received;
            // One read may be under way when the queue fills.
            assert!(
                queued <= bound + 1,
                "seed {seed}: {queued} queued, bound {bound}"
            );
        }
        assert!(client.recv().is_none(), "seed {seed}");
    }
}

/// The async client's stdout of `total` records, as [`Flood`].
struct AsyncFlood(Flood);

impl tokio::io::AsyncRead for AsyncFlood {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let n = self.0.read(buf.initialize_unfilled())?;
        buf.advance(n);
        std::task::Poll::Ready(Ok(()))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_async_client_stops_at_its_bound_and_loses_nothing() {
    use agentx_io::host::{AsyncClient, AsyncClientOptions};
    let total = 20_000;
    let handed = Arc::new(AtomicUsize::new(0));
    let reader = AsyncFlood(Flood {
        next: 0,
        total,
        per_read: 65_536 / LINE,
        handed: Arc::clone(&handed),
    });
    let client = AsyncClient::attach(reader, tokio::io::sink(), AsyncClientOptions::default());
    let read = {
        let handed = Arc::clone(&handed);
        tokio::task::spawn_blocking(move || settle(&handed, total))
            .await
            .unwrap()
    };
    assert!(
        read <= 1024 + 65_536 / LINE,
        "{read} records read with nobody calling recv"
    );
    for i in 0..total {
        assert_eq!(number(client.recv().await.expect("every record")), i);
    }
    assert!(client.recv().await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_async_client_keeps_its_bound_under_random_interleavings() {
    use agentx_io::host::{AsyncClient, AsyncClientOptions};
    for seed in 1..=4u64 {
        let (total, bound) = (1000, 1 + (seed as usize * 11) % 30);
        let handed = Arc::new(AtomicUsize::new(0));
        let reader = AsyncFlood(Flood {
            next: 0,
            total,
            per_read: 1,
            handed: Arc::clone(&handed),
        });
        let options = AsyncClientOptions::default().max_buffered_records(bound);
        let client = AsyncClient::attach(reader, tokio::io::sink(), options);
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut received = 0;
        while received < total {
            if rng.below(3) == 0 {
                tokio::time::sleep(Duration::from_millis(rng.below(5))).await;
            } else {
                for _ in 0..rng.below(2 * bound as u64 + 2) {
                    if received == total {
                        break;
                    }
                    assert_eq!(
                        number(client.recv().await.unwrap()),
                        received,
                        "seed {seed}"
                    );
                    received += 1;
                }
            }
            let queued = handed.load(Ordering::SeqCst) - received;
            assert!(
                queued <= bound + 1,
                "seed {seed}: {queued} queued, bound {bound}"
            );
        }
        assert!(client.recv().await.is_none(), "seed {seed}");
    }
}
