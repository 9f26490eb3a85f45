//! The operator's single sign-on settings: one `[[sso]]` table per OpenID Connect
//! issuer in `corral serve`'s TOML file (docs/integrations.md shows one).
//!
//! Issuers live in the config file rather than in the database because they decide
//! who may sign in at all: a tenant admin must not be able to add one, and the server
//! must know them before anybody has signed in. The client secret in the file is
//! sealed with the server's secret key (`corral admin seal-sso-secret NAME` prints the
//! value), so the file, a backup of it or a config repository holds nothing usable
//! without the data dir's key; a plain value is refused, naming that command.

use engine::secrets::SecretKey;
use engine::store::users::Role;
use serde::Deserialize;

/// One issuer as the config file gives it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct IssuerSettings {
    /// Short name in addresses (`/auth/sso/NAME/...`) and `corral login --sso NAME`.
    pub name: String,
    /// What the login page's button says after "Sign in with" [default: the name].
    #[serde(default)]
    pub display_name: Option<String>,
    /// The issuer's discovery document (`.../.well-known/openid-configuration`), or
    /// the issuer's URL, to which that path is added.
    pub discovery_url: url::Url,
    pub client_id: String,
    /// `sealed:v1:...`, as `corral admin seal-sso-secret NAME` prints it.
    pub client_secret: String,
    /// Where the issuer sends browsers back: this server's
    /// `/auth/sso/NAME/callback`, as registered at the issuer.
    pub redirect_uri: url::Url,
    /// Scopes asked for besides `openid` [default: profile, email].
    #[serde(default = "default_scopes")]
    pub scopes: Vec<String>,
    /// The claim the rules match (a string or a list of strings) [default: groups].
    #[serde(default = "default_claim")]
    pub claim: String,
    /// The claim a new user's name comes from [default: preferred_username].
    #[serde(default = "default_username_claim")]
    pub username_claim: String,
    /// Whether users of this issuer may also sign in with a local password (one an
    /// admin sets) [default: false].
    #[serde(default)]
    pub local_passwords: bool,
    /// Hosts (`host` or `host:port`) besides the discovery URL's that the discovery
    /// document may name for the token endpoint and the keys [default: none].
    #[serde(default)]
    pub allowed_hosts: Vec<String>,
    /// In order: the first rule whose value the user's claim holds gives the tenant
    /// and role. A user no rule matches is refused.
    #[serde(default)]
    pub rules: Vec<Rule>,
}

/// One mapping from a claim value to a tenant and a role.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Rule {
    pub value: String,
    pub tenant: String,
    pub role: Role,
}

fn default_scopes() -> Vec<String> {
    vec!["profile".to_owned(), "email".to_owned()]
}

fn default_claim() -> String {
    "groups".to_owned()
}

fn default_username_claim() -> String {
    "preferred_username".to_owned()
}

/// Where a sealed client secret belongs (sealed values open only there).
pub fn secret_context(name: &str) -> String {
    format!("sso issuer {name} client-secret")
}

/// The discovery document's path under an issuer URL.
const DISCOVERY_PATH: &str = ".well-known/openid-configuration";

impl IssuerSettings {
    /// The button's text after "Sign in with".
    pub fn label(&self) -> &str {
        self.display_name.as_deref().unwrap_or(&self.name)
    }

    /// The discovery document's URL.
    pub fn discovery_document(&self) -> url::Url {
        if self.discovery_url.path().ends_with(DISCOVERY_PATH) {
            return self.discovery_url.clone();
        }
        let mut url = self.discovery_url.clone();
        let path = format!("{}/{DISCOVERY_PATH}", url.path().trim_end_matches('/'));
        url.set_path(&path);
        url
    }

    /// The rule the claim's values select, if any.
    pub fn rule_for<'a>(&'a self, values: &[String]) -> Option<&'a Rule> {
        self.rules.iter().find(|rule| values.contains(&rule.value))
    }

    /// Checks what can be checked without the network; names the issuer and the key.
    pub fn check(&self) -> anyhow::Result<()> {
        let name = &self.name;
        let slug = !name.is_empty()
            && name.len() <= 40
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        anyhow::ensure!(
            slug,
            "sso issuer {name:?}: name must be 1-40 characters of a-z, 0-9 and '-'"
        );
        for (key, url) in [
            ("discovery-url", &self.discovery_url),
            ("redirect-uri", &self.redirect_uri),
        ] {
            anyhow::ensure!(
                matches!(url.scheme(), "http" | "https") && url.host().is_some(),
                "sso issuer {name}: {key} must be an http:// or https:// URL"
            );
            anyhow::ensure!(
                url.username().is_empty() && url.password().is_none(),
                "sso issuer {name}: {key} must not hold a user name or password"
            );
        }
        let callback = format!("/auth/sso/{name}/callback");
        anyhow::ensure!(
            self.redirect_uri.path() == callback && self.redirect_uri.query().is_none(),
            "sso issuer {name}: redirect-uri must be this server's address followed by {callback}"
        );
        anyhow::ensure!(
            !self.client_id.trim().is_empty(),
            "sso issuer {name}: client-id is empty"
        );
        anyhow::ensure!(
            SecretKey::is_sealed(&self.client_secret),
            "sso issuer {name}: client-secret must be sealed with the server's key: run \
             `corral admin seal-sso-secret {name}` (the secret on standard input) and put \
             what it prints in the file"
        );
        anyhow::ensure!(
            !self.rules.is_empty(),
            "sso issuer {name}: no [[sso.rules]]: nobody could sign in"
        );
        Ok(())
    }
}

/// Checks every issuer and that names are unique.
pub fn check_all(issuers: &[IssuerSettings]) -> anyhow::Result<()> {
    for (index, issuer) in issuers.iter().enumerate() {
        issuer.check()?;
        anyhow::ensure!(
            !issuers[..index]
                .iter()
                .any(|other| other.name == issuer.name),
            "sso issuer {}: the name is used twice",
            issuer.name
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn issuer(extra: &str) -> String {
        format!(
            "name = \"acme\"\ndiscovery-url = \"https://id.example.com\"\nclient-id = \"corral\"\n\
             client-secret = \"sealed:v1:AAAA\"\n\
             redirect-uri = \"https://corral.example.com/auth/sso/acme/callback\"\n{extra}\
             [[rules]]\nvalue = \"ops\"\ntenant = \"default\"\nrole = \"tenant-admin\"\n"
        )
    }

    #[test]
    fn a_good_issuer_reads_with_its_defaults() {
        let settings: IssuerSettings = toml::from_str(&issuer("")).unwrap();
        settings.check().unwrap();
        assert_eq!(settings.claim, "groups");
        assert_eq!(settings.scopes, ["profile", "email"]);
        assert!(!settings.local_passwords);
        assert_eq!(
            settings.discovery_document().as_str(),
            "https://id.example.com/.well-known/openid-configuration"
        );
        let rule = settings
            .rule_for(&["dev".to_owned(), "ops".to_owned()])
            .unwrap();
        assert_eq!(
            (rule.tenant.as_str(), rule.role),
            ("default", Role::TenantAdmin)
        );
        assert!(settings.rule_for(&["dev".to_owned()]).is_none());
    }

    #[test]
    fn bad_issuers_are_refused_naming_the_problem() {
        for (text, problem) in [
            (
                issuer("").replace("sealed:v1:AAAA", "plain"),
                "corral admin seal-sso-secret acme",
            ),
            (
                issuer("").replace("/auth/sso/acme/callback", "/callback"),
                "/auth/sso/acme/callback",
            ),
            (
                issuer("").replace("\"acme\"", "\"Acme Corp\""),
                "name must be",
            ),
            (
                issuer("").replace("https://id", "ftp://id"),
                "discovery-url",
            ),
        ] {
            let settings: IssuerSettings = toml::from_str(&text).unwrap();
            let error = settings.check().unwrap_err().to_string();
            assert!(error.contains(problem), "{error}");
        }
        let unknown = toml::from_str::<IssuerSettings>(&issuer("secret = \"x\"\n"))
            .unwrap_err()
            .to_string();
        assert!(unknown.contains("secret"), "{unknown}");
    }
}
