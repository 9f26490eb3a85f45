//! Blotting credential values out of text shown to people: plugin errors and stderr,
//! job and task errors, provider check reports and the audit log.
//!
//! A plugin (or a cloud's error) rarely repeats a secret byte for byte: it quotes its
//! request as JSON, puts it in a URL, or prints a shell command. So each secret is
//! looked for in every form those encodings give it ([`forms`]), and every form is
//! replaced. Secrets of three characters or fewer are left alone: they would blot out
//! ordinary words and are no secret worth the name.

use std::collections::BTreeSet;

/// What a blotted-out value is replaced with.
pub const BLOT: &str = "[credential]";

/// The shortest secret that is blotted out.
const MIN_SECRET: usize = 4;

/// Secret values and their escaped forms, longest first (a longer form that contains
/// a shorter one is replaced whole).
#[derive(Clone, Default)]
pub struct Scrubber {
    forms: Vec<String>,
}

impl std::fmt::Debug for Scrubber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scrubber")
            .field("forms", &self.forms.len())
            .finish()
    }
}

impl Scrubber {
    /// What blots `credentials`' values (in every escaped form) out of text that is
    /// shown: errors, output, reports, the audit log.
    pub fn of_credentials(credentials: &super::Credentials) -> Self {
        Self::new(credentials.values())
    }

    /// A scrubber for these secret values.
    pub fn new<'a>(secrets: impl IntoIterator<Item = &'a str>) -> Self {
        let forms: BTreeSet<String> = secrets
            .into_iter()
            .filter(|secret| secret.len() >= MIN_SECRET)
            .flat_map(forms)
            .filter(|form| form.len() >= MIN_SECRET)
            .collect();
        let mut forms: Vec<String> = forms.into_iter().collect();
        forms.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        Self { forms }
    }

    /// `text` with every form of every secret replaced by [`BLOT`].
    pub fn scrub(&self, text: &str) -> String {
        self.forms.iter().fold(text.to_owned(), |text, form| {
            text.replace(form.as_str(), BLOT)
        })
    }

    /// Whether there is nothing to blot out.
    pub fn is_empty(&self) -> bool {
        self.forms.is_empty()
    }
}

/// `secret` as it is, and as JSON, URLs and shells escape it.
fn forms(secret: &str) -> Vec<String> {
    let mut forms = vec![secret.to_owned(), json_escaped(secret, false)];
    forms.push(json_escaped(secret, true));
    forms.push(percent_encoded(secret, false, true));
    forms.push(percent_encoded(secret, false, false));
    forms.push(percent_encoded(secret, true, true));
    forms.push(backslash_escaped(secret));
    // Inside single quotes a quote is closed, escaped and reopened: `'\''` (POSIX
    // shells) or `'"'"'` (Python's shlex.quote).
    forms.push(secret.replace('\'', r"'\''"));
    forms.push(secret.replace('\'', r#"'"'"'"#));
    forms
}

/// The inside of a JSON string holding `secret`; with `ascii`, non-ASCII characters as
/// `\uXXXX` too (Python's json.dumps, for one).
fn json_escaped(secret: &str, ascii: bool) -> String {
    let quoted = serde_json::Value::String(secret.to_owned()).to_string();
    let inner = quoted
        .strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
        .unwrap_or(&quoted);
    if !ascii {
        return inner.to_owned();
    }
    let mut out = String::with_capacity(inner.len());
    for c in inner.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

/// `secret` percent-encoded: every byte but the unreserved ones (RFC 3986), or a form
/// body's encoding (`form`: spaces as `+`); hex digits upper- or lower-case.
fn percent_encoded(secret: &str, form: bool, upper: bool) -> String {
    let mut out = String::with_capacity(secret.len() * 3);
    for byte in secret.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(char::from(byte));
            }
            b' ' if form => out.push('+'),
            _ if upper => out.push_str(&format!("%{byte:02X}")),
            _ => out.push_str(&format!("%{byte:02x}")),
        }
    }
    out
}

/// `secret` with a backslash before each character a shell would treat specially (bash's
/// `printf %q` for printable text).
fn backslash_escaped(secret: &str) -> String {
    let mut out = String::with_capacity(secret.len() * 2);
    for c in secret.chars() {
        if !(c.is_ascii_alphanumeric() || "_./:,=@%+-".contains(c) || !c.is_ascii()) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = r#"p"a's w/d&é"#;

    #[test]
    fn credentials_values_are_blotted_out() {
        #![allow(clippy::unwrap_used)]
        let credentials = crate::provider::Credentials::from_json_text(
            r#"{"access_key_id": "AKIA1", "secret_access_key": "s3cr3t", "port": 443}"#,
        )
        .unwrap();
        assert_eq!(
            Scrubber::of_credentials(&credentials).scrub("key s3cr3t, id AKIA1, port 443"),
            "key [credential], id [credential], port 443",
            "values of more than three characters are blotted out"
        );
    }

    #[test]
    fn every_escaped_form_of_a_secret_is_blotted_out() {
        let scrubber = Scrubber::new([SECRET, "ab"]);
        let echoed = [
            // As it is.
            r#"p"a's w/d&é"#,
            // JSON (serde_json, Go, jq) and JSON with ASCII escapes (Python).
            r#"p\"a's w/d&é"#,
            r#"p\"a's w/d&\u00e9"#,
            // Percent-encoded (curl, urllib.parse.quote) and as a form body.
            "p%22a%27s%20w%2Fd%26%C3%A9",
            "p%22a%27s%20w%2fd%26%c3%a9",
            "p%22a%27s+w%2Fd%26%C3%A9",
            // bash's printf %q, and single-quoted (sh, Python's shlex.quote).
            r#"p\"a\'s\ w/d\&é"#,
            r#"p"a'\''s w/d&é"#,
            r#"p"a'"'"'s w/d&é"#,
        ];
        for form in echoed {
            let text = format!("bad token <{form}>, ab");
            assert_eq!(
                scrubber.scrub(&text),
                format!("bad token <{BLOT}>, ab"),
                "{form}"
            );
        }
    }

    #[test]
    fn short_values_and_no_values_blot_nothing() {
        let scrubber = Scrubber::new(["ab", "abc"]);
        assert!(scrubber.is_empty());
        assert_eq!(scrubber.scrub("ab abc"), "ab abc");
        assert_eq!(Scrubber::default().scrub("text"), "text");
        // A form shorter than four characters is not looked for either.
        let scrubber = Scrubber::new(["a b "]);
        assert_eq!(scrubber.scrub("a+b+ a b "), format!("{BLOT} {BLOT}"));
    }

    #[test]
    fn a_scrubber_prints_no_secret() {
        let shown = format!("{:?}", Scrubber::new([SECRET]));
        assert!(!shown.contains("w/d"), "{shown}");
    }
}
