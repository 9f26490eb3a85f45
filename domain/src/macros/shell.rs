//! Quoting for POSIX `sh`.

/// Quotes `value` as one `sh` word that stands for exactly `value`: wrapped in
/// single quotes, inside which nothing is special, with each `'` written as `'\''`
/// (close, escaped quote, reopen).
pub fn shell_quote(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('\'');
    for c in value.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}
