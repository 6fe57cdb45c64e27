//! The store suite (one test binary; tests/README.md): the durable session store (PROFILE §11:
//! durability, crashes, full disks, resume, session picking), attachment admission and media
//! normalization on their corpora, the blob store and its reclamation, and two processes sharing
//! one AgentX home. Run one module as `cargo test --test store <name>`.

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/agentx.rs"]
mod harness;
#[path = "../common/store.rs"]
mod store;

mod attach_chunks;
mod attach_jpeg;
mod attach_pdf;
mod attach_png;
mod attach_reclaim;
mod attach_store;
mod store_crash;
mod store_disk_full;
mod store_durable;
mod store_pick;
mod store_resume;
mod upload_shared_home;
