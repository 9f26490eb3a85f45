//! The wasm entry point: takes over the server-rendered page and makes it live.

use std::panic::PanicHookInfo;

use wasm_bindgen::prelude::wasm_bindgen;

/// How `wasm_split`'s loader panics when a chunk cannot be fetched.
const CHUNK_LOAD_FAILED: &str = "load callback should succeed";
/// Session storage key: when this tab last reloaded for a missing chunk (ms).
const RELOADED_AT: &str = "corral-chunk-reload";

#[wasm_bindgen]
pub fn hydrate() {
    std::panic::set_hook(Box::new(on_panic));
    // Every route is lazy (app::routes): hydrating waits for the route's chunk, so it
    // runs as a task rather than before this function returns.
    wasm_bindgen_futures::spawn_local(async {
        let Some(body) = leptos::prelude::document().body() else {
            return;
        };
        leptos::mount::hydrate_from_async(body.clone(), app::App)
            .await
            .forget();
        // Browser tests wait for this before using what only works once hydrated.
        let _ = body.set_attribute("data-hydrated", "true");
    });
}

/// Logs the panic to the console; if a chunk could not be fetched, reloads the page.
///
/// A tab opened before Corral was upgraded asks for chunks of the build it started
/// with, which the upgraded server no longer has. Reloading gets the page and the
/// scripts of the running build (the URL already names the page the user went to).
/// Once a minute at most, so a chunk that is missing from the running build too does
/// not reload the tab for ever; the panic stays in the console for that case.
fn on_panic(info: &PanicHookInfo) {
    console_error_panic_hook::hook(info);
    let message = info
        .payload()
        .downcast_ref::<&str>()
        .map(|text| text.to_string())
        .or_else(|| info.payload().downcast_ref::<String>().cloned())
        .unwrap_or_default();
    if !message.contains(CHUNK_LOAD_FAILED) {
        return;
    }
    let Some(window) = web_sys::window() else {
        return;
    };
    let now = js_sys::Date::now();
    let storage = window.session_storage().ok().flatten();
    let last = storage
        .as_ref()
        .and_then(|storage| storage.get_item(RELOADED_AT).ok().flatten())
        .and_then(|value| value.parse::<f64>().ok());
    if last.is_some_and(|last| now - last < 60_000.0) {
        return;
    }
    if let Some(storage) = &storage {
        let _ = storage.set_item(RELOADED_AT, &now.to_string());
    }
    let _ = window.location().reload();
}
