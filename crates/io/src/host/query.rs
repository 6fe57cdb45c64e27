//! `query()`: one prompt in, the session's records out, the process cleaned up when dropped
//! (the one-call helper of the official SDKs).

use std::time::Duration;

use super::client::{Client, ClientOptions, ExitReport};
use super::command::AgentCommand;
use super::error::HostError;
use super::stream::RecordItem;
use agentx_wire::wire::OutputRecord;

/// The records of one prompt: an iterator that ends after the turn's `result` record.
/// Dropping it kills the agent if it is still running.
#[derive(Debug)]
pub struct Query {
    client: Client,
    done: bool,
}

/// Starts `command`, sends `prompt` as a user message and returns its records.
///
/// ```no_run
/// use agentx_io::host::{query, AgentCommand, ClientOptions};
/// for record in query(&AgentCommand::stream_json("agentx"), "hello", ClientOptions::default())? {
///     println!("{}", record?.record_type());
/// }
/// # Ok::<(), agentx_io::host::HostError>(())
/// ```
pub fn query(
    command: &AgentCommand,
    prompt: &str,
    options: ClientOptions,
) -> Result<Query, HostError> {
    let client = Client::spawn(command, options)?;
    client.send_text(prompt)?;
    Ok(Query {
        client,
        done: false,
    })
}

impl Query {
    /// The client, for interrupts or other controls while the turn runs.
    ///
    /// ```no_run
    /// use agentx_io::host::{query, AgentCommand, ClientOptions};
    /// use std::time::Duration;
    /// let q = query(&AgentCommand::stream_json("agentx"), "!sleep 60000", ClientOptions::default())?;
    /// q.client().interrupt(Duration::from_secs(5))?;
    /// # Ok::<(), agentx_io::host::HostError>(())
    /// ```
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Ends input and waits for the agent to exit.
    ///
    /// ```no_run
    /// use agentx_io::host::{query, AgentCommand, ClientOptions};
    /// use std::time::Duration;
    /// let mut q = query(&AgentCommand::stream_json("agentx"), "hello", ClientOptions::default())?;
    /// let records: Vec<_> = q.by_ref().collect::<Result<_, _>>()?;
    /// assert_eq!(records.last().map(|r| r.record_type()), Some("result"));
    /// assert!(q.finish(Duration::from_secs(10))?.success());
    /// # Ok::<(), agentx_io::host::HostError>(())
    /// ```
    pub fn finish(self, timeout: Duration) -> Result<ExitReport, HostError> {
        self.client.close(timeout)
    }
}

impl Iterator for Query {
    type Item = RecordItem;

    fn next(&mut self) -> Option<RecordItem> {
        if self.done {
            return None;
        }
        let item = self.client.recv()?;
        if matches!(item, Ok(OutputRecord::Result(_))) {
            self.done = true;
            self.client.end_input();
        }
        Some(item)
    }
}
