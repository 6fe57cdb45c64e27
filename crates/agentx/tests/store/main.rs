//! The store suite (one test binary; tests/README.md): the durable session store (PROFILE §11:
//! durability, crashes, full disks, resume, session picking), attachment admission and media
//! normalization on their corpora, the blob store and its reclamation, and two processes sharing
//! one AgentX home. Run one module as `cargo test --test store <name>`.

use agentx_test_support::harness;
mod store;

mod attach_reclaim;
mod store_crash;
mod store_disk_full;
mod store_durable;
mod upload_shared_home;
