//! The process limit a fleet of agents hits first: open file descriptors (`RLIMIT_NOFILE`).
//!
//! Owns: reading the limit, raising the soft limit to the hard one, and spawning a child so
//! that running out of descriptors (`EMFILE`) first raises the soft limit and retries once,
//! then fails with the typed [`HostError::DescriptorLimit`] instead of a bare OS error. Each
//! agent a [`Client`](super::Client) spawned holds [`DESCRIPTORS_PER_AGENT`] descriptors in the
//! host while it runs (its stdin, stdout and stderr pipes); one an
//! `AsyncClient` spawned holds [`DESCRIPTORS_PER_ASYNC_AGENT`] (on Linux
//! tokio also waits for the child through a pidfd). A spawn briefly needs a few more (both
//! ends of each pipe, and std's exec-status pipe), so a soft limit of 1,024 (a common default)
//! stops a fleet of `AsyncClient`s near 250 agents, of `Client`s near 335.
//!
//! Must never: lower a limit, touch any other resource limit, or retry more than once.

use std::io;

use super::error::HostError;

/// Descriptors a running agent spawned by [`Client`](super::Client) holds in the host: its
/// stdin, stdout and stderr pipes.
pub const DESCRIPTORS_PER_AGENT: u32 = 3;

/// Descriptors a running agent spawned by `AsyncClient` holds in the
/// host: the three pipes and, on Linux, the pidfd tokio reaps the child through.
pub const DESCRIPTORS_PER_ASYNC_AGENT: u32 = if cfg!(target_os = "linux") { 4 } else { 3 };

/// The descriptor limits of this process; `u64::MAX` is unlimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DescriptorLimit {
    /// The soft limit: what `open`, `pipe` and `spawn` are held to now.
    pub soft: u64,
    /// The hard limit: how far an unprivileged process may raise the soft one.
    pub hard: u64,
}

/// The current `RLIMIT_NOFILE` of this process.
///
/// ```
/// let l = agentx_io::host::descriptor_limit();
/// assert!(l.soft <= l.hard);
/// ```
pub fn descriptor_limit() -> DescriptorLimit {
    let r = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    DescriptorLimit {
        soft: r.current.unwrap_or(u64::MAX),
        hard: r.maximum.unwrap_or(u64::MAX),
    }
}

/// Raises the soft `RLIMIT_NOFILE` to the hard limit (or, when the hard limit is unlimited,
/// as far as the kernel accepts: `fs.nr_open`, default 1,048,576). Returns the limits now in
/// force; never lowers them. A host that drives many agents calls this once at startup; the
/// clients' `spawn` also does it by itself the first time a spawn runs out of descriptors.
///
/// ```
/// let before = agentx_io::host::descriptor_limit();
/// let after = agentx_io::host::raise_descriptor_limit();
/// assert!(after.soft >= before.soft && after.hard == before.hard);
/// ```
pub fn raise_descriptor_limit() -> DescriptorLimit {
    use rustix::process::{setrlimit, Resource, Rlimit};
    let now = descriptor_limit();
    if now.soft >= now.hard {
        return now;
    }
    let mut targets = vec![now.hard];
    if now.hard == u64::MAX {
        // Linux refuses a NOFILE soft limit above `fs.nr_open` even when the hard one is
        // unlimited.
        targets = [nr_open(), Some(1 << 20)].into_iter().flatten().collect();
    }
    for want in targets {
        if want <= now.soft {
            continue;
        }
        let r = Rlimit {
            current: Some(want),
            maximum: (now.hard != u64::MAX).then_some(now.hard),
        };
        if setrlimit(Resource::Nofile, r).is_ok() {
            break;
        }
    }
    descriptor_limit()
}

fn nr_open() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/fs/nr_open")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// True for "this process has no descriptor left" (`EMFILE`) and "the system has none left"
/// (`ENFILE`).
fn out_of_descriptors(e: &io::Error) -> Option<bool> {
    let code = e.raw_os_error()?;
    if code == rustix::io::Errno::MFILE.raw_os_error() {
        Some(true)
    } else if code == rustix::io::Errno::NFILE.raw_os_error() {
        Some(false)
    } else {
        None
    }
}

/// Runs `spawn`; when it runs out of this process's descriptors, raises the soft limit and
/// retries once. Still out (or out system-wide): [`HostError::DescriptorLimit`], which says
/// that each running agent holds `per_agent` descriptors.
pub(crate) fn spawn_with_descriptors<T>(
    per_agent: u32,
    mut spawn: impl FnMut() -> io::Result<T>,
) -> Result<T, HostError> {
    let typed = |limit: DescriptorLimit, system: bool| HostError::DescriptorLimit {
        soft: limit.soft,
        hard: limit.hard,
        system,
        per_agent,
    };
    match spawn() {
        Ok(t) => Ok(t),
        Err(e) => match out_of_descriptors(&e) {
            None => Err(HostError::Io(e)),
            Some(false) => Err(typed(descriptor_limit(), true)),
            Some(true) => {
                let before = descriptor_limit();
                let after = raise_descriptor_limit();
                if after.soft <= before.soft {
                    return Err(typed(after, false));
                }
                match spawn() {
                    Ok(t) => Ok(t),
                    Err(e) => match out_of_descriptors(&e) {
                        None => Err(HostError::Io(e)),
                        Some(process) => Err(typed(descriptor_limit(), !process)),
                    },
                }
            }
        },
    }
}
