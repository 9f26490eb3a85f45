//! Times as people read them: "3 h 20 min", "in 2 d 4 h", "12.4 s".

/// A duration in milliseconds as its two largest units.
pub fn duration(ms: i64) -> String {
    let ms = ms.max(0);
    if ms < 60_000 {
        // Tenths in whole numbers: formatting a float to a precision is slow, and a job
        // page names the duration of every task it lists.
        let tenths = (ms + 50) / 100;
        return format!("{}.{} s", tenths / 10, tenths % 10);
    }
    let minutes = ms / 60_000;
    let (days, hours, minutes) = (minutes / 1440, minutes / 60 % 24, minutes % 60);
    match (days, hours) {
        (0, 0) => format!("{minutes} min"),
        (0, _) => format!("{hours} h {minutes} min"),
        _ => format!("{days} d {hours} h"),
    }
}

/// What a lease ending at `expires_ms` looks like at `now_ms`: to the second in its
/// last hour, where a countdown matters.
pub fn lease_left(expires_ms: Option<i64>, now_ms: i64) -> String {
    match expires_ms {
        None => "no lease limit".to_owned(),
        Some(at) if at <= now_ms => "expired".to_owned(),
        Some(at) if at - now_ms < 3_600_000 => {
            let seconds = (at - now_ms) / 1000;
            format!("ends in {} min {:02} s", seconds / 60, seconds % 60)
        }
        Some(at) => format!("ends in {}", duration(at - now_ms)),
    }
}

/// A lease's time left, counting down in the browser once a second.
#[leptos::component]
pub fn LeaseLeft(expires_ms: Option<i64>) -> impl leptos::IntoView {
    use leptos::prelude::*;
    let now = RwSignal::new(now_ms());
    Effect::new(move |_| {
        if expires_ms.is_none() {
            return;
        }
        let ticker =
            set_interval_with_handle(move || now.set(now_ms()), std::time::Duration::from_secs(1))
                .ok();
        on_cleanup(move || {
            if let Some(ticker) = ticker {
                ticker.clear();
            }
        });
    });
    view! { <span data-testid="lease-left">{move || lease_left(expires_ms, now.get())}</span> }
}

/// Milliseconds since the epoch, on whichever side this runs.
pub fn now_ms() -> i64 {
    #[cfg(feature = "hydrate")]
    {
        js_sys::Date::now() as i64
    }
    #[cfg(not(feature = "hydrate"))]
    {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| {
                i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
            })
    }
}

/// A UTC timestamp, `2026-11-23 17:04 UTC` (the calendar is chrono's; its `format`
/// is left out because the strftime machinery would grow the browser bundle).
pub fn timestamp(ms: i64) -> String {
    use chrono::{Datelike, Timelike};
    match chrono::DateTime::from_timestamp_millis(ms) {
        Some(at) => format!(
            "{:04}-{:02}-{:02} {:02}:{:02} UTC",
            at.year(),
            at.month(),
            at.day(),
            at.hour(),
            at.minute()
        ),
        // Beyond chrono's range (±262,000 years): say so rather than invent a date.
        None => "(no date)".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(duration(12_400), "12.4 s");
        assert_eq!(duration(0), "0.0 s");
        assert_eq!(duration(12_449), "12.4 s");
        assert_eq!(duration(12_450), "12.5 s");
        assert_eq!(duration(59_999), "60.0 s");
        assert_eq!(duration(5 * 60_000), "5 min");
        assert_eq!(duration(200 * 60_000), "3 h 20 min");
        assert_eq!(duration(52 * 3_600_000), "2 d 4 h");
    }

    #[test]
    fn leases() {
        assert_eq!(lease_left(None, 0), "no lease limit");
        assert_eq!(lease_left(Some(10), 20), "expired");
        assert_eq!(lease_left(Some(3_600_000), 0), "ends in 1 h 0 min");
        assert_eq!(lease_left(Some(3_599_999), 0), "ends in 59 min 59 s");
        assert_eq!(lease_left(Some(65_000), 0), "ends in 1 min 05 s");
    }

    #[test]
    fn timestamps_are_utc_dates() {
        assert_eq!(timestamp(0), "1970-01-01 00:00 UTC");
        assert_eq!(timestamp(1_795_443_840_000), "2026-11-23 14:24 UTC");
    }
}
