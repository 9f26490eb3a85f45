//! Fuzzes the admin console's structured form decoding (`domain::catalog::
//! form_fields`), which applies JSON-pointer/value pairs a browser posts to an
//! entity's JSON. Input is line-oriented text so the corpus stays readable:
//!
//! ```text
//! {"json": "the body"}          first line: the JSON field (else `{}`)
//! m /dependencies/provides      managed[] pointer
//! p /dependencies/provides=base picks[] value
//! t #/constraints/size/min\t2   text_at[] pointer, a tab, its text[] (`\n` = newline)
//! ```
//!
//! Beyond not crashing, the body must never get deeper than what was posted plus
//! one pointer's worth of parts (the root, one level a part, a list of lists of
//! names): unbounded nesting is what once aborted the server.

#![no_main]

use domain::catalog::form_fields::{apply, names_at, strip, text_at, Posted, MAX_POINTER_PARTS};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let mut body = lines
        .next()
        .and_then(|first| serde_json::from_str::<Value>(first).ok())
        .filter(Value::is_object)
        .unwrap_or_else(|| Value::Object(Default::default()));
    let (mut managed, mut picks, mut text_at_, mut texts) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for line in lines {
        if let Some(pointer) = line.strip_prefix("m ") {
            managed.push(pointer.to_owned());
        } else if let Some(pick) = line.strip_prefix("p ") {
            picks.push(pick.to_owned());
        } else if let Some(field) = line.strip_prefix("t ") {
            let (pointer, value) = field.split_once('\t').unwrap_or((field, ""));
            text_at_.push(pointer.to_owned());
            texts.push(value.replace("\\n", "\n"));
        }
    }
    let before = depth(&body);
    let posted = Posted {
        managed: &managed,
        picks: &picks,
        text_at: &text_at_,
        text: &texts,
    };
    let _ = apply(&mut body, &posted);
    let after = depth(&body);
    assert!(
        after <= before.max(MAX_POINTER_PARTS + 3),
        "the body grew from depth {before} to {after}"
    );
    // What the form then shows: each field's text, and the JSON field's rest.
    for pointer in managed.iter().chain(&text_at_) {
        let _ = text_at(&body, pointer);
        let _ = names_at(&body, pointer);
    }
    let shown = serde_json::to_string(&body);
    assert!(shown.is_ok(), "the body does not serialise");
    strip(&mut body, &text_at_);
    strip(&mut body, &managed);
});

/// Nesting depth, without recursion (the thing under test may have built a deep value).
fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 1usize)];
    while let Some((value, level)) = stack.pop() {
        deepest = deepest.max(level);
        match value {
            Value::Array(items) => stack.extend(items.iter().map(|item| (item, level + 1))),
            Value::Object(map) => stack.extend(map.values().map(|item| (item, level + 1))),
            _ => {}
        }
    }
    deepest
}
