//! The browser side of a node's Terminal button (compiled for `hydrate`): it loads the
//! terminal's own script on first use and asks it to open the clicked node's terminal.
//!
//! The terminal is xterm.js, which weighs more than the rest of the cluster page; it is
//! not in the wasm and not on any page until a Terminal button is clicked. The button
//! is marked `data-terminal-pending`, `terminal.js` is added to the page once (from the
//! bundle's scripts directory, found from the hydration script's own preload link), and
//! a `corral-terminal` event tells an already loaded script to look for the mark; a
//! script still loading looks for it when it starts. See `frontend/js/terminal.js`.

use wasm_bindgen::JsCast;

/// The id of the terminal's script element, so it is added once.
const SCRIPT_ID: &str = "corral-terminal-script";

/// Opens the terminal of the button `event` was clicked on.
pub fn open(event: &web_sys::MouseEvent) {
    if let Err(error) = try_open(event) {
        leptos::logging::error!("cannot open the terminal: {error:?}");
    }
}

fn try_open(event: &web_sys::MouseEvent) -> Result<(), wasm_bindgen::JsValue> {
    let document = web_sys::window()
        .and_then(|window| window.document())
        .ok_or("no document")?;
    let button: web_sys::Element = event.current_target().ok_or("no button")?.dyn_into()?;
    button.set_attribute("data-terminal-pending", "")?;
    if document.get_element_by_id(SCRIPT_ID).is_none() {
        // The hydration script preloads `…/corral-<hash>/corral.js`: the scripts live
        // beside it.
        let loader = document
            .query_selector(r#"link[rel="modulepreload"][href$="/corral.js"]"#)?
            .and_then(|link| link.get_attribute("href"))
            .ok_or("no preload link of corral.js on the page")?;
        let directory = loader.trim_end_matches("corral.js");
        let script = document.create_element("script")?;
        script.set_attribute("id", SCRIPT_ID)?;
        script.set_attribute("type", "module")?;
        script.set_attribute("src", &format!("{directory}terminal.js"))?;
        document
            .query_selector("head")?
            .ok_or("no head")?
            .append_child(&script)?;
    }
    document.dispatch_event(&web_sys::Event::new("corral-terminal")?)?;
    Ok(())
}
