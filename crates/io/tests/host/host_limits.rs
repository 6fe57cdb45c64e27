//! The host client's own limits and bounds, for both clients: the input record's size at its
//! edge (PROFILE §2a), and calls and `close` that return by their deadlines whatever the
//! agent does with its pipes.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentx_io::host::{AsyncClient, AsyncClientOptions, Client, ClientOptions, HostError};
use agentx_wire::encode::DEFAULT_MAX_RECORD_LEN;

/// A writer that keeps every byte the client sends.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    /// The lengths of the lines sent so far (line feed excluded), and forgets them.
    fn take_lines(&self) -> Vec<usize> {
        let bytes = std::mem::take(&mut *self.0.lock().unwrap());
        assert!(bytes.is_empty() || bytes.ends_with(b"\n"));
        bytes
            .split(|&b| b == b'\n')
            .map(<[u8]>::len)
            .take(bytes.iter().filter(|&&b| b == b'\n').count())
            .collect()
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// One input record at the limit (8,388,608 bytes of JSON, PROFILE §2a) is sent; one byte
/// past it is refused with `RecordTooLarge` and nothing of it is written; the client is not
/// latched by the refusal: the next record goes out as usual. Blocking client.
#[test]
fn an_input_record_at_the_limit_is_sent_and_one_past_is_refused_without_latching() {
    let input = Captured::default();
    let client = Client::attach(std::io::empty(), input.clone(), ClientOptions::default());
    client.send_text("").unwrap();
    let overhead = input.take_lines()[0];
    let at_limit = "x".repeat(DEFAULT_MAX_RECORD_LEN - overhead);

    client.send_text(&at_limit).unwrap();
    assert_eq!(input.take_lines(), [DEFAULT_MAX_RECORD_LEN]);

    let past = "x".repeat(DEFAULT_MAX_RECORD_LEN - overhead + 1);
    for _ in 0..2 {
        match client.send_text(&past) {
            Err(e @ HostError::RecordTooLarge { max }) => {
                assert_eq!(max, DEFAULT_MAX_RECORD_LEN);
                assert_eq!(
                    e.to_string(),
                    "record not sent: longer than the agent's input line limit (8388608 bytes)"
                );
            }
            other => panic!("expected RecordTooLarge, got {other:?}"),
        }
        assert_eq!(
            input.take_lines(),
            [] as [usize; 0],
            "nothing of it written"
        );
    }
    client.send_text("after").unwrap();
    assert_eq!(input.take_lines(), [overhead + 5]);
    client.close(Duration::from_secs(5)).unwrap();
}

/// The same edge for the async client.
#[test]
fn the_async_client_refuses_one_record_past_the_limit_without_latching() {
    rt().block_on(async {
        let (w, mut r) = tokio::io::duplex(1 << 16);
        let client = AsyncClient::attach(tokio::io::empty(), w, AsyncClientOptions::default());
        let reader = tokio::spawn(async move {
            let mut all = Vec::new();
            tokio::io::AsyncReadExt::read_to_end(&mut r, &mut all)
                .await
                .unwrap();
            all
        });
        client.send_text("").unwrap();
        let past = "x".repeat(DEFAULT_MAX_RECORD_LEN);
        let e = client.send_text(&past).unwrap_err();
        assert!(
            matches!(
                e,
                HostError::RecordTooLarge {
                    max: DEFAULT_MAX_RECORD_LEN
                }
            ),
            "{e:?}"
        );
        client.send_text("after").unwrap();
        client.close(Duration::from_secs(5)).await.unwrap();
        let all = reader.await.unwrap();
        let lines: Vec<&[u8]> = all
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        assert_eq!(
            lines.len(),
            2,
            "the empty message and `after`, nothing of the refused one"
        );
        assert!(lines[1].windows(5).any(|w| w == b"after"));
    });
}

/// A file of its own for one test's scratch output.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("agentx-host-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Waits (bounded, as a hang guard) until `path` holds a pid, and returns it.
fn pid_in(path: &std::path::Path) -> u32 {
    for _ in 0..2000 {
        if let Some(pid) = std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return pid;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("no pid in {}", path.display());
}

/// True while `pid` runs (a zombie or a reaped process does not).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(false)
}

/// An agent that exits at once while a process it started in the background keeps its
/// stderr: `close` returns (it waited for the pipe's end for ever) with what was written by
/// then. A silent holder: stderr is the agent's own line. A flooding holder (`yes`): the
/// client stops reading, so the holder finds the pipe closed and ends (it kept a reader
/// thread at full speed for ever otherwise). Both clients.
#[test]
fn close_does_not_wait_for_a_descendant_that_holds_the_agents_stderr() {
    let agent = |name: &str, holder: &str| {
        let file = scratch(name);
        let _ = std::fs::remove_file(&file);
        let script = format!(
            "echo early >&2; {holder} & echo $! > '{}'; exit 0",
            file.display()
        );
        (
            agentx_io::host::AgentCommand::new("sh")
                .arg("-c")
                .arg(script),
            file,
        )
    };
    /// Runs `close` on a thread of its own and waits for it (bounded, as a hang guard).
    fn closed<T: Send + 'static>(close: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(close()).unwrap());
        rx.recv_timeout(Duration::from_secs(60))
            .expect("close returned")
    }
    for async_client in [false, true] {
        for flood in [false, true] {
            let holder = if flood { "yes held >&2" } else { "sleep 1000" };
            let (command, file) = agent(&format!("holder-{async_client}-{flood}"), holder);
            let report = closed(move || {
                if async_client {
                    rt().block_on(async {
                        let c = AsyncClient::spawn(&command, AsyncClientOptions::default())
                            .await
                            .unwrap();
                        c.close(Duration::from_secs(30)).await.unwrap()
                    })
                } else {
                    let c = Client::spawn(&command, ClientOptions::default()).unwrap();
                    c.close(Duration::from_secs(30)).unwrap()
                }
            });
            assert!(report.success(), "{:?}", report.status);
            assert!(
                report.stderr.starts_with(b"early\n"),
                "async {async_client}"
            );
            let pid = pid_in(&file);
            if flood {
                assert!(report.stderr[6..].starts_with(b"held\n"));
                // The pipe was closed by the client: `yes` ends on its next write.
                let mut waited = 0;
                while running(pid) && waited < 6000 {
                    std::thread::sleep(Duration::from_millis(5));
                    waited += 1;
                }
                assert!(
                    !running(pid),
                    "the flooding holder still runs: async {async_client}"
                );
            } else {
                assert_eq!(report.stderr, b"early\n");
                assert!(running(pid), "the silent holder outlived close");
                let _ = std::process::Command::new("kill")
                    .arg(pid.to_string())
                    .status();
            }
            let _ = std::fs::remove_file(&file);
        }
    }
}

/// An agent input that takes nothing until it is opened, then keeps every byte.
#[derive(Clone, Default)]
struct Gate(Arc<(Mutex<GateState>, std::sync::Condvar)>);

/// Whether the gate is open, and the bytes taken.
type GateState = (bool, Vec<u8>);

impl Write for Gate {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let (m, cv) = &*self.0;
        let mut g = m.lock().unwrap();
        while !g.0 {
            g = cv.wait(g).unwrap();
        }
        g.1.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Gate {
    fn open(&self) {
        let (m, cv) = &*self.0;
        m.lock().unwrap().0 = true;
        cv.notify_all();
    }
    /// Waits (bounded, as a hang guard) until `n` lines were taken; returns them as JSON.
    fn lines(&self, n: usize) -> Vec<serde_json::Value> {
        for _ in 0..6000 {
            let bytes = self.0 .0.lock().unwrap().1.clone();
            let lines: Vec<serde_json::Value> = bytes
                .split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .map(|l| serde_json::from_slice(l).unwrap())
                .collect();
            if lines.len() >= n {
                return lines;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        panic!("fewer than {n} lines were written");
    }
}

/// Runs `f` on a thread of its own and waits for it (bounded, as a hang guard).
fn within<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(f()).unwrap());
    rx.recv_timeout(Duration::from_secs(60)).expect("returned")
}

/// The blocking client's control call returns `Timeout` by its deadline when the agent does
/// not take its input (the request's write is stuck; it blocked in it for ever). What the
/// caller sends next is written after the request and its `control_cancel_request`
/// (WIRE-007), in that order, once the agent reads again.
#[test]
fn a_control_call_times_out_while_the_agent_takes_no_input_and_order_is_kept() {
    let gate = Gate::default();
    // The agent's output stays open (the stream does not end), and says nothing.
    let (output, _agent_out) = std::io::pipe().unwrap();
    let client = Arc::new(Client::attach(
        output,
        gate.clone(),
        ClientOptions::default(),
    ));
    let c = Arc::clone(&client);
    let e = within(move || c.interrupt(Duration::from_millis(200)));
    assert!(
        matches!(
            e,
            Err(HostError::Timeout {
                subtype: "interrupt"
            })
        ),
        "{e:?}"
    );
    let c = Arc::clone(&client);
    let sent = std::thread::spawn(move || c.send_text("after"));
    gate.open();
    sent.join().unwrap().unwrap();
    let lines = gate.lines(3);
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0]["type"], "control_request");
    assert_eq!(lines[0]["request"]["subtype"], "interrupt");
    assert_eq!(lines[1]["type"], "control_cancel_request");
    assert_eq!(lines[1]["request_id"], lines[0]["request_id"]);
    assert_eq!(lines[2]["type"], "user");
}
