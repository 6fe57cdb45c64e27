//! What an agent's own requests can make a host hold (issue 46): at most
//! `MAX_PENDING_PERMISSIONS` (256) permission requests are with the callback at once, each a
//! thread or a task, and one more is denied at once with `TOO_MANY_PERMISSION_REQUESTS`; the
//! async client holds at most `MAX_QUEUED_ANSWERS` (1,024) answers the agent has not read, then
//! stops reading the agent's stdout until it does, so an agent that asks without reading its
//! input stalls. Nothing is lost: every request is answered once, in request order where the
//! answers are immediate.

use std::io::{BufRead, BufReader, Write};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use agentx_io::host::{
    AsyncClient, AsyncClientOptions, Client, ClientOptions, PermissionAnswer,
    ToolPermissionRequest, MAX_PENDING_PERMISSIONS, MAX_QUEUED_ANSWERS,
    TOO_MANY_PERMISSION_REQUESTS,
};
use serde_json::Value;

fn can_use_tool(id: usize) -> String {
    format!(
        r#"{{"type":"control_request","request_id":"r{id}","request":{{"subtype":"can_use_tool","tool_name":"Bash","input":{{"command":"ls"}},"tool_use_id":"toolu_{id}"}}}}"#
    )
}

/// A gate the callbacks wait at until the test opens it.
#[derive(Clone, Default)]
struct Gate(Arc<(Mutex<bool>, Condvar)>);

impl Gate {
    fn wait(&self) {
        let (m, cv) = &*self.0;
        let mut open = m.lock().unwrap();
        while !*open {
            open = cv.wait(open).unwrap();
        }
    }
    fn open(&self) {
        let (m, cv) = &*self.0;
        *m.lock().unwrap() = true;
        cv.notify_all();
    }
}

fn parse(line: &str) -> (String, String, String) {
    let v: Value = serde_json::from_str(line).unwrap();
    let r = &v["response"];
    (
        r["request_id"].as_str().unwrap().to_owned(),
        r["response"]["behavior"].as_str().unwrap().to_owned(),
        r["response"]["message"].as_str().unwrap_or("").to_owned(),
    )
}

#[test]
fn the_client_decides_256_permission_requests_at_once_and_denies_one_more() {
    let gate = Gate::default();
    let entered = Arc::new(AtomicUsize::new(0));
    let options = ClientOptions::default().can_use_tool({
        let (gate, entered) = (gate.clone(), Arc::clone(&entered));
        move |_: &ToolPermissionRequest| {
            entered.fetch_add(1, Ordering::SeqCst);
            gate.wait();
            Ok(PermissionAnswer::allow())
        }
    });
    let (host_in_r, host_in_w) = std::io::pipe().unwrap();
    let (agent_out_r, mut agent_out_w) = std::io::pipe().unwrap();
    let _client = Client::attach(agent_out_r, host_in_w, options);
    let mut from_host = BufReader::new(host_in_r);
    for id in 0..=MAX_PENDING_PERMISSIONS {
        writeln!(agent_out_w, "{}", can_use_tool(id)).unwrap();
    }
    // The 257th is answered while the 256 wait at the gate.
    let mut line = String::new();
    from_host.read_line(&mut line).unwrap();
    let over = format!("r{MAX_PENDING_PERMISSIONS}");
    assert_eq!(
        parse(&line),
        (over, "deny".into(), TOO_MANY_PERMISSION_REQUESTS.into())
    );
    gate.open();
    let mut allowed = std::collections::BTreeSet::new();
    for _ in 0..MAX_PENDING_PERMISSIONS {
        line.clear();
        from_host.read_line(&mut line).unwrap();
        let (id, behavior, _) = parse(&line);
        assert_eq!(behavior, "allow", "{line}");
        assert!(allowed.insert(id), "answered twice: {line}");
    }
    assert_eq!(entered.load(Ordering::SeqCst), MAX_PENDING_PERMISSIONS);
    // The slots are free again: the next request goes to the callback.
    writeln!(agent_out_w, "{}", can_use_tool(999)).unwrap();
    line.clear();
    from_host.read_line(&mut line).unwrap();
    assert_eq!(parse(&line), ("r999".into(), "allow".into(), String::new()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_async_client_decides_256_permission_requests_at_once_and_denies_one_more() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let release = Arc::new(tokio::sync::Semaphore::new(0));
    let options = AsyncClientOptions::default().can_use_tool({
        let release = Arc::clone(&release);
        move |_: ToolPermissionRequest| {
            let release = Arc::clone(&release);
            async move {
                release.acquire().await.unwrap().forget();
                Ok(PermissionAnswer::allow())
            }
        }
    });
    let (host_side, agent_side) = tokio::io::duplex(1 << 20);
    let (host_r, host_w) = tokio::io::split(host_side);
    let (agent_r, mut agent_w) = tokio::io::split(agent_side);
    let _client = AsyncClient::attach(host_r, host_w, options);
    let mut from_host = tokio::io::BufReader::new(agent_r);
    for id in 0..=MAX_PENDING_PERMISSIONS {
        let line = format!("{}\n", can_use_tool(id));
        agent_w.write_all(line.as_bytes()).await.unwrap();
    }
    let mut line = String::new();
    from_host.read_line(&mut line).await.unwrap();
    let over = format!("r{MAX_PENDING_PERMISSIONS}");
    assert_eq!(
        parse(&line),
        (over, "deny".into(), TOO_MANY_PERMISSION_REQUESTS.into())
    );
    release.add_permits(MAX_PENDING_PERMISSIONS + 1);
    let mut allowed = std::collections::BTreeSet::new();
    for _ in 0..MAX_PENDING_PERMISSIONS {
        line.clear();
        from_host.read_line(&mut line).await.unwrap();
        let (id, behavior, _) = parse(&line);
        assert_eq!(behavior, "allow", "{line}");
        assert!(allowed.insert(id), "answered twice: {line}");
    }
    agent_w
        .write_all(format!("{}\n", can_use_tool(999)).as_bytes())
        .await
        .unwrap();
    line.clear();
    from_host.read_line(&mut line).await.unwrap();
    assert_eq!(parse(&line), ("r999".into(), "allow".into(), String::new()));
}

/// An agent's stdout of `total` permission requests, at most one per read, counting the
/// requests it began to hand out.
struct Requests {
    next: usize,
    total: usize,
    line: Vec<u8>,
    at: usize,
    handed: Arc<AtomicUsize>,
}

impl tokio::io::AsyncRead for Requests {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let me = &mut *self;
        if me.at == me.line.len() && me.next < me.total {
            me.line = format!("{}\n", can_use_tool(me.next)).into_bytes();
            me.at = 0;
            me.next += 1;
            me.handed.store(me.next, Ordering::SeqCst);
        }
        let n = buf.remaining().min(me.line.len() - me.at);
        buf.put_slice(&me.line[me.at..me.at + n]);
        me.at += n;
        Poll::Ready(Ok(()))
    }
}

/// The agent's stdin: takes nothing until it is opened, then everything (kept for the test).
#[derive(Clone, Default)]
struct Stdin {
    open: Arc<AtomicBool>,
    waker: Arc<Mutex<Option<Waker>>>,
    taken: Arc<Mutex<Vec<u8>>>,
}

impl Stdin {
    fn open(&self) {
        self.open.store(true, Ordering::SeqCst);
        if let Some(w) = self.waker.lock().unwrap().take() {
            w.wake();
        }
    }
}

impl tokio::io::AsyncWrite for Stdin {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        if !self.open.load(Ordering::SeqCst) {
            *self.waker.lock().unwrap() = Some(cx.waker().clone());
            if !self.open.load(Ordering::SeqCst) {
                return Poll::Pending;
            }
        }
        self.taken.lock().unwrap().extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_does_not_read_its_answers_stalls_at_1024_and_loses_none() {
    let total = 5 * MAX_QUEUED_ANSWERS;
    let handed = Arc::new(AtomicUsize::new(0));
    let output = Requests {
        next: 0,
        total,
        line: Vec::new(),
        at: 0,
        handed: Arc::clone(&handed),
    };
    let stdin = Stdin::default();
    // No callback: every request is denied at once, each answer queued behind the closed stdin.
    let client = Arc::new(AsyncClient::attach(
        output,
        stdin.clone(),
        AsyncClientOptions::default(),
    ));
    // The host takes every record (the requests are records too), so `recv`'s own bound
    // never stops the reading: only the answers' does.
    let received = tokio::spawn({
        let client = Arc::clone(&client);
        async move {
            let mut n = 0;
            while client.recv().await.is_some() {
                n += 1;
            }
            n
        }
    });
    let mut last = usize::MAX;
    loop {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let now = handed.load(Ordering::SeqCst);
        if now == last {
            break;
        }
        last = now;
    }
    // One read past the bound, and the tasks deciding when it was reached.
    let most = MAX_QUEUED_ANSWERS + 1 + MAX_PENDING_PERMISSIONS;
    assert!(
        last <= most,
        "{last} requests read while the agent read no answer (at most {most})"
    );
    stdin.open();
    assert_eq!(received.await.unwrap(), 0, "requests are not records");
    // The last decisions may still be on their way to the writer.
    let lines = || bytecount(&stdin.taken.lock().unwrap());
    for _ in 0..2000 {
        if lines() >= total {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let taken = String::from_utf8(stdin.taken.lock().unwrap().clone()).unwrap();
    let mut ids: Vec<usize> = taken
        .lines()
        .map(|l| parse(l).0[1..].parse().unwrap())
        .collect();
    assert_eq!(ids.len(), total, "every request answered once");
    ids.sort_unstable();
    assert!(ids.iter().enumerate().all(|(i, &id)| i == id));
}

fn bytecount(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}
