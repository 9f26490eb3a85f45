//! The SQLite and PostgreSQL migration trees describe one schema: the same files, and
//! in each the same statements once the known dialect differences are folded. A column
//! or index added to one tree only fails here, before it fails at run time on one
//! backend. Also what individual migrations do to the rows they fix.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use engine::accounts::{create_user, Password};
use engine::store::tenants::DEFAULT_TENANT_ID;
use engine::store::users::Role;
use engine::store::{now_ms, Backend, Store};
use engine::testing::TestDatabase;

/// SQLite's spelling and PostgreSQL's of the same thing; each side is folded to the
/// right-hand form before comparing.
const DIALECT: &[(&str, &str)] = &[
    // Event ids only grow (SQLite needs AUTOINCREMENT for that; a sequence always does).
    ("INTEGER PRIMARY KEY AUTOINCREMENT", "BIGSERIAL PRIMARY KEY"),
    ("BLOB", "BYTEA"),
    // A clustered table on SQLite; PostgreSQL has no such option.
    (") WITHOUT ROWID;", ");"),
    // The current Unix time in whole seconds, rounded down.
    (
        "CAST(strftime('%s', 'now') AS BIGINT)",
        "CAST(FLOOR(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP)) AS BIGINT)",
    ),
];

fn tree(backend: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../migrations")
        .join(backend)
}

fn files(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".sql"))
        .collect()
}

/// The statements of a migration: comments dropped, dialect folded, white space
/// collapsed to one space, one statement per line.
fn normalised(sql: &str) -> Vec<String> {
    let code: String = sql
        .lines()
        .map(|line| line.split("--").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join(" ");
    let mut code = code.split_whitespace().collect::<Vec<_>>().join(" ");
    for (sqlite, postgres) in DIALECT {
        code = code.replace(sqlite, postgres);
    }
    code = code.replace("( ", "(").replace(" )", ")");
    code.split(';')
        .map(str::trim)
        .filter(|statement| !statement.is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
fn both_backends_migrate_to_the_same_schema() {
    let (sqlite, postgres) = (tree("sqlite"), tree("postgres"));
    let names = files(&sqlite);
    assert_eq!(
        names,
        files(&postgres),
        "the two trees hold different migrations"
    );
    assert!(!names.is_empty());
    for name in &names {
        let read = |dir: &Path| std::fs::read_to_string(dir.join(name)).unwrap();
        let (left, right) = (normalised(&read(&sqlite)), normalised(&read(&postgres)));
        for (index, (a, b)) in left.iter().zip(&right).enumerate() {
            assert_eq!(a, b, "{name}: statement {} differs", index + 1);
        }
        assert_eq!(left.len(), right.len(), "{name}: statement counts differ");
    }
}

#[test]
fn normalising_folds_only_the_known_differences() {
    let sqlite = "CREATE TABLE t (\n  id INTEGER PRIMARY KEY AUTOINCREMENT, -- grows\n  b BLOB\n) WITHOUT ROWID;";
    let postgres = "CREATE TABLE t (id BIGSERIAL PRIMARY KEY, b BYTEA);";
    assert_eq!(normalised(sqlite), normalised(postgres));
    let drifted = "CREATE TABLE t (id BIGSERIAL PRIMARY KEY, b BYTEA, extra TEXT);";
    assert_ne!(normalised(sqlite), normalised(drifted));
}

/// The migration that gives tenants seeded with `created_at_ms = 0` a real time.
const TENANT_CREATED_AT: i64 = 20261127230000;

async fn default_tenant_created_at(store: &Store) -> i64 {
    store.tenant(DEFAULT_TENANT_ID).await.unwrap().created_at_ms
}

/// A new database's `default` tenant was made by its first migration, now; an older
/// database's, whose seed said 1970, when its first user was made (the first start).
async fn the_default_tenant_gets_a_real_creation_time(backend: Backend) {
    let db = TestDatabase::new(backend).await;
    let before = now_ms();
    let store = Store::open(&db.url).await.unwrap();
    let created = default_tenant_created_at(&store).await;
    // The database's clock counts whole seconds here.
    assert!(
        (before - 1000..=now_ms()).contains(&created),
        "a new database's default tenant was made at {created}, not around {before}"
    );

    // A database migrated before the fix: the seed's 0, and a first admin made later.
    let admin = create_user(
        &store,
        "admin",
        Role::Superadmin,
        None,
        &Password::new("a long enough password"),
    )
    .await
    .unwrap();
    sqlx::query("UPDATE tenants SET created_at_ms = 0 WHERE id = $1")
        .bind(DEFAULT_TENANT_ID)
        .execute(store.pool())
        .await
        .unwrap();
    sqlx::query("DELETE FROM _sqlx_migrations WHERE version = $1")
        .bind(TENANT_CREATED_AT)
        .execute(store.pool())
        .await
        .unwrap();
    store.migrate().await.unwrap();
    assert_eq!(default_tenant_created_at(&store).await, admin.created_at_ms);
}

engine::on_both_backends!(the_default_tenant_gets_a_real_creation_time);
