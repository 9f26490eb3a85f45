//! A task's output on its way to the store: chunks from the SSH channel are batched
//! into `output` events (so a chatty step does not cost a transaction per line) and
//! kept, capped, for the attempt record.

use std::time::Duration;

use api_types::EventKind;
use tokio::sync::mpsc;

use super::events::EventWriter;
use crate::queue::{JobId, NewEvent, TaskRecordId, OUTPUT_CAP_BYTES};
use crate::ssh::{OutputChunk, OutputStream};

/// Output waits at most this long before it is written as an event.
const FLUSH_EVERY: Duration = Duration::from_millis(100);
/// Or until this much is pending.
const FLUSH_BYTES: usize = 16 * 1024;

/// The attempt's output as kept on its record (each stream capped).
#[derive(Debug, Default)]
pub(super) struct Captured {
    pub stdout: String,
    pub stderr: String,
}

/// Reads chunks until the sender is gone, writing events as it goes.
pub(super) async fn record(
    events: EventWriter,
    job_id: JobId,
    task_id: TaskRecordId,
    attempt: i64,
    mut chunks: mpsc::Receiver<OutputChunk>,
) -> Captured {
    let mut captured = (Vec::new(), Vec::new());
    let mut pending: Vec<(OutputStream, Vec<u8>)> = Vec::new();
    let mut pending_bytes = 0;
    let mut tick = tokio::time::interval(FLUSH_EVERY);
    loop {
        tokio::select! {
            chunk = chunks.recv() => match chunk {
                Some(chunk) => {
                    let kept = match chunk.stream {
                        OutputStream::Stdout => &mut captured.0,
                        // The attempt record keeps Corral's notes with the step's
                        // errors, where a reader of a failure looks.
                        OutputStream::Stderr | OutputStream::Notice => &mut captured.1,
                    };
                    let room = OUTPUT_CAP_BYTES.saturating_sub(kept.len());
                    kept.extend_from_slice(&chunk.bytes[..chunk.bytes.len().min(room)]);
                    pending_bytes += chunk.bytes.len();
                    match pending.last_mut() {
                        Some((stream, bytes)) if *stream == chunk.stream => {
                            bytes.extend_from_slice(&chunk.bytes);
                        }
                        _ => pending.push((chunk.stream, chunk.bytes)),
                    }
                    if pending_bytes >= FLUSH_BYTES {
                        flush(&events, &job_id, &task_id, attempt, &mut pending).await;
                        pending_bytes = 0;
                    }
                }
                None => break,
            },
            _ = tick.tick() => {
                flush(&events, &job_id, &task_id, attempt, &mut pending).await;
                pending_bytes = 0;
            }
        }
    }
    flush(&events, &job_id, &task_id, attempt, &mut pending).await;
    // Whatever is still carried is a truncated character at the very end: keep it lossy.
    if !pending.is_empty() {
        for (_, bytes) in pending.iter_mut() {
            *bytes = String::from_utf8_lossy(bytes).into_owned().into_bytes();
        }
        flush(&events, &job_id, &task_id, attempt, &mut pending).await;
    }
    Captured {
        stdout: String::from_utf8_lossy(&captured.0).into_owned(),
        stderr: String::from_utf8_lossy(&captured.1).into_owned(),
    }
}

async fn flush(
    events: &EventWriter,
    job_id: &JobId,
    task_id: &TaskRecordId,
    attempt: i64,
    pending: &mut Vec<(OutputStream, Vec<u8>)>,
) {
    // A character split between two chunks waits for its other half, so events never
    // hold a replacement character where the node sent valid UTF-8.
    let mut carried: Vec<(OutputStream, Vec<u8>)> = Vec::new();
    let mut ready = Vec::with_capacity(pending.len());
    for (stream, mut bytes) in pending.drain(..) {
        if let Err(error) = std::str::from_utf8(&bytes) {
            if error.error_len().is_none() {
                carried.push((stream, bytes.split_off(error.valid_up_to())));
            }
        }
        if bytes.is_empty() {
            continue;
        }
        let event = NewEvent {
            job_id: job_id.clone(),
            task_id: Some(task_id.clone()),
            attempt: Some(attempt),
            kind: EventKind::Output,
            stream: Some(stream),
            data: String::from_utf8_lossy(&bytes).into_owned(),
        };
        ready.push(event);
    }
    *pending = carried;
    events.write(ready).await;
}
