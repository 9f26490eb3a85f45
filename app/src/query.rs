//! Query strings: lists in them, and values encoded for them.
//!
//! Lists: a GET form's checkboxes are named `services[0]`,
//! `services[1]`, ... (by position, so unchecked ones leave gaps): the client-side
//! router keeps only one value of a repeated key, but distinct keys survive. Plain
//! repeated keys (`?services=a&services=b`, as in a hand-written link) work too.

use leptos_router::params::ParamsMap;

/// Every value of `name` and `name[i]` in `query`, in index order; `None` when the
/// query has none (the form was not submitted yet).
pub fn list(query: &ParamsMap, name: &str) -> Option<Vec<String>> {
    let prefix = format!("{name}[");
    let mut indexed: Vec<(usize, String)> = query
        .latest_values()
        .filter_map(|(key, value)| {
            let index = key.strip_prefix(&prefix)?.strip_suffix(']')?;
            Some((index.parse().ok()?, value.to_owned()))
        })
        .collect();
    indexed.sort_by_key(|(index, _)| *index);
    let mut values = query.get_all(name).unwrap_or_default();
    values.extend(indexed.into_iter().map(|(_, value)| value));
    (!values.is_empty()).then_some(values)
}

/// The form field name of the `index`th entry of list `name`.
pub fn item(name: &str, index: usize) -> String {
    format!("{name}[{index}]")
}

/// Percent-encodes a value (a path, a name) for a query string: everything but
/// unreserved characters (RFC 3986) and `/`.
pub fn encode_value(raw: &str) -> String {
    let mut encoded = String::with_capacity(raw.len());
    for byte in raw.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            encoded.push(char::from(byte));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(pairs: &[(&str, &str)]) -> ParamsMap {
        let mut map = ParamsMap::new();
        for (key, value) in pairs {
            map.insert(key.to_string(), value.to_string());
        }
        map
    }

    #[test]
    fn indexed_and_repeated_values_are_collected_in_order() {
        let map = query(&[
            ("services[2]", "web"),
            ("size", "3"),
            ("services[0]", "base"),
        ]);
        assert_eq!(
            list(&map, "services"),
            Some(vec!["base".to_owned(), "web".to_owned()])
        );
        let map = query(&[("services", "extra")]);
        assert_eq!(list(&map, "services"), Some(vec!["extra".to_owned()]));
        assert_eq!(list(&query(&[("size", "3")]), "services"), None);
    }
}
