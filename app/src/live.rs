//! The browser side of the live job view: an `EventSource` on the job's event
//! stream (browser only; compiled for `hydrate`).
//!
//! The stream starts after the last event the page already shows. `EventSource`
//! reconnects by itself after a network drop and sends `Last-Event-ID`, which the
//! server resumes from; events at or before the last one shown are dropped anyway,
//! so nothing is ever shown twice.

use leptos::prelude::*;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{EventSource, MessageEvent};

use api_types::{EventView, JobView};

use crate::pages::clusters::job::LiveSignals;

/// Follows job `job_id`'s stream: each new event goes to `on_event`, the rest of
/// what the page shows live to `live`.
pub fn follow(job_id: String, live: LiveSignals, on_event: impl Fn(EventView) + Clone + 'static) {
    let LiveSignals {
        events,
        job,
        finished,
        now,
    } = live;
    let after = events.with_untracked(|events| events.last().map_or(0, |event| event.id));
    let url = format!("/api/v1/jobs/{job_id}/stream?after={after}");
    let Ok(source) = EventSource::new(&url) else {
        leptos::logging::error!("cannot open the job's event stream");
        return;
    };
    let on_message = Closure::<dyn Fn(MessageEvent)>::new(move |message: MessageEvent| {
        let Some(data) = message.data().as_string() else {
            return;
        };
        match serde_json::from_str::<EventView>(&data) {
            Ok(event) => on_event(event),
            Err(error) => leptos::logging::error!("unreadable job event: {error}"),
        }
    });
    source.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    let end_source = source.clone();
    let on_end = Closure::<dyn Fn(MessageEvent)>::new(move |message: MessageEvent| {
        end_source.close();
        if let Some(ended) = message
            .data()
            .as_string()
            .and_then(|data| serde_json::from_str::<JobView>(&data).ok())
        {
            job.set(ended);
        }
        finished.update(|count| *count += 1);
    });
    let _ = source.add_event_listener_with_callback("end", on_end.as_ref().unchecked_ref());
    let failure_source = source.clone();
    let on_failure = Closure::<dyn Fn(MessageEvent)>::new(move |_: MessageEvent| {
        failure_source.close();
        finished.update(|count| *count += 1);
    });
    let _ = source.add_event_listener_with_callback("failure", on_failure.as_ref().unchecked_ref());
    let ticker = set_interval_with_handle(
        move || now.set(js_sys::Date::now() as i64),
        std::time::Duration::from_secs(1),
    )
    .ok();
    // The closures live as long as the page shows this job.
    let handles = send_wrapper::SendWrapper::new((source, on_message, on_end, on_failure));
    on_cleanup(move || {
        let (source, ..) = &*handles;
        source.close();
        if let Some(ticker) = ticker {
            ticker.clear();
        }
    });
}
