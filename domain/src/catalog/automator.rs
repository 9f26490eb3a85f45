//! Automators (docs/automators.md): how a service action gets onto its node, and the
//! fields each one takes.
//!
//! Corral runs three: `shell`, `ansible` and `puppet`. Coopr catalogs also name others
//! (`chef-solo`, `docker`); those are kept in the catalog (validation warns) and refused
//! when a cluster would run them, before anything is made ([`unsupported_actions`]).
//! Field checks are here, pure, so that `catalog validate`, the admin form and the
//! engine agree on what an action may say.

use std::fmt;

use serde_json::{Map, Value};

use super::{ActionSpec, Catalog, ServiceAction};
use crate::names::ServiceName;

/// An automator Corral can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AutomatorType {
    /// A script run on the node over SSH.
    Shell,
    /// A playbook run by `ansible-playbook` on the worker against the node.
    Ansible,
    /// A manifest run by `puppet apply` on the node.
    Puppet,
}

/// What a field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldShape {
    /// Text (macros expanded).
    Text,
    /// Whole seconds, as a number or text.
    Seconds,
    /// `true` or `false`, as a boolean or text.
    Flag,
    /// An object of named values (or its JSON text, as Coopr keeps nested data); each
    /// name must be a [`NameRule`]'s.
    Object(NameRule),
    /// A plugin resource: `<kind>/<name>`, or `archives/<name>/<path inside>`.
    Resource(ResourceRule),
}

/// Which names an object field's keys may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRule {
    /// An environment variable: letters, digits and `_`, not starting with a digit.
    Environment,
    /// An Ansible variable: the same, and not `corral_…` (Corral's own).
    AnsibleVariable,
    /// A Facter fact set through `FACTER_<name>`: lower case letters, digits and `_`
    /// (Facter lower-cases the name), and not `corral_…`.
    Fact,
}

/// Which plugin resources a resource field may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceRule {
    /// One file: `files/<name>`, or a file inside an archive.
    File,
    /// A directory: an archive's top (`archives/<name>`) or a folder inside it.
    Directory,
}

/// One field an automator takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldSpec {
    pub name: &'static str,
    pub shape: FieldShape,
    pub required: bool,
    /// One line for docs and forms.
    pub about: &'static str,
}

const fn field(name: &'static str, shape: FieldShape, about: &'static str) -> FieldSpec {
    FieldSpec {
        name,
        shape,
        required: false,
        about,
    }
}

const fn required(name: &'static str, shape: FieldShape, about: &'static str) -> FieldSpec {
    FieldSpec {
        name,
        shape,
        required: true,
        about,
    }
}

const TIMEOUT: FieldSpec = field(
    "timeout",
    FieldShape::Seconds,
    "seconds before the step is killed and fails",
);

/// `false` keeps a step whose outcome is unknown (its connection cut, its worker gone)
/// from being run again on a guess: its job fails instead (see the queue's retry rule).
const IDEMPOTENT: FieldSpec = field(
    "idempotent",
    FieldShape::Flag,
    "false: never run the step again after a failed or unknown attempt; its job fails",
);

const SHELL_FIELDS: &[FieldSpec] = &[
    field(
        "run",
        FieldShape::Text,
        "an inline bash script (or `script`)",
    ),
    field(
        "script",
        FieldShape::Text,
        "a `scripts` plugin resource to run (or `run`)",
    ),
    field("args", FieldShape::Text, "arguments given to `script`"),
    field(
        "env",
        FieldShape::Object(NameRule::Environment),
        "extra environment variables",
    ),
    field(
        "workdir",
        FieldShape::Text,
        "the directory the step runs in (relative: under the node's home)",
    ),
    TIMEOUT,
    IDEMPOTENT,
];

const ANSIBLE_FIELDS: &[FieldSpec] = &[
    required(
        "playbook",
        FieldShape::Resource(ResourceRule::File),
        "the playbook: `files/<name>` or `archives/<name>/<path inside>`",
    ),
    field(
        "extra_vars",
        FieldShape::Object(NameRule::AnsibleVariable),
        "variables given to the playbook (as JSON, macros expanded)",
    ),
    field(
        "tags",
        FieldShape::Text,
        "only run tasks with these tags (comma separated)",
    ),
    TIMEOUT,
    IDEMPOTENT,
];

const PUPPET_FIELDS: &[FieldSpec] = &[
    required(
        "manifest",
        FieldShape::Resource(ResourceRule::File),
        "the manifest: `files/<name>` or `archives/<name>/<path inside>`",
    ),
    field(
        "modulepath",
        FieldShape::Resource(ResourceRule::Directory),
        "modules for the manifest: `archives/<name>[/<path inside>]`",
    ),
    field(
        "facts",
        FieldShape::Object(NameRule::Fact),
        "facts set for the run (`$facts['name']`, macros expanded)",
    ),
    TIMEOUT,
    IDEMPOTENT,
];

impl AutomatorType {
    pub const ALL: [AutomatorType; 3] = [
        AutomatorType::Shell,
        AutomatorType::Ansible,
        AutomatorType::Puppet,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AutomatorType::Shell => "shell",
            AutomatorType::Ansible => "ansible",
            AutomatorType::Puppet => "puppet",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == raw)
    }

    /// Every field the automator takes.
    pub fn fields(self) -> &'static [FieldSpec] {
        match self {
            AutomatorType::Shell => SHELL_FIELDS,
            AutomatorType::Ansible => ANSIBLE_FIELDS,
            AutomatorType::Puppet => PUPPET_FIELDS,
        }
    }

    /// "shell, ansible, puppet": for messages.
    pub fn names() -> String {
        Self::ALL.map(Self::as_str).join(", ")
    }

    /// Every problem of `spec`'s fields for this automator, as (field path under the
    /// action, message); `fields.<name>` paths.
    pub fn check_fields(self, spec: &ActionSpec) -> Vec<(String, String)> {
        let mut problems = Vec::new();
        let specs = self.fields();
        for (name, value) in &spec.fields {
            let path = format!("fields.{name}");
            match specs.iter().find(|field| field.name == name) {
                None => problems.push((
                    path,
                    format!(
                        "{self} takes no field {name:?} (its fields: {})",
                        specs.iter().map(|f| f.name).collect::<Vec<_>>().join(", ")
                    ),
                )),
                Some(field) => {
                    if let Err(message) = check_value(field.shape, value) {
                        problems.push((path, message));
                    }
                }
            }
        }
        for field in specs.iter().filter(|field| field.required) {
            if !spec.fields.contains_key(field.name) {
                problems.push((
                    format!("fields.{}", field.name),
                    format!("{self} needs the field {:?}: {}", field.name, field.about),
                ));
            }
        }
        if self == AutomatorType::Shell
            && !spec.fields.contains_key("run")
            && !spec.fields.contains_key("script")
        {
            problems.push((
                "fields".to_owned(),
                "a shell action needs a `run` or a `script` field".to_owned(),
            ));
        }
        problems
    }
}

impl fmt::Display for AutomatorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

fn check_value(shape: FieldShape, value: &Value) -> Result<(), String> {
    match shape {
        FieldShape::Text => match value {
            Value::String(_) => Ok(()),
            _ => Err("must be text".to_owned()),
        },
        FieldShape::Seconds => match value {
            Value::Number(number) if number.as_u64().is_some_and(|n| n > 0) => Ok(()),
            Value::String(text) if text.trim().parse::<u64>().is_ok_and(|n| n > 0) => Ok(()),
            _ => Err("must be a whole number of seconds above 0".to_owned()),
        },
        FieldShape::Flag => match value {
            Value::Bool(_) => Ok(()),
            Value::String(text) if matches!(text.as_str(), "true" | "false") => Ok(()),
            _ => Err("must be true or false".to_owned()),
        },
        FieldShape::Object(rule) => {
            let object = object_field(value)?;
            for name in object.keys() {
                rule.check(name)?;
            }
            Ok(())
        }
        FieldShape::Resource(rule) => match value {
            Value::String(text) => ResourcePath::parse(text, rule).map(|_| ()),
            _ => Err("must be text naming a plugin resource".to_owned()),
        },
    }
}

/// An object field's value: an object, or the JSON text of one.
pub fn object_field(value: &Value) -> Result<Map<String, Value>, String> {
    let parsed;
    let value = match value {
        Value::String(text) => {
            parsed = serde_json::from_str::<Value>(text)
                .map_err(|error| format!("must be an object (or its JSON text): {error}"))?;
            &parsed
        }
        other => other,
    };
    match value {
        Value::Object(object) => Ok(object.clone()),
        _ => Err("must be an object of named values".to_owned()),
    }
}

impl NameRule {
    pub fn check(self, name: &str) -> Result<(), String> {
        let mut chars = name.chars();
        let identifier = chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        match self {
            NameRule::Environment if !identifier => {
                Err(format!("{name:?} is not a valid environment variable name"))
            }
            NameRule::AnsibleVariable if !identifier => Err(format!(
                "{name:?} is not a valid Ansible variable name (letters, digits and _)"
            )),
            NameRule::Fact if !identifier || name.chars().any(|c| c.is_ascii_uppercase()) => Err(
                format!("{name:?} is not a valid fact name (lower case letters, digits and _)"),
            ),
            NameRule::AnsibleVariable | NameRule::Fact if name.starts_with(CORRAL_PREFIX) => Err(
                format!("{name:?}: names starting with {CORRAL_PREFIX} are Corral's own"),
            ),
            _ => Ok(()),
        }
    }
}

/// Corral's own variables and facts (`corral_host`, `corral_cluster`…) start so.
pub const CORRAL_PREFIX: &str = "corral_";

/// The plugin resource kinds a resource field may name, as their folder names.
pub const FILES: &str = "files";
pub const ARCHIVES: &str = "archives";

/// A resource field's value, parsed: `files/<name>` or `archives/<name>[/<path>]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourcePath {
    /// `files` or `archives`.
    pub kind: &'static str,
    pub name: String,
    /// Inside an archive: relative, `/`-separated, no `.` or `..` parts; empty for the
    /// archive's top.
    pub inner: String,
}

impl ResourcePath {
    pub fn parse(text: &str, rule: ResourceRule) -> Result<Self, String> {
        let mut parts = text.splitn(3, '/');
        let kind = parts.next().unwrap_or_default();
        let name = parts.next().unwrap_or_default();
        let inner = parts.next().unwrap_or_default();
        let kind = match kind {
            FILES => FILES,
            ARCHIVES => ARCHIVES,
            _ => {
                return Err(format!(
                    "{text:?} names no plugin resource: write files/<name> or \
                     archives/<name>/<path inside>"
                ))
            }
        };
        if !is_resource_name(name) {
            return Err(format!("{text:?}: {name:?} is not a resource name"));
        }
        if !inner.is_empty()
            && inner
                .split('/')
                .any(|part| part.is_empty() || part == "." || part == "..")
        {
            return Err(format!(
                "{text:?}: the path inside the archive must be relative, without . or .. parts"
            ));
        }
        match (kind, rule) {
            (FILES, ResourceRule::File) if inner.is_empty() => {}
            (FILES, ResourceRule::File) => {
                return Err(format!("{text:?}: a files resource has no path inside"))
            }
            (FILES, ResourceRule::Directory) => {
                return Err(format!(
                    "{text:?}: must be a folder: archives/<name>[/<path inside>]"
                ))
            }
            (_, ResourceRule::File) if inner.is_empty() => {
                return Err(format!(
                    "{text:?}: name the file inside the archive: archives/{name}/<path inside>"
                ))
            }
            _ => {}
        }
        Ok(Self {
            kind,
            name: name.to_owned(),
            inner: inner.to_owned(),
        })
    }
}

/// Plugin resource names: one path component of safe characters.
pub fn is_resource_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// A service action a cluster would run with an automator Corral does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsupportedAction {
    pub service: ServiceName,
    pub action: ServiceAction,
    pub automator: String,
}

impl fmt::Display for UnsupportedAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "service {}: action {} uses automator {}, which is not available here: \
             automators are {}",
            self.service,
            self.action,
            self.automator,
            AutomatorType::names()
        )
    }
}

/// Every action of `services` (names of `catalog`'s services) whose automator Corral
/// cannot run: all of their actions, stop and remove included, since the cluster will
/// run those when it shrinks or goes.
pub fn unsupported_actions<'a>(
    catalog: &Catalog,
    services: impl IntoIterator<Item = &'a ServiceName>,
) -> Vec<UnsupportedAction> {
    let mut found = Vec::new();
    for name in services {
        let Some(service) = catalog.service(name.as_str()) else {
            continue;
        };
        for (action, spec) in &service.provisioner.actions {
            if AutomatorType::parse(&spec.automator).is_none() {
                found.push(UnsupportedAction {
                    service: name.clone(),
                    action: *action,
                    automator: spec.automator.clone(),
                });
            }
        }
    }
    found
}

/// The automators `services` of `catalog` use (known ones only).
pub fn automators_used<'a>(
    catalog: &Catalog,
    services: impl IntoIterator<Item = &'a ServiceName>,
) -> Vec<AutomatorType> {
    let mut used: Vec<AutomatorType> = services
        .into_iter()
        .filter_map(|name| catalog.service(name.as_str()))
        .flat_map(|service| service.provisioner.actions.values())
        .filter_map(|spec| AutomatorType::parse(&spec.automator))
        .collect();
    used.sort();
    used.dedup();
    used
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn spec(automator: &str, fields: Value) -> ActionSpec {
        let mut spec = ActionSpec::new(automator);
        if let Value::Object(fields) = fields {
            spec.fields = fields.into_iter().collect();
        }
        spec
    }

    #[test]
    fn each_automator_reports_missing_and_unknown_fields_by_path() {
        let problems = AutomatorType::Ansible.check_fields(&spec(
            "ansible",
            json!({"playbok": "files/site.yml", "extra_vars": {"ok": 1}}),
        ));
        let paths: Vec<&str> = problems.iter().map(|(path, _)| path.as_str()).collect();
        assert_eq!(paths, ["fields.playbok", "fields.playbook"]);
        assert!(problems[0].1.contains("takes no field \"playbok\""));
        assert!(problems[1].1.contains("needs the field \"playbook\""));

        let problems = AutomatorType::Shell.check_fields(&spec("shell", json!({"args": "x"})));
        assert_eq!(problems.len(), 1);
        assert!(problems[0].1.contains("`run` or a `script`"));
        assert!(AutomatorType::Puppet
            .check_fields(&spec(
                "puppet",
                json!({"manifest": "archives/p.tgz/manifests/site.pp",
                       "modulepath": "archives/p.tgz/modules",
                       "facts": "{\"greeting\": \"%cluster.owner%\"}", "timeout": "60"})
            ))
            .is_empty());
    }

    #[test]
    fn any_automator_may_say_its_steps_are_not_safe_to_repeat() {
        for (automator, fields) in [
            ("shell", json!({"run": "true", "idempotent": false})),
            ("shell", json!({"run": "true", "idempotent": "true"})),
            (
                "ansible",
                json!({"playbook": "files/a.yml", "idempotent": "false"}),
            ),
            (
                "puppet",
                json!({"manifest": "files/a.pp", "idempotent": true}),
            ),
        ] {
            let kind = AutomatorType::parse(automator).unwrap();
            assert_eq!(
                kind.check_fields(&spec(automator, fields.clone())),
                [],
                "{fields}"
            );
        }
        let problems = AutomatorType::Shell
            .check_fields(&spec("shell", json!({"run": "true", "idempotent": "no"})));
        assert_eq!(
            problems,
            [(
                "fields.idempotent".to_owned(),
                "must be true or false".to_owned()
            )]
        );
    }

    #[test]
    fn variable_and_fact_names_are_checked() {
        let bad = [
            (
                "ansible",
                json!({"playbook": "files/a.yml", "extra_vars": {"a-b": 1}}),
            ),
            (
                "ansible",
                json!({"playbook": "files/a.yml", "extra_vars": {"corral_host": 1}}),
            ),
            (
                "puppet",
                json!({"manifest": "files/a.pp", "facts": {"Greeting": "x"}}),
            ),
            ("puppet", json!({"manifest": "files/a.pp", "facts": "[1]"})),
            ("shell", json!({"run": "true", "env": {"1X": "y"}})),
            ("shell", json!({"run": "true", "timeout": "soon"})),
        ];
        for (automator, fields) in bad {
            let kind = AutomatorType::parse(automator).unwrap();
            let problems = kind.check_fields(&spec(automator, fields.clone()));
            assert_eq!(problems.len(), 1, "{fields}: {problems:?}");
        }
    }

    #[test]
    fn resource_paths_stay_inside_their_resource() {
        let file = |text| ResourcePath::parse(text, ResourceRule::File);
        assert_eq!(
            file("archives/site.tgz/play/main.yml").unwrap(),
            ResourcePath {
                kind: ARCHIVES,
                name: "site.tgz".into(),
                inner: "play/main.yml".into()
            }
        );
        assert_eq!(file("files/a.yml").unwrap().inner, "");
        for bad in [
            "scripts/a.sh",
            "files/../x",
            "files/a.yml/b",
            "archives/a.tgz",
            "archives/a.tgz/../../etc/passwd",
            "archives/a.tgz//x",
            "archives/a.tgz/./x",
            "/etc/passwd",
            "files/",
        ] {
            assert!(file(bad).is_err(), "{bad}");
        }
        let dir = |text| ResourcePath::parse(text, ResourceRule::Directory);
        assert!(dir("archives/m.tgz").is_ok());
        assert!(dir("archives/m.tgz/modules").is_ok());
        assert!(dir("files/m.pp").is_err());
    }

    #[test]
    fn unsupported_actions_name_service_action_and_automator() {
        let text = json!({"providers": [], "hardwaretypes": [], "imagetypes": [],
            "clustertemplates": [], "services": [
                {"name": "hadoop", "provisioner": {"actions": {
                    "install": {"type": "chef-solo", "fields": {"run_list": "recipe[x]"}},
                    "start": {"type": "shell", "fields": {"run": "true"}}}}},
                {"name": "web", "provisioner": {"actions": {
                    "install": {"type": "ansible", "fields": {"playbook": "files/a.yml"}}}}}]});
        let catalog = crate::catalog::coopr::import_bundle(&text.to_string()).unwrap();
        let names: Vec<ServiceName> = catalog.services.keys().cloned().collect();
        let found = unsupported_actions(&catalog, &names);
        assert_eq!(found.len(), 1);
        assert_eq!(
            found[0].to_string(),
            "service hadoop: action install uses automator chef-solo, which is not available \
             here: automators are shell, ansible, puppet"
        );
        assert_eq!(
            automators_used(&catalog, &names),
            [AutomatorType::Shell, AutomatorType::Ansible]
        );
    }
}
