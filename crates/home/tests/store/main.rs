//! The store suite of `agentx-home` (tests/README.md): the session store on disk (resume, session
//! picking). Run one module as `cargo test -p agentx-home --test store <name>`.

mod store_pick;
mod store_resume;
