//! The structured part of the entity form (pickers, selects, text and number inputs
//! that post as JSON-pointer/value pairs). The decoding is pure and handles what a
//! browser posted, so it lives in [`domain::catalog::form_fields`], where it is unit
//! tested and fuzzed without the web stack; this module keeps the app's paths.

pub use domain::catalog::form_fields::*;
