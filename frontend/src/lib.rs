//! The wasm entry point: takes over the server-rendered page and makes it live.

use wasm_bindgen::prelude::wasm_bindgen;

#[wasm_bindgen]
pub fn hydrate() {
    // A tab asking for a chunk of an older build reloads from the chunk loader
    // (wasm-split's RELOAD_ON_MISSING_CHUNK), before the split point gives up.
    console_error_panic_hook::set_once();
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
