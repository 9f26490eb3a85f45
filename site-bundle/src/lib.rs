//! The browser bundle as the build found it: every file of `pkg/` (the wasm, its JS
//! loader, the stylesheet, the icon, and their `.br`/`.gz` forms), by name.
//!
//! The bytes are compiled into the binary so a copied `corral` is a whole install. What
//! the files mean (content hashes, encodings, caching) is the server's business; this
//! crate only carries them. See `build.rs` for where they come from.

/// One file of the bundle.
#[derive(Debug, Clone, Copy)]
pub struct File {
    /// Its name in `pkg/`, e.g. `corral_bg.wasm.br`.
    pub name: &'static str,
    pub bytes: &'static [u8],
}

include!(concat!(env!("OUT_DIR"), "/files.rs"));
