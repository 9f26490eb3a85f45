//! The authorization matrix: every operation of the OpenAPI document, called by every
//! kind of caller on tenant A's objects, must answer with the status its row says.
//!
//! Callers: nobody signed in, A's plain user, A's admin (who made A's objects), B's
//! admin (A's ids are foreign to them) and a superadmin. The rows come from one table
//! ([`MATRIX`]), checked against the OpenAPI document both ways, so an endpoint added
//! without a row, or a row left for an endpoint that is gone, fails the test.
//!
//! A call the table expects to succeed may change what later calls see (a delete, a
//! revoke), so it runs in a world of its own; every other call shares one world, where
//! a refusal changes nothing.

use futures::stream::{self, StreamExt};
use reqwest::Method;

use engine::store::users::Role;
use engine::store::Backend;

use crate::helpers::{spawn_app, ApiUser, TestApp};
use crate::isolation::{body_for, documented_operations, populate_tenant_a, Ids};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Who {
    Anonymous,
    User,
    Admin,
    OtherAdmin,
    Superadmin,
}

const CALLERS: [Who; 5] = [
    Who::Anonymous,
    Who::User,
    Who::Admin,
    Who::OtherAdmin,
    Who::Superadmin,
];

/// Each operation's status for: anonymous, A's user, A's admin, B's admin, superadmin.
///
/// Request bodies are the small probes of [`body_for`]; a 422 for an allowed caller
/// means the probe reached the service's own checks (the caller was let in). Catalog
/// names are per tenant: B's admin or a superadmin writing `services/web` writes their
/// own tenant's entity, which is why their `PUT` succeeds while A's stays untouched.
const MATRIX: &[(&str, [u16; 5])] = &[
    ("POST /api/v1/session", [401, 401, 401, 401, 401]),
    ("GET /api/v1/session", [401, 401, 401, 401, 401]),
    ("DELETE /api/v1/session", [401, 204, 204, 204, 204]),
    (
        "POST /api/v1/session/logout-everywhere",
        [401, 204, 204, 204, 204],
    ),
    ("GET /api/v1/clusters", [401, 200, 200, 200, 200]),
    ("POST /api/v1/clusters", [401, 201, 201, 422, 422]),
    ("GET /api/v1/clusters/{id}", [401, 200, 200, 404, 200]),
    ("DELETE /api/v1/clusters/{id}", [401, 409, 409, 404, 409]),
    ("POST /api/v1/clusters/{id}/plan", [401, 200, 200, 404, 200]),
    (
        "POST /api/v1/clusters/{id}/changes",
        [401, 409, 409, 404, 409],
    ),
    ("PUT /api/v1/clusters/{id}/lease", [401, 200, 200, 404, 200]),
    (
        "PUT /api/v1/clusters/{id}/healing",
        [401, 200, 200, 404, 200],
    ),
    ("PUT /api/v1/clusters/{id}/pin", [401, 200, 200, 404, 200]),
    ("GET /api/v1/jobs/{id}", [401, 200, 200, 404, 200]),
    ("GET /api/v1/jobs/{id}/tasks", [401, 200, 200, 404, 200]),
    (
        "GET /api/v1/jobs/{id}/tasks/{task_id}/attempts",
        [401, 200, 200, 404, 200],
    ),
    ("GET /api/v1/jobs/{id}/events", [401, 200, 200, 404, 200]),
    ("GET /api/v1/jobs/{id}/stream", [401, 200, 200, 404, 200]),
    ("POST /api/v1/jobs/{id}/cancel", [401, 200, 200, 404, 200]),
    ("POST /api/v1/jobs/{id}/retry", [401, 200, 200, 404, 200]),
    ("GET /api/v1/catalog", [401, 200, 200, 200, 200]),
    ("POST /api/v1/catalog/import", [401, 403, 200, 200, 200]),
    ("GET /api/v1/catalog/{kind}", [401, 200, 200, 200, 200]),
    // A dry run of the lifecycle template, which only tenant A's catalog has.
    ("POST /api/v1/catalog/rollouts", [401, 403, 200, 404, 404]),
    ("GET /api/v1/catalog/rollouts", [401, 200, 200, 200, 200]),
    // Tenant A has no rollout here: every id is unknown (rollouts.rs tests a real one).
    (
        "GET /api/v1/catalog/rollouts/{id}",
        [401, 404, 404, 404, 404],
    ),
    (
        "GET /api/v1/catalog/{kind}/{name}",
        [401, 200, 200, 404, 404],
    ),
    (
        "PUT /api/v1/catalog/{kind}/{name}",
        [401, 403, 200, 200, 200],
    ),
    (
        "DELETE /api/v1/catalog/{kind}/{name}",
        [401, 403, 422, 404, 404],
    ),
    (
        "GET /api/v1/catalog/{kind}/{name}/history",
        [401, 200, 200, 404, 404],
    ),
    ("GET /api/v1/resources", [401, 200, 200, 200, 200]),
    (
        "POST /api/v1/resources/{kind}/{name}",
        [401, 403, 201, 201, 201],
    ),
    (
        "POST /api/v1/resources/{kind}/{name}/versions/{version}/stage",
        [401, 403, 200, 404, 404],
    ),
    // Tenant A's cluster was made by A's admin and has no node 1000 yet: its owner, a
    // superadmin (who administers every tenant) get as far as the node; A's plain user
    // is not the owner.
    (
        "POST /api/v1/clusters/{id}/nodes/{number}/ssh/certificate",
        [401, 403, 404, 404, 404],
    ),
    (
        "GET /api/v1/clusters/{id}/nodes/{number}/ssh",
        [401, 403, 404, 404, 404],
    ),
    (
        "GET /api/v1/clusters/{id}/nodes/{number}/terminal",
        [401, 403, 404, 404, 404],
    ),
    ("GET /api/v1/hooks", [401, 403, 200, 200, 200]),
    ("POST /api/v1/hooks", [401, 403, 201, 201, 201]),
    ("GET /api/v1/hooks/{id}", [401, 403, 200, 404, 200]),
    ("DELETE /api/v1/hooks/{id}", [401, 403, 204, 404, 204]),
    ("POST /api/v1/hooks/{id}/test", [401, 403, 202, 404, 202]),
    (
        "GET /api/v1/hooks/{id}/deliveries",
        [401, 403, 200, 404, 200],
    ),
    // A's delivery is still pending (no delivery loop runs here): not redelivered.
    (
        "POST /api/v1/hooks/{id}/deliveries/{delivery}/redeliver",
        [401, 403, 409, 404, 409],
    ),
    // Groups and rules are the caller's own tenant's: B's admin and the superadmin have
    // no group named as A's. A's request was asked by another user of A's, so A's plain
    // user is no approver (403) and the admins decide it.
    ("GET /api/v1/groups", [401, 403, 200, 200, 200]),
    ("POST /api/v1/groups", [401, 403, 201, 201, 201]),
    ("GET /api/v1/groups/{name}", [401, 403, 200, 404, 404]),
    ("DELETE /api/v1/groups/{name}", [401, 403, 204, 404, 404]),
    (
        "POST /api/v1/groups/{name}/members",
        [401, 403, 200, 404, 404],
    ),
    (
        "DELETE /api/v1/groups/{name}/members/{username}",
        [401, 403, 200, 404, 404],
    ),
    ("GET /api/v1/approval-rules", [401, 403, 200, 200, 200]),
    ("POST /api/v1/approval-rules", [401, 403, 201, 201, 201]),
    ("GET /api/v1/budget", [401, 403, 200, 200, 200]),
    ("PUT /api/v1/budget", [401, 403, 200, 200, 200]),
    ("GET /api/v1/showback", [401, 403, 200, 200, 200]),
    (
        "DELETE /api/v1/approval-rules/{id}",
        [401, 403, 204, 404, 204],
    ),
    ("GET /api/v1/approvals", [401, 200, 200, 200, 200]),
    ("GET /api/v1/approvals/{id}", [401, 200, 200, 404, 200]),
    (
        "POST /api/v1/approvals/{id}/approve",
        [401, 403, 202, 404, 202],
    ),
    (
        "POST /api/v1/approvals/{id}/deny",
        [401, 403, 200, 404, 200],
    ),
    ("GET /api/v1/me", [401, 200, 200, 200, 200]),
    ("POST /api/v1/me/password", [401, 422, 422, 422, 422]),
    ("GET /api/v1/me/keys", [401, 200, 200, 200, 200]),
    // The probe is no key at all.
    ("POST /api/v1/me/keys", [401, 422, 422, 422, 422]),
    // The key is A's admin's: nobody else's to remove, admins and superadmins included.
    ("DELETE /api/v1/me/keys/{id}", [401, 404, 200, 404, 404]),
    ("GET /api/v1/users", [401, 403, 200, 200, 200]),
    ("POST /api/v1/users", [401, 403, 201, 201, 201]),
    ("GET /api/v1/users/{id}", [401, 403, 200, 404, 200]),
    ("PATCH /api/v1/users/{id}", [401, 403, 422, 404, 200]),
    ("DELETE /api/v1/users/{id}", [401, 403, 422, 404, 204]),
    // Only superadmins move users between tenants; A's admin may not move A's users.
    ("PUT /api/v1/users/{id}/tenant", [401, 403, 403, 404, 200]),
    ("GET /api/v1/users/{id}/tokens", [401, 403, 200, 404, 200]),
    (
        "DELETE /api/v1/users/{id}/tokens/{token_id}",
        [401, 403, 200, 404, 200],
    ),
    ("GET /api/v1/tenants", [401, 200, 200, 200, 200]),
    ("POST /api/v1/tenants", [401, 403, 403, 403, 201]),
    ("GET /api/v1/tenants/{id}", [401, 200, 200, 404, 200]),
    ("DELETE /api/v1/tenants/{id}", [401, 403, 403, 404, 409]),
    ("PUT /api/v1/tenants/{id}/quotas", [401, 403, 403, 404, 200]),
    (
        "PUT /api/v1/tenants/{id}/local-nodes",
        [401, 403, 403, 404, 200],
    ),
    (
        "PUT /api/v1/tenants/{id}/provider-types",
        [401, 403, 403, 404, 200],
    ),
    (
        "PUT /api/v1/tenants/{id}/dedicated-workers",
        [401, 403, 403, 404, 200],
    ),
    (
        "PUT /api/v1/tenants/{id}/node-shell",
        [401, 403, 200, 404, 200],
    ),
    (
        "PUT /api/v1/tenants/{id}/terminal-recording",
        [401, 403, 200, 404, 200],
    ),
    (
        "GET /api/v1/tenants/{id}/admin-keys",
        [401, 403, 200, 404, 200],
    ),
    (
        "PUT /api/v1/tenants/{id}/admin-keys",
        [401, 403, 200, 404, 200],
    ),
    // No session of tenant A was recorded: the id names nothing for anyone.
    (
        "GET /api/v1/audit/{id}/recording",
        [401, 404, 404, 404, 404],
    ),
    ("GET /api/v1/tokens", [401, 200, 200, 200, 200]),
    ("POST /api/v1/tokens", [401, 201, 201, 201, 201]),
    ("DELETE /api/v1/tokens/{id}", [401, 404, 200, 404, 404]),
    ("GET /api/v1/audit", [401, 403, 200, 200, 200]),
    ("GET /api/v1/pool-hosts", [401, 403, 200, 200, 200]),
    ("POST /api/v1/pool-hosts", [401, 403, 201, 201, 201]),
    ("GET /api/v1/pool-hosts/{id}", [401, 403, 200, 404, 200]),
    ("PATCH /api/v1/pool-hosts/{id}", [401, 403, 200, 404, 200]),
    ("DELETE /api/v1/pool-hosts/{id}", [401, 403, 204, 404, 204]),
    // Providers are named in the caller's own catalog, where B and the superadmin have
    // none. The probe `{}` is no credentials (422); this test server runs no workers,
    // so a check has no providers to run (409).
    (
        "GET /api/v1/providers/{name}/credentials",
        [401, 403, 200, 404, 404],
    ),
    (
        "PUT /api/v1/providers/{name}/credentials",
        [401, 403, 422, 404, 404],
    ),
    (
        "DELETE /api/v1/providers/{name}/credentials",
        [401, 403, 200, 404, 404],
    ),
    (
        "POST /api/v1/providers/{name}/test",
        [401, 403, 409, 404, 404],
    ),
    // Anyone's own credentials, for A's `local` (which allows users' own in this world):
    // A's admin set theirs, A's user has none (so deletes nothing: 404), and B's admin
    // and the superadmin have no such provider in their own catalogs.
    (
        "GET /api/v1/providers/{name}/credentials/mine",
        [401, 200, 200, 404, 404],
    ),
    (
        "PUT /api/v1/providers/{name}/credentials/mine",
        [401, 422, 422, 404, 404],
    ),
    (
        "DELETE /api/v1/providers/{name}/credentials/mine",
        [401, 404, 200, 404, 404],
    ),
];

/// One server with tenant A's objects and a caller of each kind.
struct World {
    app: TestApp,
    ids: Ids,
    user: ApiUser,
    admin: ApiUser,
    other_admin: ApiUser,
    superadmin: ApiUser,
}

impl World {
    async fn new() -> Self {
        let app = spawn_app(Backend::Sqlite).await;
        let (ids, admin) = populate_tenant_a(&app).await;
        let user = app.user("acme-user", Role::User, "acme").await;
        let other_admin = app.user("bravo-admin", Role::TenantAdmin, "bravo").await;
        let superadmin = app.user("root", Role::Superadmin, "default").await;
        World {
            app,
            ids,
            user,
            admin,
            other_admin,
            superadmin,
        }
    }

    async fn status(&self, who: Who, operation: &str) -> u16 {
        let (method, path) = operation.split_once(' ').unwrap();
        let method = Method::from_bytes(method.as_bytes()).unwrap();
        let url = self.app.url(&self.ids.fill(path));
        let mut request = self
            .app
            .client
            .request(method, url)
            .timeout(std::time::Duration::from_secs(30));
        let token = match who {
            Who::Anonymous => None,
            Who::User => Some(&self.user.token),
            Who::Admin => Some(&self.admin.token),
            Who::OtherAdmin => Some(&self.other_admin.token),
            Who::Superadmin => Some(&self.superadmin.token),
        };
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body_for(operation) {
            request = request.json(&body);
        }
        // A live stream answers its status at once and then stays open: only the
        // status is read.
        request.send().await.unwrap().status().as_u16()
    }
}

fn is_success(status: u16) -> bool {
    (200..300).contains(&status)
}

#[tokio::test]
async fn every_operation_answers_every_caller_as_the_table_says() {
    let shared = World::new().await;
    let doc: serde_json::Value = shared
        .app
        .get("/api/v1/openapi.json")
        .await
        .json()
        .await
        .unwrap();
    let documented = documented_operations(&doc);
    let rows: std::collections::BTreeSet<String> =
        MATRIX.iter().map(|(op, _)| (*op).to_owned()).collect();
    assert_eq!(
        documented.difference(&rows).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "operations without a row in MATRIX"
    );
    assert_eq!(
        rows.difference(&documented).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "rows for operations that no longer exist"
    );

    let mut calls = Vec::new();
    for (operation, expected) in MATRIX {
        for (who, status) in CALLERS.iter().zip(expected) {
            calls.push((*operation, *who, *status));
        }
    }
    // Refusals first, in the shared world; then each expected success in its own.
    let mut found = Vec::new();
    for &(operation, who, expected) in calls
        .iter()
        .filter(|(operation, _, status)| !is_success(*status) || operation.starts_with("GET "))
    {
        found.push((
            operation,
            who,
            expected,
            shared.status(who, operation).await,
        ));
    }
    let isolated: Vec<_> = calls
        .iter()
        .filter(|(operation, _, status)| is_success(*status) && !operation.starts_with("GET "))
        .copied()
        .collect();
    let results: Vec<_> = stream::iter(isolated)
        .map(|(operation, who, expected)| async move {
            let world = World::new().await;
            (operation, who, expected, world.status(who, operation).await)
        })
        .buffer_unordered(4)
        .collect()
        .await;
    found.extend(results);

    let wrong: Vec<String> = found
        .iter()
        .filter(|(_, _, expected, actual)| expected != actual)
        .map(|(operation, who, expected, actual)| {
            format!("{operation} as {who:?}: expected {expected}, got {actual}")
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{} mismatches:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
