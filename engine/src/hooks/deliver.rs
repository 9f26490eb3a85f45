//! The delivery loop each server and worker process runs: it looks for due deliveries,
//! claims each with one conditional update (so of several processes, one sends it),
//! sends it signed, records the attempt, and schedules a retry with exponential
//! backoff until a day has passed since the event. A process killed while sending
//! leaves a claim that runs out, and another loop sends the delivery again: at least
//! once, with the same delivery id and body every time.

use std::sync::Arc;
use std::time::Duration;

use api_types::DeliveryState;
use futures::StreamExt;

use super::send::{call, rendered, Call};
use crate::store::hooks::{AttemptRecord, ClaimedDelivery};
use crate::store::{now_ms, Store, StoreError};

/// How the loop paces itself.
#[derive(Debug, Clone, Copy)]
pub struct DeliverySettings {
    /// How often it looks for due deliveries.
    pub poll: Duration,
    /// How long a claim lasts: longer than any call (10 s) with room to record it.
    pub claim: Duration,
    /// The wait before the second attempt; doubled for each further one.
    pub first_backoff: Duration,
    /// The longest wait between attempts.
    pub max_backoff: Duration,
    /// How long after the event attempts go on.
    pub give_up_after: Duration,
    /// Deliveries sent at once.
    pub concurrency: usize,
}

impl Default for DeliverySettings {
    fn default() -> Self {
        Self {
            poll: Duration::from_millis(500),
            claim: Duration::from_secs(60),
            first_backoff: Duration::from_secs(10),
            max_backoff: Duration::from_secs(3600),
            give_up_after: Duration::from_secs(24 * 3600),
            concurrency: 8,
        }
    }
}

fn ms(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

impl DeliverySettings {
    /// When attempt `attempt + 1` is due after attempt `attempt` failed at `now_ms`,
    /// or `None` when the delivery is given up.
    pub fn retry_at(&self, attempt: i64, created_at_ms: i64, now_ms: i64) -> Option<i64> {
        let doublings = u32::try_from(attempt.saturating_sub(1).clamp(0, 30)).unwrap_or(30);
        let wait = ms(self.first_backoff)
            .saturating_mul(1_i64 << doublings)
            .min(ms(self.max_backoff));
        let at = now_ms.saturating_add(wait);
        (at <= created_at_ms.saturating_add(ms(self.give_up_after))).then_some(at)
    }
}

/// Sends the store's due deliveries; cheap to clone.
#[derive(Clone)]
pub struct Deliverer {
    store: Store,
    settings: DeliverySettings,
    /// Who claims (a fresh id per process).
    worker: Arc<str>,
}

impl Deliverer {
    pub fn new(store: Store, settings: DeliverySettings) -> Self {
        Self {
            store,
            settings,
            worker: Arc::from(format!("hooks-{}", uuid::Uuid::new_v4())),
        }
    }

    /// Runs the loop until the task is aborted. Errors are logged and the loop goes on:
    /// the deliveries stay due in the store.
    pub fn spawn(self) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            loop {
                match self.run_once().await {
                    // A full round may have left more due: look again at once.
                    Ok(sent) if sent >= self.batch() => continue,
                    Ok(_) => {}
                    Err(error) => self.store.reachability().failed(
                        "sending hook deliveries",
                        &error,
                        error.is_unreachable(),
                    ),
                }
                tokio::time::sleep(self.settings.poll).await;
            }
        })
    }

    fn batch(&self) -> usize {
        self.settings.concurrency.max(1) * 4
    }

    /// Claims and sends what is due now; returns how many were sent.
    pub async fn run_once(&self) -> Result<usize, StoreError> {
        let now = now_ms();
        let batch = i64::try_from(self.batch()).unwrap_or(32);
        let due = self.store.due_deliveries(now, batch).await?;
        let mut claimed = Vec::with_capacity(due.len());
        for (id, attempts) in due {
            if let Some(delivery) = self
                .store
                .claim_delivery(&id, attempts, &self.worker, now, ms(self.settings.claim))
                .await?
            {
                claimed.push(delivery);
            }
        }
        let sent = claimed.len();
        let results: Vec<Result<(), StoreError>> = futures::stream::iter(claimed)
            .map(|delivery| self.send(delivery))
            .buffer_unordered(self.settings.concurrency.max(1))
            .collect()
            .await;
        for result in results {
            result?;
        }
        Ok(sent)
    }

    async fn send(&self, delivery: ClaimedDelivery) -> Result<(), StoreError> {
        let secret = self.store.hook_secret(&delivery.hook_id).await?;
        let event = serde_json::from_str::<serde_json::Value>(&delivery.body)
            .ok()
            .and_then(|body| body["event"].as_str().map(str::to_owned))
            .unwrap_or_default();
        let outcome = call(
            self.store.hook_network(),
            Call {
                url: &delivery.url,
                secret: &secret,
                id: &delivery.id,
                event: &event,
                body: rendered(delivery.format, &delivery.body),
                timeout: Duration::from_millis(u64::try_from(delivery.timeout_ms).unwrap_or(0)),
            },
            0,
        )
        .await;
        let now = now_ms();
        let (next_state, retry_at_ms) = if outcome.succeeded() {
            (DeliveryState::Delivered, now)
        } else {
            match self
                .settings
                .retry_at(delivery.attempt, delivery.created_at_ms, now)
            {
                Some(at) => (DeliveryState::Pending, at),
                None => (DeliveryState::Failed, now),
            }
        };
        if !outcome.succeeded() {
            tracing::info!(
                delivery = %delivery.id,
                attempt = delivery.attempt,
                status = ?outcome.status,
                error = outcome.error.as_deref().unwrap_or(""),
                next = %next_state,
                "hook delivery not accepted"
            );
        }
        let record = AttemptRecord {
            status: outcome.status,
            error: outcome.error.clone(),
            response_excerpt: outcome.excerpt.clone(),
            elapsed_ms: ms(outcome.elapsed),
            next_state,
            retry_at_ms,
        };
        self.store
            .record_delivery_attempt(&delivery, &self.worker, &record, now)
            .await
    }
}

/// The default delivery loop over `store` (obeying its hook network): what `corral
/// serve` and `corral worker` start.
pub fn start(store: Store) -> tokio::task::JoinHandle<()> {
    Deliverer::new(store, DeliverySettings::default()).spawn()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_back_off_and_stop_after_a_day() {
        let settings = DeliverySettings::default();
        let created = 0;
        assert_eq!(settings.retry_at(1, created, 1_000), Some(11_000));
        assert_eq!(settings.retry_at(2, created, 1_000), Some(21_000));
        assert_eq!(settings.retry_at(3, created, 1_000), Some(41_000));
        // Capped at an hour between attempts.
        assert_eq!(settings.retry_at(20, created, 1_000), Some(3_601_000));
        // Not past a day after the event.
        let day = 24 * 3_600_000;
        assert_eq!(settings.retry_at(30, created, day - 1_000), None);
    }
}
