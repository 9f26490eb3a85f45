//! The browser side of the live job view: an `EventSource` on the job's event
//! stream (browser only; compiled for `hydrate`).
//!
//! The stream starts after the newest event the page read. `EventSource` reconnects
//! by itself after a network drop and sends `Last-Event-ID`, which the server resumes
//! from; events at or before the last one applied are dropped anyway, so nothing is
//! ever shown twice. Events are not applied one by one as they arrive (a thousand-node
//! job sends hundreds a second): they wait for the next animation frame and are
//! applied together, so the page changes at most once a frame.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use leptos::prelude::*;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{EventSource, MessageEvent};

use api_types::{EventView, JobView, TaskGroupView};

use crate::pages::clusters::job::LiveSignals;
use crate::server_fns::jobs::show::load_task_groups;

/// How long counts may lag behind the tasks' states: at most one read a second.
const RECOUNT_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

/// Follows job `job_id`'s stream after event `after`: new events go to `on_batch`,
/// together once per animation frame; the rest of what the page shows live to `live`.
pub fn follow(
    job_id: String,
    after: i64,
    live: LiveSignals,
    on_batch: impl Fn(Vec<EventView>) + 'static,
) {
    let LiveSignals { job, finished, now } = live;
    let url = format!("/api/v1/jobs/{job_id}/stream?after={after}");
    let Ok(source) = EventSource::new(&url) else {
        leptos::logging::error!("cannot open the job's event stream");
        return;
    };
    let waiting: Rc<RefCell<Vec<EventView>>> = Rc::default();
    let frame_asked = Rc::new(Cell::new(false));
    // Set when the page goes: a frame asked for before then still comes, and the
    // page's signals it would write are gone.
    let stopped = Rc::new(Cell::new(false));
    let frame_stopped = stopped.clone();
    let on_batch = Rc::new(on_batch);
    let on_message = Closure::<dyn Fn(MessageEvent)>::new(move |message: MessageEvent| {
        let Some(data) = message.data().as_string() else {
            return;
        };
        match serde_json::from_str::<EventView>(&data) {
            Ok(event) => waiting.borrow_mut().push(event),
            Err(error) => {
                leptos::logging::error!("unreadable job event: {error}");
                return;
            }
        }
        if frame_asked.replace(true) {
            return;
        }
        let (waiting, frame_asked, on_batch, stopped) = (
            waiting.clone(),
            frame_asked.clone(),
            on_batch.clone(),
            frame_stopped.clone(),
        );
        request_animation_frame(move || {
            frame_asked.set(false);
            if stopped.get() {
                return;
            }
            let batch = std::mem::take(&mut *waiting.borrow_mut());
            on_batch(batch);
        });
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
            let _ = job.try_set(ended);
        }
        let _ = finished.try_update(|count| *count += 1);
    });
    let _ = source.add_event_listener_with_callback("end", on_end.as_ref().unchecked_ref());
    let failure_source = source.clone();
    let on_failure = Closure::<dyn Fn(MessageEvent)>::new(move |_: MessageEvent| {
        failure_source.close();
        let _ = finished.try_update(|count| *count += 1);
    });
    let _ = source.add_event_listener_with_callback("failure", on_failure.as_ref().unchecked_ref());
    let ticker = set_interval_with_handle(
        move || {
            let _ = now.try_set(js_sys::Date::now() as i64);
        },
        std::time::Duration::from_secs(1),
    )
    .ok();
    // The closures live as long as the page shows this job.
    let handles = send_wrapper::SendWrapper::new((source, on_message, on_end, on_failure, stopped));
    on_cleanup(move || {
        let (source, .., stopped) = &*handles;
        stopped.set(true);
        source.close();
        if let Some(ticker) = ticker {
            ticker.clear();
        }
    });
}

/// Reads the job's counts by step again in a second, unless a read is already due
/// (`stale`): however many tasks change, the server is asked at most once a second.
pub fn recount_soon(
    job_id: String,
    groups: RwSignal<Vec<TaskGroupView>>,
    stale: StoredValue<bool>,
) {
    if stale.try_get_value().unwrap_or(true) {
        return;
    }
    stale.set_value(true);
    set_timeout(
        move || {
            leptos::task::spawn_local(async move {
                match load_task_groups(job_id).await {
                    Ok(fresh) => {
                        // The page may have gone meanwhile.
                        let _ = groups.try_set(fresh);
                    }
                    Err(error) => leptos::logging::error!("cannot read the job's counts: {error}"),
                }
                let _ = stale.try_set_value(false);
            });
        },
        RECOUNT_AFTER,
    );
}
