//! The store suite of `agentx` (tests/README.md): the durable session store (PROFILE §11) and the
//! blob store through the real binary: durability, crashes, full disks, reclamation, two processes
//! sharing one AgentX home. Run one module as `cargo test -p agentx --test store <name>`.

use agentx_test_support::harness;
mod store;

mod attach_reclaim;
mod store_backlog;
mod store_crash;
mod store_disk_full;
mod store_durable;
mod upload_shared_home;
