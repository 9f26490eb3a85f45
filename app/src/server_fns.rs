//! Server functions, one per file, grouped by resource. Each is thin: it parses its
//! input, calls the engine and maps errors for the page.

pub mod status;
