//! The browser side of a node's Terminal button and of a recorded session's Play
//! button on the audit page (compiled for `hydrate`): each loads its own script on
//! first use (`terminal.js`, `player.js`) and asks it to open what was clicked.
//!
//! The terminal is xterm.js, which weighs more than the rest of the cluster page; it is
//! not in the wasm and not on any page until a Terminal button is clicked. The button
//! is marked `data-terminal-pending`, `terminal.js` is added to the page once (from the
//! bundle's scripts directory, found from the hydration script's own preload link), and
//! a `corral-terminal` event tells an already loaded script to look for the mark; a
//! script still loading looks for it when it starts. See `frontend/js/terminal.js`.

use wasm_bindgen::JsCast;

/// A script loaded on first use: its file, the mark a clicked button gets and the
/// event that tells the loaded script to look for it.
struct Loader {
    script: &'static str,
    pending: &'static str,
    event: &'static str,
}

const TERMINAL: Loader = Loader {
    script: "terminal.js",
    pending: "data-terminal-pending",
    event: "corral-terminal",
};

const PLAYER: Loader = Loader {
    script: "player.js",
    pending: "data-player-pending",
    event: "corral-player",
};

/// Opens the terminal of the button `event` was clicked on.
pub fn open(event: &web_sys::MouseEvent) {
    if let Err(error) = load(&TERMINAL, event) {
        leptos::logging::error!("cannot open the terminal: {error:?}");
    }
}

/// Plays the recording of the button `event` was clicked on.
pub fn play(event: &web_sys::MouseEvent) {
    if let Err(error) = load(&PLAYER, event) {
        leptos::logging::error!("cannot play the recording: {error:?}");
    }
}

fn load(loader: &Loader, event: &web_sys::MouseEvent) -> Result<(), wasm_bindgen::JsValue> {
    let document = web_sys::window()
        .and_then(|window| window.document())
        .ok_or("no document")?;
    let button: web_sys::Element = event.current_target().ok_or("no button")?.dyn_into()?;
    button.set_attribute(loader.pending, "")?;
    let id = format!("corral-script-{}", loader.script);
    if document.get_element_by_id(&id).is_none() {
        // The hydration script preloads `…/corral-<hash>/corral.js`: the scripts live
        // beside it.
        let corral_js = document
            .query_selector(r#"link[rel="modulepreload"][href$="/corral.js"]"#)?
            .and_then(|link| link.get_attribute("href"))
            .ok_or("no preload link of corral.js on the page")?;
        let directory = corral_js.trim_end_matches("corral.js");
        let script = document.create_element("script")?;
        script.set_attribute("id", &id)?;
        script.set_attribute("type", "module")?;
        script.set_attribute("src", &format!("{directory}{}", loader.script))?;
        document
            .query_selector("head")?
            .ok_or("no head")?
            .append_child(&script)?;
    }
    document.dispatch_event(&web_sys::Event::new(loader.event)?)?;
    Ok(())
}
