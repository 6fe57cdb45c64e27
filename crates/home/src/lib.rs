//! agentx-home: AgentX home on disk, shared by the `agentx` and `agentx-wire` binaries.
//!
//! Owns the durable session store ([`store`]: `sessions/<id>/`, PROFILE §11) and the
//! content-addressed blob files with their manifest ledger ([`blobs`]: `attachments/`, the
//! [`agentx_core::attach::BlobBackend`] and [`agentx_core::model::BlobSource`] of the files).
//!
//! This is driver territory: it reads and writes files, under AgentX home only. Must never
//! decide a protocol rule (what to store, and when, is the session core's), store a key or an
//! endpoint, or echo more than 64 bytes of an input value in a diagnostic.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod blobs;
pub mod store;

pub use blobs::{FsBackend, FsBlobs};
