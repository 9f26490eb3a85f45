//! Corral's own notes about a job's steps (an image being built, a node adopted), read
//! from the job's events while a command waits for the job, so the reason for a wait
//! is on the terminal where the user waits.

use std::collections::HashSet;

use api_types::{EventKind, EventView, OutputStream};

use super::Client;

/// Events read per request; a job with more notices than this gets the rest on the
/// next poll.
const PAGE: u32 = 1000;

/// The notices of one job printed so far.
#[derive(Debug, Default)]
pub struct Notices {
    /// The last event read.
    after: i64,
    /// Texts already printed: many nodes waiting for the same image say the same thing
    /// once.
    shown: HashSet<String>,
}

impl Notices {
    /// Prints the job's notices that arrived since the last call, each text once,
    /// after `prefix`.
    pub async fn print_new(
        &mut self,
        client: &Client,
        job: &str,
        prefix: &str,
    ) -> anyhow::Result<()> {
        let events = client.job_events(job, self.after, PAGE).await?;
        for event in events {
            self.after = event.id;
            if let Some(text) = notice_text(&event) {
                if self.shown.insert(text.to_owned()) {
                    println!("{prefix}{text}");
                }
            }
        }
        Ok(())
    }
}

/// The text of a notice event, without Corral's `corral: ` prefix (the terminal says
/// who is speaking already).
fn notice_text(event: &EventView) -> Option<&str> {
    if event.kind != EventKind::Output || event.stream != Some(OutputStream::Notice) {
        return None;
    }
    let text = event.data.trim_end();
    Some(text.strip_prefix("corral: ").unwrap_or(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: EventKind, stream: Option<OutputStream>, data: &str) -> EventView {
        EventView {
            id: 1,
            task_id: Some("t".to_owned()),
            attempt: Some(1),
            at_ms: 0,
            kind,
            stream,
            data: data.to_owned(),
            task_state: None,
        }
    }

    #[test]
    fn only_notices_are_printed_and_without_the_prefix() {
        let cases = [
            (
                event(
                    EventKind::Output,
                    Some(OutputStream::Notice),
                    "corral: building an image\n",
                ),
                Some("building an image"),
            ),
            (
                event(EventKind::Output, Some(OutputStream::Stderr), "corral: x\n"),
                None,
            ),
            (
                event(EventKind::Output, Some(OutputStream::Stdout), "hello\n"),
                None,
            ),
            (event(EventKind::State, None, "succeeded"), None),
        ];
        for (event, expected) in &cases {
            assert_eq!(notice_text(event), *expected, "{event:?}");
        }
    }
}
