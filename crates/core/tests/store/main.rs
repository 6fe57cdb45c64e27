//! The store suite of `agentx-core` (tests/README.md): attachment admission and media
//! normalization (PNG, JPEG, PDF, chunks) on their corpora. Run one module as
//! `cargo test -p agentx-core --test store <name>`.

use agentx_test_support::conformance as common;

mod attach_chunks;
mod attach_jpeg;
mod attach_pdf;
mod attach_png;
