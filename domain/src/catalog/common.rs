//! Pieces shared by every catalog entity: descriptive metadata, Coopr's lenient
//! counts, links, template references, and the remembered original JSON that makes
//! export of an unmodified entity byte-for-byte faithful.

use std::fmt;
use std::sync::Arc;

use indexmap::IndexMap;
use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::names::TemplateName;

/// Keys the typed model does not know, kept in their original order so they are
/// re-emitted on export (Coopr drops them; Corral must not).
pub type Extra = IndexMap<String, Value>;

/// The fields every Coopr entity may carry besides its name.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct EntityMeta {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
    /// Informative only: Corral stores its own revisions (§7).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<Count>,
}

impl EntityMeta {
    /// The declared version; Coopr's default is 1.
    pub fn version_number(&self) -> i64 {
        self.version.map_or(1, |count| count.value)
    }
}

/// Coopr's "unbounded" maximum.
pub const UNBOUNDED: i64 = 2_147_483_647;

/// An integer as Coopr accepts it: a JSON number or a string of digits. The written
/// form is remembered so an edited entity still writes `"3"` where it read `"3"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count {
    pub value: i64,
    pub quoted: bool,
}

impl Count {
    pub fn new(value: i64) -> Self {
        Self {
            value,
            quoted: false,
        }
    }

    /// `None` for Coopr's unbounded marker `2147483647`.
    pub fn bounded(self) -> Option<i64> {
        (self.value != UNBOUNDED).then_some(self.value)
    }
}

impl fmt::Display for Count {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.value)
    }
}

impl Serialize for Count {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.quoted {
            serializer.serialize_str(&self.value.to_string())
        } else {
            serializer.serialize_i64(self.value)
        }
    }
}

/// A UI link; template link URLs may hold macros.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Link {
    pub label: String,
    pub url: String,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Link {
    /// Whether `url` is one a page may put in an `href`: `http://` or `https://`, before
    /// and after macro expansion. Anything else (`javascript:`, `data:`, a relative
    /// path) would run or load whatever the catalog's author chose in the viewer's
    /// browser, on Corral's origin.
    pub fn is_web_url(url: &str) -> bool {
        let url = url.trim_start();
        ["http://", "https://"].iter().any(|scheme| {
            url.get(..scheme.len())
                .is_some_and(|start| start.eq_ignore_ascii_case(scheme))
        }) && !url.chars().any(char::is_control)
    }
}

/// `{"name": ...}`: how `extends` and `includes` name another template.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TemplateRef {
    pub name: TemplateName,
    #[serde(flatten)]
    pub extra: Extra,
}

impl TemplateRef {
    pub fn new(name: TemplateName) -> Self {
        Self {
            name,
            extra: Extra::new(),
        }
    }
}

/// The JSON an entity was imported from, if any.
///
/// It takes no part in equality: two entities are equal when their typed content
/// is, wherever they came from. Export re-emits it verbatim when the typed entity
/// still equals what it decodes to, i.e. when nobody modified the entity.
#[derive(Debug, Clone, Default)]
pub struct Origin(Option<Arc<Value>>);

impl Origin {
    pub fn none() -> Self {
        Self(None)
    }

    pub fn from_json(raw: Value) -> Self {
        Self(Some(Arc::new(raw)))
    }

    pub fn json(&self) -> Option<&Value> {
        self.0.as_deref()
    }
}

impl PartialEq for Origin {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}
