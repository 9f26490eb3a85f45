//! The browser bundle as served under `/pkg/`: content-hashed names, precompressed
//! forms chosen by the request's `Accept-Encoding`, cached by browsers for a year.
//!
//! The build writes `pkg/` with the wasm split into a main module and chunks, their JS
//! loaders, the split manifest, the stylesheet and the icon, each next to its `.br` and
//! `.gz` forms (`scripts/build.sh`, docs/bundle.md). The binary carries those files (the
//! `site-bundle` crate); `--site-dir` reads them from a directory instead, for
//! development. Either way they are read once, at start-up, into memory.
//!
//! Every file is published under a name carrying a hash of its bytes, so a name's bytes
//! never change and browsers may keep them for good (`immutable`): a new build is new
//! names in the pages, and a repeat visit downloads nothing again. The scripts (every
//! `.js`, `.wasm` and `.json`) name each other relatively (`corral.js` fetches
//! `corral_bg.wasm`, the chunk loader imports `./corral.js` and fetches `./<chunk>.wasm`),
//! so they are published together in one directory named by a hash of them all,
//! `/pkg/corral-<hash>/`, with the vendored libraries' stylesheets that the terminal's
//! loader names the same way (`xterm.css`); the page's stylesheet and the icon each
//! carry their own hash.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, LazyLock};

use anyhow::Context;
use app::ShellAssets;
use axum::body::{Body, Bytes};
use axum::extract::{Path as UrlPath, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

/// Where the page shell finds the bundle (the router nests [`serve_asset`] here).
pub const PKG_PATH: &str = "pkg";

/// The files the build writes, before hashing.
const LOADER: &str = "corral.js";
const WASM: &str = "corral_bg.wasm";
const STYLESHEET: &str = "corral.css";
const ICON: &str = "favicon.svg";
/// The chunk loader the main module imports, and which chunks each split point needs
/// (written by `wasm-split`).
const SPLIT_LOADER: &str = "__wasm_split.js";
const SPLIT_MANIFEST: &str = "__wasm_split_manifest.json";

const IMMUTABLE: HeaderValue = HeaderValue::from_static("public, max-age=31536000, immutable");
/// Files asked for by their build name (not a page's link): always checked again.
const REVALIDATE: HeaderValue = HeaderValue::from_static("no-cache");

/// The bundle this process serves; cheap to clone.
#[derive(Clone, Default)]
pub struct Bundle(Arc<Files>);

#[derive(Default)]
struct Files {
    /// By the name a request uses: the hashed name, and the build's name too.
    by_name: HashMap<String, Served>,
    /// The scripts' directory (`corral-<hash>`), when the bundle has scripts.
    script_dir: Option<String>,
    /// Split point → the chunks it needs (file stems), for preload links.
    split_manifest: Option<HashMap<String, Vec<String>>>,
    stylesheet: Option<String>,
    icon: Option<String>,
    /// Every file once, for the start-up line.
    assets: Vec<Arc<Asset>>,
}

#[derive(Clone)]
struct Served {
    asset: Arc<Asset>,
    cache_control: HeaderValue,
}

struct Asset {
    content_type: &'static str,
    identity: Bytes,
    brotli: Option<Bytes>,
    gzip: Option<Bytes>,
}

/// A content coding this server has precompressed files for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    Brotli,
    Gzip,
    Identity,
}

impl Coding {
    fn token(self) -> &'static str {
        match self {
            Coding::Brotli => "br",
            Coding::Gzip => "gzip",
            Coding::Identity => "identity",
        }
    }
}

static EMBEDDED: LazyLock<Bundle> = LazyLock::new(|| {
    Bundle::from_files(
        site_bundle::FILES
            .iter()
            .map(|file| (file.name.to_owned(), Bytes::from_static(file.bytes))),
    )
});

impl Bundle {
    /// The bundle compiled into this binary (empty when it was built without one).
    pub fn embedded() -> Bundle {
        EMBEDDED.clone()
    }

    /// The bundle in `site_dir/pkg`, read now.
    pub fn from_dir(site_dir: &Path) -> anyhow::Result<Bundle> {
        let pkg = site_dir.join(PKG_PATH);
        let mut files = Vec::new();
        for entry in std::fs::read_dir(&pkg)
            .with_context(|| format!("cannot read the browser bundle in {}", pkg.display()))?
        {
            let entry = entry?;
            if !entry.file_type()?.is_file() {
                continue;
            }
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            let bytes = std::fs::read(entry.path())
                .with_context(|| format!("cannot read {}", entry.path().display()))?;
            files.push((name, Bytes::from(bytes)));
        }
        Ok(Bundle::from_files(files))
    }

    /// Publishes `files` (build name, bytes) under their hashed names.
    pub fn from_files(files: impl IntoIterator<Item = (String, Bytes)>) -> Bundle {
        let mut raw: HashMap<String, Bytes> = files.into_iter().collect();
        let mut names: Vec<String> = raw
            .keys()
            .filter(|name| !name.ends_with(".br") && !name.ends_with(".gz"))
            .cloned()
            .collect();
        names.sort();
        let mut assets: Vec<(String, Asset)> = Vec::new();
        for name in names {
            let Some(identity) = raw.remove(&name) else {
                continue;
            };
            let asset = Asset {
                content_type: content_type(&name),
                identity,
                brotli: raw.remove(&format!("{name}.br")),
                gzip: raw.remove(&format!("{name}.gz")),
            };
            assets.push((name, asset));
        }
        let has = |wanted: &str| assets.iter().any(|(name, _)| name == wanted);
        // One hash over every script, names and bytes: any change moves them all.
        let script_dir = (has(LOADER) && has(WASM)).then(|| {
            let parts: Vec<&[u8]> = assets
                .iter()
                .filter(|(name, _)| is_script(name))
                .flat_map(|(name, asset)| [name.as_bytes(), &asset.identity[..]])
                .collect();
            format!("{}-{}", app::OUTPUT_NAME, content_hash(&parts))
        });
        let split_manifest = assets
            .iter()
            .find(|(name, _)| name == SPLIT_MANIFEST)
            .and_then(|(_, asset)| match serde_json::from_slice(&asset.identity) {
                Ok(manifest) => Some(manifest),
                Err(error) => {
                    // Pages still load every chunk they need, one round trip later.
                    tracing::warn!(%error, "the bundle's {SPLIT_MANIFEST} is unreadable: pages will not preload their chunks");
                    None
                }
            });
        let mut files = Files {
            script_dir: script_dir.clone(),
            split_manifest,
            ..Files::default()
        };
        for (name, asset) in assets {
            let hashed = match &script_dir {
                Some(dir) if is_script(&name) => format!("{dir}/{name}"),
                _ => hashed_name(&name, &asset.identity),
            };
            match name.as_str() {
                STYLESHEET => files.stylesheet = Some(hashed.clone()),
                ICON => files.icon = Some(hashed.clone()),
                _ => {}
            }
            let asset = Arc::new(asset);
            files.assets.push(asset.clone());
            files.by_name.insert(
                hashed,
                Served {
                    asset: asset.clone(),
                    cache_control: IMMUTABLE,
                },
            );
            files.by_name.insert(
                name,
                Served {
                    asset,
                    cache_control: REVALIDATE,
                },
            );
        }
        Bundle(Arc::new(files))
    }

    /// Whether pages can hydrate: the wasm and its loader are both here.
    pub fn has_scripts(&self) -> bool {
        self.0.script_dir.is_some()
    }

    /// Where Leptos's hydration script finds `corral.js` and `corral_bg.wasm`:
    /// `pkg/corral-<hash>` (just `pkg` without scripts, where nothing loads them).
    pub fn pkg_dir(&self) -> String {
        match &self.0.script_dir {
            Some(dir) => format!("{PKG_PATH}/{dir}"),
            None => PKG_PATH.to_owned(),
        }
    }

    /// What Leptos needs to add preload links for the chunks a page's lazy routes
    /// use (it reads them from disk otherwise, and this bundle may be compiled in).
    pub fn split_manifest(&self) -> Option<leptos::WasmSplitManifest> {
        let manifest = self.0.split_manifest.clone()?;
        Some(leptos::WasmSplitManifest(
            leptos::prelude::ArcStoredValue::new((
                format!("/{}", self.pkg_dir()),
                manifest,
                SPLIT_LOADER.to_owned(),
            )),
        ))
    }

    /// What the page shell links to.
    pub fn shell_assets(&self) -> ShellAssets {
        let href = |name: &Option<String>| name.as_ref().map(|name| format!("/{PKG_PATH}/{name}"));
        ShellAssets {
            hydrate: self.has_scripts(),
            stylesheet: href(&self.0.stylesheet),
            icon: href(&self.0.icon),
        }
    }

    /// One line for the start-up log: how much is served and in which encodings.
    pub fn summary(&self) -> String {
        let total = |size: fn(&Asset) -> Option<usize>| -> usize {
            self.0
                .assets
                .iter()
                .filter_map(|asset| size(asset))
                .sum::<usize>()
                / 1024
        };
        format!(
            "{} KB, {} KB brotli, {} KB gzip",
            total(|asset| Some(asset.identity.len())),
            total(|asset| asset.brotli.as_ref().map(Bytes::len)),
            total(|asset| asset.gzip.as_ref().map(Bytes::len)),
        )
    }

    fn get(&self, name: &str) -> Option<&Served> {
        self.0.by_name.get(name)
    }
}

/// `GET /pkg/{*name}`: the file in the best encoding the client accepts.
pub async fn serve_asset(
    State(bundle): State<Bundle>,
    UrlPath(name): UrlPath<String>,
    headers: HeaderMap,
) -> Response {
    let Some(served) = bundle.get(&name) else {
        return (
            StatusCode::NOT_FOUND,
            [(header::CACHE_CONTROL, REVALIDATE)],
            format!("no file {name} in this server's browser bundle"),
        )
            .into_response();
    };
    let asset = &served.asset;
    let accepted = accepted_codings(&headers);
    let (coding, body) = [(Coding::Brotli, &asset.brotli), (Coding::Gzip, &asset.gzip)]
        .into_iter()
        .find_map(|(coding, bytes)| {
            let bytes = bytes.as_ref()?;
            accepted.contains(&coding).then(|| (coding, bytes.clone()))
        })
        .unwrap_or((Coding::Identity, asset.identity.clone()));
    let mut response = Response::new(Body::from(body));
    let response_headers = response.headers_mut();
    response_headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(asset.content_type),
    );
    response_headers.insert(header::CACHE_CONTROL, served.cache_control.clone());
    response_headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    if coding != Coding::Identity {
        response_headers.insert(
            header::CONTENT_ENCODING,
            HeaderValue::from_static(coding.token()),
        );
    }
    response
}

/// The precompressed codings a request accepts (RFC 9110 §12.5.3): those it lists with
/// a non-zero weight, or through `*` when it does not name them. Weights between
/// accepted codings are not compared: brotli is smaller, so it wins whenever accepted.
pub fn accepted_codings(headers: &HeaderMap) -> Vec<Coding> {
    let mut named: HashMap<String, bool> = HashMap::new();
    for value in headers.get_all(header::ACCEPT_ENCODING) {
        let Ok(value) = value.to_str() else { continue };
        for item in value.split(',') {
            let mut parts = item.split(';');
            let token = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
            if token.is_empty() {
                continue;
            }
            let weight = parts
                .filter_map(|param| param.trim().strip_prefix("q="))
                .find_map(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            named.insert(token, weight > 0.0);
        }
    }
    let wildcard = named.get("*").copied().unwrap_or(false);
    [Coding::Brotli, Coding::Gzip]
        .into_iter()
        .filter(|coding| named.get(coding.token()).copied().unwrap_or(wildcard))
        .collect()
}

/// Whether the file is one of the scripts (or their manifest), by its name: published
/// in the scripts' directory.
fn is_script(name: &str) -> bool {
    [".js", ".wasm", ".json"]
        .iter()
        .any(|extension| name.ends_with(extension))
        // The stylesheets of vendored libraries (xterm.css), which their loaders name
        // relatively; the page's own stylesheet is linked by its hashed name.
        || (name.ends_with(".css") && name != STYLESHEET)
}

/// `corral.css` → `corral-<hash>.css`.
fn hashed_name(name: &str, bytes: &[u8]) -> String {
    let hash = content_hash(&[bytes]);
    match name.rsplit_once('.') {
        Some((stem, extension)) => format!("{stem}-{hash}.{extension}"),
        None => format!("{name}-{hash}"),
    }
}

/// 16 hex digits of SHA-256 over `parts`: 64 bits, plenty to tell builds apart.
fn content_hash(parts: &[&[u8]]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part);
    }
    hex::encode(&hasher.finalize()[..8])
}

fn content_type(name: &str) -> &'static str {
    match name.rsplit_once('.').map(|(_, extension)| extension) {
        Some("js") => "text/javascript; charset=utf-8",
        Some("wasm") => "application/wasm",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("json") => "application/json",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use leptos::prelude::ReadValue;

    use super::*;

    fn accept(value: &str) -> Vec<Coding> {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_str(value).unwrap(),
        );
        accepted_codings(&headers)
    }

    #[test]
    fn codings_follow_the_accept_encoding_header() {
        use Coding::{Brotli, Gzip};
        assert_eq!(accept("gzip, deflate, br, zstd"), [Brotli, Gzip]);
        assert_eq!(accept("gzip"), [Gzip]);
        assert_eq!(accept("br;q=0, gzip;q=0.5"), [Gzip]);
        assert_eq!(accept("*"), [Brotli, Gzip]);
        assert_eq!(accept("*;q=0, gzip"), [Gzip]);
        assert_eq!(accept("BR ; q=1.0"), [Brotli]);
        assert_eq!(accept("identity"), []);
        assert_eq!(accepted_codings(&HeaderMap::new()), []);
    }

    fn bundle(files: &[(&str, &[u8])]) -> Bundle {
        Bundle::from_files(
            files
                .iter()
                .map(|(name, bytes)| (name.to_string(), Bytes::copy_from_slice(bytes))),
        )
    }

    #[test]
    fn the_scripts_share_a_directory_that_any_of_them_moves() {
        let scripts: &[(&str, &[u8])] = &[
            (LOADER, b"js"),
            (WASM, b"wasm"),
            (SPLIT_LOADER, b"loader"),
            ("split_0.wasm", b"chunk"),
            (SPLIT_MANIFEST, br#"{"split_a": ["split_0"]}"#),
            (STYLESHEET, b"body{}"),
        ];
        let first = bundle(scripts);
        let dir = first.pkg_dir();
        assert!(dir.starts_with("pkg/corral-") && dir.len() == "pkg/corral-".len() + 16);
        let published = |name: &str| format!("{}/{name}", &dir["pkg/".len()..]);
        for name in [LOADER, WASM, SPLIT_LOADER, "split_0.wasm"] {
            let served = first.get(&published(name)).expect(name);
            assert_eq!(served.cache_control, IMMUTABLE);
            assert_eq!(first.get(name).unwrap().cache_control, REVALIDATE);
        }
        // The stylesheet keeps its own hash, outside the scripts' directory.
        assert!(first.get(&published(STYLESHEET)).is_none());
        let (prefix, manifest, loader) = &*first.split_manifest().unwrap().0.read_value();
        assert_eq!(prefix, &format!("/{dir}"));
        assert_eq!(manifest["split_a"], ["split_0"]);
        assert_eq!(loader, SPLIT_LOADER);

        // A change in any chunk moves every script, and only the scripts.
        let mut changed = scripts.to_vec();
        changed[3] = ("split_0.wasm", b"other chunk");
        let second = bundle(&changed);
        assert_ne!(second.pkg_dir(), dir);
        assert_eq!(
            second.shell_assets().stylesheet,
            first.shell_assets().stylesheet
        );
        assert!(first.shell_assets().hydrate);
    }

    #[test]
    fn an_unreadable_manifest_only_loses_the_preloads() {
        let bundle = bundle(&[(LOADER, b"js"), (WASM, b"wasm"), (SPLIT_MANIFEST, b"{")]);
        assert!(bundle.has_scripts());
        assert!(bundle.split_manifest().is_none());
    }

    #[test]
    fn without_both_scripts_pages_do_not_hydrate() {
        let styles_only = bundle(&[(LOADER, b"js"), (STYLESHEET, b"body{}")]);
        let shell = styles_only.shell_assets();
        assert!(!shell.hydrate);
        let css = shell.stylesheet.unwrap();
        assert!(
            css.starts_with("/pkg/corral-") && css.ends_with(".css"),
            "{css}"
        );
        assert!(!Bundle::default().has_scripts());
    }
}
