//! `corral admin backup` and `corral admin restore`: the embedded SQLite deployment's
//! whole state in one file, taken while Corral runs, and put back while it does not.
//!
//! A backup is a tar archive (mode 0600: it holds keys) of:
//! - `corral-backup.json`: what it is (format, Corral's version, time, schema);
//! - `corral.db`: a consistent copy of the database (`VACUUM INTO`);
//! - `secret.key`: the key the database's stored secrets are sealed with, without
//!   which the copy's credentials and host keys cannot be opened (not when the key
//!   comes from `CORRAL_SECRET_KEY`: that value is the operator's to keep);
//! - `keys/<dir>/…`: the client keys providers keep in the data directory to reach
//!   the nodes they made (`pool-keys`, `docker-keys`, `ec2-keys`, `exec-keys`).
//!
//! Local nodes are processes of this host and are not in a backup; a restored server
//! re-adopts the ones still running. A PostgreSQL deployment is backed up with
//! `pg_dump` plus `secret.key` (docs/operations.md).
//!
//! Restore checks the whole archive (names, the copy's integrity, a schema this
//! binary knows) before it touches anything, needs the data directory's lock alone
//! (no `serve` or `worker` may be running on it), and moves what it replaces aside
//! (`*.before-restore-<time>`) rather than deleting it.

use std::fs::{self, File};
use std::io::{Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::Args;
use engine::secrets::{SECRET_KEY_ENV, SECRET_KEY_FILE};
use engine::store::{DatabaseUrl, Store};
use serde::{Deserialize, Serialize};

use crate::config::{Config, ServerArgs};

/// The archive's description of itself.
const MANIFEST: &str = "corral-backup.json";
/// The database copy's name in the archive.
const DATABASE: &str = "corral.db";
/// Where the provider key directories go in the archive.
const KEYS: &str = "keys";
/// The data directory's provider key directories a backup carries.
const KEY_DIRS: &[&str] = &["pool-keys", "docker-keys", "ec2-keys", "exec-keys"];
/// The archive layout this binary writes and reads.
const FORMAT: u32 = 1;

#[derive(Debug, Args)]
pub struct BackupArgs {
    /// The archive to write (must not exist).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    #[command(flatten)]
    pub server: ServerArgs,
}

#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// An archive `corral admin backup` wrote.
    #[arg(long, value_name = "FILE")]
    pub from: PathBuf,
    #[command(flatten)]
    pub server: ServerArgs,
}

#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    format: u32,
    corral_version: String,
    created_at: String,
    migrations_applied: usize,
    /// False when the key came from `CORRAL_SECRET_KEY`: the operator keeps that value.
    #[serde(default = "holds_the_key")]
    secret_key_included: bool,
}

fn holds_the_key() -> bool {
    true
}

pub async fn backup(args: BackupArgs) -> anyhow::Result<ExitCode> {
    let config = Config::load(args.server)?;
    sqlite_database(&config.database_url)?;
    if args.out.exists() {
        bail!("{} already exists: name a new file", args.out.display());
    }
    let store = crate::serve::open_store(&config).await?;
    // Beside the archive, so the final rename cannot cross file systems.
    let work = tempfile::Builder::new()
        .prefix(".corral-backup-")
        .tempdir_in(parent_of(&args.out))
        .with_context(|| format!("cannot write next to {}", args.out.display()))?;
    let copy = work.path().join(DATABASE);
    store
        .snapshot_into(&copy)
        .await
        .context("cannot copy the database")?;
    let status = store.migration_status().await?;
    store.close().await;
    // A key given in the environment is the operator's to keep; the file is ours.
    let key_from_environment = std::env::var_os(SECRET_KEY_ENV).is_some();
    let manifest = Manifest {
        format: FORMAT,
        corral_version: env!("CARGO_PKG_VERSION").to_owned(),
        created_at: chrono::Utc::now().to_rfc3339(),
        migrations_applied: status.applied,
        secret_key_included: !key_from_environment,
    };
    let partial = work.path().join("archive.tar");
    write_archive(&partial, &manifest, &copy, &config.data_dir)?;
    fs::rename(&partial, &args.out)
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    let size = fs::metadata(&args.out).map(|meta| meta.len()).unwrap_or(0);
    if key_from_environment {
        println!(
            "the secret key comes from {SECRET_KEY_ENV} and is not in the archive: \
             keep that value with it, or its stored secrets cannot be opened"
        );
    }
    println!(
        "backed up {} to {} ({} KiB, schema {}); it holds the secret key: keep it private",
        config.database_url.redacted(),
        args.out.display(),
        size.div_ceil(1024),
        status.applied
    );
    Ok(ExitCode::SUCCESS)
}

fn write_archive(
    path: &Path,
    manifest: &Manifest,
    database: &Path,
    data_dir: &Path,
) -> anyhow::Result<()> {
    let file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    let mut archive = tar::Builder::new(file);
    let described = serde_json::to_vec_pretty(manifest)?;
    append_bytes(&mut archive, MANIFEST, &described)?;
    archive
        .append_path_with_name(database, DATABASE)
        .context("cannot archive the database copy")?;
    if manifest.secret_key_included {
        let key = data_dir.join(SECRET_KEY_FILE);
        archive
            .append_path_with_name(&key, SECRET_KEY_FILE)
            .with_context(|| format!("cannot archive {}", key.display()))?;
    }
    for dir in KEY_DIRS {
        let source = data_dir.join(dir);
        if source.is_dir() {
            archive
                .append_dir_all(format!("{KEYS}/{dir}"), &source)
                .with_context(|| format!("cannot archive {}", source.display()))?;
        }
    }
    let mut file = archive.into_inner().context("cannot finish the archive")?;
    file.flush()?;
    file.sync_all()?;
    Ok(())
}

fn append_bytes(archive: &mut tar::Builder<File>, name: &str, bytes: &[u8]) -> anyhow::Result<()> {
    let mut header = tar::Header::new_gnu();
    header.set_size(bytes.len() as u64);
    header.set_mode(0o600);
    header.set_mtime(chrono::Utc::now().timestamp().try_into().unwrap_or(0));
    header.set_cksum();
    archive
        .append_data(&mut header, name, bytes)
        .with_context(|| format!("cannot archive {name}"))
}

pub async fn restore(args: RestoreArgs) -> anyhow::Result<ExitCode> {
    let config = Config::load(args.server)?;
    let database = sqlite_database(&config.database_url)?;
    fs::create_dir_all(&config.data_dir)
        .with_context(|| format!("cannot create {}", config.data_dir.display()))?;
    fs::set_permissions(&config.data_dir, fs::Permissions::from_mode(0o700))?;
    let _alone = lock_alone(&config.data_dir)?;

    // Everything is unpacked and checked before anything in the data dir moves.
    let staged = tempfile::Builder::new()
        .prefix(".corral-restore-")
        .tempdir_in(&config.data_dir)
        .context("cannot stage the restore in the data directory")?;
    let manifest = unpack(&args.from, staged.path())?;
    let copy = staged.path().join(DATABASE);
    if !is_sqlite_file(&copy)? {
        bail!(
            "{}: its {DATABASE} is not an SQLite database; nothing was changed",
            args.from.display()
        );
    }
    let checked = Store::connect(&DatabaseUrl::sqlite_file(&copy))
        .await
        .context("the archive's database does not open")?;
    let check = checked
        .check_snapshot()
        .await
        .with_context(|| format!("{} does not hold a Corral database", args.from.display()))?;
    checked.close().await;
    if !check.integrity_problems.is_empty() {
        bail!(
            "the archive's database is damaged ({}); nothing was changed",
            check.integrity_problems.join("; ")
        );
    }
    if !check.unknown_migrations.is_empty() {
        bail!(
            "the archive comes from a newer Corral ({}; schema versions {:?} are unknown \
             to this one {}): restore it with that version; nothing was changed",
            manifest.corral_version,
            check.unknown_migrations,
            env!("CARGO_PKG_VERSION")
        );
    }

    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string();
    let mut moved_aside = Vec::new();
    for suffix in ["", "-wal", "-shm"] {
        let current = PathBuf::from(format!("{}{suffix}", database.display()));
        moved_aside.extend(move_aside(&current, &stamp)?);
    }
    let key = config.data_dir.join(SECRET_KEY_FILE);
    if manifest.secret_key_included {
        moved_aside.extend(move_aside(&key, &stamp)?);
        fs::rename(staged.path().join(SECRET_KEY_FILE), &key)
            .with_context(|| format!("cannot put the secret key at {}", key.display()))?;
    }
    for dir in KEY_DIRS {
        let restored = staged.path().join(KEYS).join(dir);
        if restored.is_dir() {
            let target = config.data_dir.join(dir);
            moved_aside.extend(move_aside(&target, &stamp)?);
            fs::rename(&restored, &target)
                .with_context(|| format!("cannot put {}", target.display()))?;
        }
    }
    fs::rename(&copy, &database)
        .with_context(|| format!("cannot put the database at {}", database.display()))?;
    println!(
        "restored {} (Corral {}, taken {}, schema {}) into {}",
        args.from.display(),
        manifest.corral_version,
        manifest.created_at,
        check.applied_migrations,
        config.data_dir.display()
    );
    for path in moved_aside {
        println!("kept the replaced {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// Unpacks the archive's known entries into `into`, refusing anything else (a path
/// outside the archive, a link, a file it should not hold).
fn unpack(archive_path: &Path, into: &Path) -> anyhow::Result<Manifest> {
    let file = File::open(archive_path)
        .with_context(|| format!("cannot read {}", archive_path.display()))?;
    let mut archive = tar::Archive::new(file);
    let mut manifest = None;
    let entries = archive
        .entries()
        .with_context(|| format!("{} is not a backup archive", archive_path.display()))?;
    for entry in entries {
        let mut entry =
            entry.with_context(|| format!("{} is not a backup archive", archive_path.display()))?;
        let name = entry.path()?.to_string_lossy().into_owned();
        let kind = entry.header().entry_type();
        if !(kind.is_file() || kind.is_dir()) || !is_known_entry(&name) {
            bail!(
                "{} holds {name:?}, which no backup holds; nothing was changed",
                archive_path.display()
            );
        }
        if name == MANIFEST {
            let mut text = String::new();
            entry.read_to_string(&mut text)?;
            let read: Manifest = serde_json::from_str(&text)
                .with_context(|| format!("{MANIFEST} in the archive is unreadable"))?;
            if read.format != FORMAT {
                bail!(
                    "the archive's format is {} (this Corral reads {FORMAT}); nothing was changed",
                    read.format
                );
            }
            manifest = Some(read);
        } else if !entry.unpack_in(into)? {
            bail!("{name:?} in the archive points outside it; nothing was changed");
        }
    }
    let manifest = manifest.with_context(|| {
        format!(
            "{} has no {MANIFEST}: not a backup archive; nothing was changed",
            archive_path.display()
        )
    })?;
    let key = manifest.secret_key_included.then_some(SECRET_KEY_FILE);
    for required in [Some(DATABASE), key].into_iter().flatten() {
        if !into.join(required).is_file() {
            bail!(
                "{} has no {required}: not a complete backup; nothing was changed",
                archive_path.display()
            );
        }
    }
    Ok(manifest)
}

fn is_known_entry(name: &str) -> bool {
    let name = name.trim_end_matches('/');
    if [MANIFEST, DATABASE, SECRET_KEY_FILE, KEYS].contains(&name) {
        return true;
    }
    let Some(rest) = name.strip_prefix("keys/") else {
        return false;
    };
    let mut parts = rest.split('/');
    let dir_known = parts.next().is_some_and(|dir| KEY_DIRS.contains(&dir));
    dir_known && parts.all(|part| !part.is_empty() && part != ".." && part != ".")
}

/// Whether the file starts as every SQLite database does.
fn is_sqlite_file(path: &Path) -> anyhow::Result<bool> {
    const MAGIC: &[u8; 16] = b"SQLite format 3\0";
    let mut start = [0_u8; 16];
    let mut file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(file.read_exact(&mut start).is_ok() && &start == MAGIC)
}

/// Renames `path` to `<path>.before-restore-<stamp>` if it exists.
fn move_aside(path: &Path, stamp: &str) -> anyhow::Result<Option<PathBuf>> {
    if !path.exists() {
        return Ok(None);
    }
    let aside = PathBuf::from(format!("{}.before-restore-{stamp}", path.display()));
    fs::rename(path, &aside).with_context(|| format!("cannot move {} aside", path.display()))?;
    Ok(Some(aside))
}

/// Holds the data directory's lock alone, or says which process is in the way.
fn lock_alone(data_dir: &Path) -> anyhow::Result<File> {
    let (file, path) = crate::serve::data_dir_lock(data_dir)?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(fs::TryLockError::WouldBlock) => bail!(
            "a Corral process (serve, worker or another command) is using {}: stop it before restoring",
            data_dir.display()
        ),
        Err(fs::TryLockError::Error(error)) => {
            Err(error).with_context(|| format!("cannot lock {}", path.display()))
        }
    }
}

/// The SQLite database's file, or why a backup of this deployment is not ours to take.
fn sqlite_database(url: &DatabaseUrl) -> anyhow::Result<PathBuf> {
    url.sqlite_path().with_context(|| {
        format!(
            "{} is PostgreSQL: back it up with pg_dump, and keep the data directory's {SECRET_KEY_FILE} \
             with it (see docs/operations.md)",
            url.redacted()
        )
    })
}

fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}
