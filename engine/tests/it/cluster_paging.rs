//! The cluster list pages in SQL (issue 42, thousands of clusters), on both backends:
//! expiring first, a cursor goes on exactly after the last row shown (nothing twice,
//! nothing missed, also with clusters added between pages), filters and totals are the
//! whole list's, and a tenant's list never holds another tenant's clusters whatever
//! the cursor.

use std::collections::HashSet;

use api_types::ClusterState;
use domain::cost::{Interval, Month};
use engine::accounts::{create_user, Password};
use engine::store::clusters::listing::{ClusterCursor, ClusterFilter};
use engine::store::clusters::Cluster;
use engine::store::tenants::{NewTenant, DEFAULT_TENANT_ID};
use engine::store::users::Role;
use engine::store::{Backend, Store};
use engine::testing::{bare_cluster, TestDatabase};

const HOUR: i64 = 3_600_000;
const NOW: i64 = 1_780_000_000_000;

async fn open(backend: Backend) -> (TestDatabase, Store) {
    let db = TestDatabase::new(backend).await;
    let store = Store::open(&db.url).await.unwrap();
    (db, store)
}

/// A cluster of `tenant` in `state`, its lease ending at `lease` (or stopped, to be
/// deleted at `deletes_at`).
async fn cluster(
    store: &Store,
    tenant: &str,
    name: &str,
    state: ClusterState,
    lease: Option<i64>,
    deletes_at: Option<i64>,
) -> Cluster {
    let mut new = bare_cluster(tenant, name);
    new.state = state;
    new.lease_expires_ms = lease;
    new.layout_json = r#"{"nodes": [{}, {}, {}]}"#.to_owned();
    let created = store.create_cluster(&new, NOW).await.unwrap();
    if deletes_at.is_some() {
        sqlx::query("UPDATE clusters SET lease_deletes_at_ms = $2 WHERE id = $1")
            .bind(&created.id)
            .bind(deletes_at)
            .execute(store.pool())
            .await
            .unwrap();
    }
    store.cluster(&created.id).await.unwrap()
}

fn everything(tenant: &str) -> ClusterFilter {
    ClusterFilter {
        tenant_id: tenant.to_owned(),
        ..ClusterFilter::default()
    }
}

/// The list's order as the portal always showed it: the soonest deadline (a lease
/// stop's deletion, else the lease's end) first, those without a lease last; by name.
fn expected_order(mut clusters: Vec<Cluster>) -> Vec<String> {
    clusters.sort_by_key(|cluster| {
        (
            cluster
                .lease_deletes_at_ms
                .or(cluster.lease_expires_ms)
                .unwrap_or(i64::MAX),
            cluster.name.clone(),
        )
    });
    clusters.into_iter().map(|cluster| cluster.name).collect()
}

/// Every page of `filter`'s list, `limit` at a time, following the cursor; `between`
/// runs after each page (to add clusters while a client pages).
async fn all_pages(
    store: &Store,
    filter: &ClusterFilter,
    limit: u32,
    mut between: impl FnMut(usize) -> Option<(String, Option<i64>)>,
) -> Vec<Vec<Cluster>> {
    let mut pages = Vec::new();
    let mut after: Option<ClusterCursor> = None;
    loop {
        let page = store
            .cluster_page(filter, after.as_ref(), 0, limit)
            .await
            .unwrap();
        assert!(page.clusters.len() <= limit as usize);
        pages.push(page.clusters);
        if let Some((name, lease)) = between(pages.len()) {
            cluster(
                store,
                &filter.tenant_id,
                &name,
                ClusterState::Active,
                lease,
                None,
            )
            .await;
        }
        // The cursor travels as text, as clients carry it.
        match page.next {
            Some(next) => after = Some(ClusterCursor::decode(&next.encode()).unwrap()),
            None => return pages,
        }
        assert!(pages.len() < 100, "the cursor does not move on");
    }
}

async fn pages_follow_the_list_order_exactly(backend: Backend) {
    let (_db, store) = open(backend).await;
    let mut live = Vec::new();
    for index in 0..23_i64 {
        let name = format!("c{index:02}");
        // A third without a lease, a third by lease end (some equal), the rest stopped.
        let (lease, deletes_at) = match index % 3 {
            0 => (None, None),
            1 => (Some(NOW + (index % 4) * HOUR), None),
            _ => (Some(NOW - HOUR), Some(NOW + (index % 5) * HOUR)),
        };
        live.push(
            cluster(
                &store,
                DEFAULT_TENANT_ID,
                &name,
                ClusterState::Active,
                lease,
                deletes_at,
            )
            .await,
        );
    }
    // Deleted clusters are not listed.
    let gone = cluster(
        &store,
        DEFAULT_TENANT_ID,
        "gone",
        ClusterState::Deleted,
        None,
        None,
    )
    .await;

    let pages = all_pages(&store, &everything(DEFAULT_TENANT_ID), 5, |_| None).await;
    assert_eq!(
        pages.iter().map(Vec::len).collect::<Vec<_>>(),
        [5, 5, 5, 5, 3]
    );
    let listed: Vec<String> = pages
        .into_iter()
        .flatten()
        .map(|cluster| cluster.name)
        .collect();
    assert_eq!(listed, expected_order(live.clone()));
    assert!(!listed.contains(&gone.name));

    // An exact multiple of the limit ends without an empty page after it.
    let pages = all_pages(&store, &everything(DEFAULT_TENANT_ID), 23, |_| None).await;
    assert_eq!(pages.len(), 1);

    // Offsets (older clients) read the same order.
    let offset_page = store
        .cluster_page(&everything(DEFAULT_TENANT_ID), None, 5, 5)
        .await
        .unwrap();
    let names: Vec<String> = offset_page
        .clusters
        .into_iter()
        .map(|cluster| cluster.name)
        .collect();
    assert_eq!(names, expected_order(live)[5..10]);
}

async fn clusters_added_between_pages_neither_repeat_nor_hide_others(backend: Backend) {
    let (_db, store) = open(backend).await;
    let mut before = Vec::new();
    for index in 0..12_i64 {
        let lease = (index % 2 == 0).then_some(NOW + index * HOUR);
        before.push(
            cluster(
                &store,
                DEFAULT_TENANT_ID,
                &format!("m{index:02}"),
                ClusterState::Active,
                lease,
                None,
            )
            .await,
        );
    }
    // After each page one cluster is added: one at the very front (already passed),
    // then one at the very end (still to come).
    let pages = all_pages(
        &store,
        &everything(DEFAULT_TENANT_ID),
        4,
        |page| match page {
            1 => Some(("a-front".to_owned(), Some(NOW - 10 * HOUR))),
            2 => Some(("z-end".to_owned(), None)),
            _ => None,
        },
    )
    .await;
    let listed: Vec<String> = pages
        .into_iter()
        .flatten()
        .map(|cluster| cluster.name)
        .collect();
    let unique: HashSet<&String> = listed.iter().collect();
    assert_eq!(
        unique.len(),
        listed.len(),
        "a cluster was listed twice: {listed:?}"
    );
    for cluster in &before {
        assert!(
            listed.contains(&cluster.name),
            "{} was skipped: {listed:?}",
            cluster.name
        );
    }
    // The one added before the cursor is for the next reading from the start; the one
    // added after it is on a later page.
    assert!(!listed.contains(&"a-front".to_owned()), "{listed:?}");
    assert_eq!(
        listed.last().map(String::as_str),
        Some("z-end"),
        "{listed:?}"
    );
    let mut expected = expected_order(before);
    expected.push("z-end".to_owned());
    assert_eq!(listed, expected);
}

async fn filters_and_totals_are_the_whole_lists(backend: Backend) {
    let (_db, store) = open(backend).await;
    let ann = create_user(
        &store,
        "ann",
        Role::User,
        None,
        &Password::new("a long enough password"),
    )
    .await
    .unwrap();
    let mut owned = bare_cluster(DEFAULT_TENANT_ID, "Shop_1");
    owned.owner_id = Some(ann.id.clone());
    owned.state = ClusterState::Active;
    owned.template_name = "web".to_owned();
    let shop = store.create_cluster(&owned, NOW).await.unwrap();
    cluster(
        &store,
        DEFAULT_TENANT_ID,
        "shopx1",
        ClusterState::Active,
        None,
        None,
    )
    .await;
    cluster(
        &store,
        DEFAULT_TENANT_ID,
        "blog",
        ClusterState::Failed,
        None,
        None,
    )
    .await;
    let deleted = cluster(
        &store,
        DEFAULT_TENANT_ID,
        "shop-old",
        ClusterState::Deleted,
        None,
        None,
    )
    .await;

    let count = |filter: ClusterFilter| {
        let store = store.clone();
        async move { store.cluster_totals(&filter, NOW).await.unwrap().clusters }
    };
    assert_eq!(count(everything(DEFAULT_TENANT_ID)).await, 3);
    let text = |text: &str| ClusterFilter {
        name_contains: Some(text.to_owned()),
        ..everything(DEFAULT_TENANT_ID)
    };
    // Any case; LIKE's `_` is matched as itself, not as any character.
    assert_eq!(count(text("SHOP")).await, 2);
    assert_eq!(count(text("p_1")).await, 1);
    assert_eq!(count(text("%")).await, 0);
    let state = ClusterFilter {
        state: Some(ClusterState::Failed),
        ..everything(DEFAULT_TENANT_ID)
    };
    assert_eq!(count(state).await, 1);
    let template = ClusterFilter {
        template: Some("web".to_owned()),
        ..everything(DEFAULT_TENANT_ID)
    };
    assert_eq!(count(template).await, 1);
    let mine = ClusterFilter {
        owner_id: Some(ann.id.clone()),
        ..everything(DEFAULT_TENANT_ID)
    };
    let page = store.cluster_page(&mine, None, 0, 50).await.unwrap();
    assert_eq!(
        page.clusters
            .iter()
            .map(|c| c.id.as_str())
            .collect::<Vec<_>>(),
        [shop.id.as_str()]
    );
    assert!(page.next.is_none());

    let facets = store.cluster_facets(DEFAULT_TENANT_ID).await.unwrap();
    assert_eq!(
        facets,
        [
            ("bare".to_owned(), ClusterState::Active),
            ("bare".to_owned(), ClusterState::Failed),
            ("web".to_owned(), ClusterState::Active),
        ]
    );

    // Cost: what the clusters' intervals come to, reckoned as domain::cost does, over
    // a month boundary and for open and closed intervals; a deleted cluster's is not
    // the list's.
    let month_start = Month::of_ms(NOW).start_ms();
    let intervals = [
        (
            &shop.id,
            1_250_000,
            month_start - 5 * HOUR - 1234,
            Some(month_start + 2 * HOUR + 7),
        ),
        (&shop.id, 2_000_001, month_start + 2 * HOUR + 7, None),
        (&deleted.id, 9_000_000, month_start, None),
    ];
    for (cluster_id, per_hour, start_ms, end_ms) in intervals {
        sqlx::query(
            "INSERT INTO cost_intervals (id, tenant_id, cluster_id, owner_id, owner, template, \
             per_hour_micros, start_ms, end_ms) VALUES ($1, $2, $3, NULL, 'ann', 'web', $4, $5, $6)",
        )
        .bind(uuid::Uuid::new_v4().to_string())
        .bind(DEFAULT_TENANT_ID)
        .bind(cluster_id)
        .bind(per_hour)
        .bind(start_ms)
        .bind(end_ms)
        .execute(store.pool())
        .await
        .unwrap();
    }
    let totals = store
        .cluster_totals(&everything(DEFAULT_TENANT_ID), NOW)
        .await
        .unwrap();
    let shops: Vec<Interval> = intervals[..2]
        .iter()
        .map(|(_, per_hour, start_ms, end_ms)| Interval {
            per_hour: *per_hour,
            start_ms: *start_ms,
            end_ms: *end_ms,
        })
        .collect();
    assert_eq!(totals.cost_intervals, 2);
    assert_eq!(totals.per_hour, 2_000_001);
    assert_eq!(
        totals.so_far,
        shops
            .iter()
            .map(|i| i.cost_within(i64::MIN, NOW))
            .sum::<i64>()
    );
    assert_eq!(
        totals.this_month,
        shops
            .iter()
            .map(|i| i.cost_within(month_start, NOW))
            .sum::<i64>()
    );
    let by_cluster = store
        .clusters_cost_intervals(&[shop.id.as_str()])
        .await
        .unwrap();
    assert_eq!(by_cluster.get(&shop.id), Some(&shops));

    // The overview's aggregates: per state, with the layouts' nodes.
    let mut counts = store.cluster_state_counts(DEFAULT_TENANT_ID).await.unwrap();
    counts.sort_by_key(|count| count.state);
    let counted: Vec<(ClusterState, u64, u64)> = counts
        .iter()
        .map(|count| (count.state, count.clusters, count.nodes))
        .collect();
    // Shop_1's layout is bare_cluster's `{}`: no nodes.
    assert_eq!(
        counted,
        [(ClusterState::Active, 2, 3), (ClusterState::Failed, 1, 3)]
    );
    let failed = store
        .clusters_in_states(DEFAULT_TENANT_ID, &[ClusterState::Failed], 10)
        .await
        .unwrap();
    assert_eq!(
        failed
            .iter()
            .map(|(_, name, _)| name.as_str())
            .collect::<Vec<_>>(),
        ["blog"]
    );
}

async fn another_tenants_cursor_shows_nothing_of_theirs(backend: Backend) {
    let (_db, store) = open(backend).await;
    let acme = store
        .create_tenant(&NewTenant {
            name: "acme".into(),
            max_clusters: None,
            max_nodes: None,
            provider_types: NewTenant::all_provider_types(),
        })
        .await
        .unwrap();
    for index in 0..6 {
        cluster(
            &store,
            &acme.id,
            &format!("acme{index}"),
            ClusterState::Active,
            None,
            None,
        )
        .await;
        cluster(
            &store,
            DEFAULT_TENANT_ID,
            &format!("dflt{index}"),
            ClusterState::Active,
            None,
            None,
        )
        .await;
    }
    let acme_page = store
        .cluster_page(&everything(&acme.id), None, 0, 2)
        .await
        .unwrap();
    let cursor = acme_page.next.unwrap();
    // acme's cursor, used on the default tenant's list: it only says where to start.
    let page = store
        .cluster_page(&everything(DEFAULT_TENANT_ID), Some(&cursor), 0, 50)
        .await
        .unwrap();
    assert!(!page.clusters.is_empty());
    assert!(
        page.clusters
            .iter()
            .all(|cluster| cluster.tenant_id == DEFAULT_TENANT_ID),
        "{:?}",
        page.clusters
            .iter()
            .map(|cluster| &cluster.name)
            .collect::<Vec<_>>()
    );
}

engine::on_both_backends!(
    pages_follow_the_list_order_exactly,
    clusters_added_between_pages_neither_repeat_nor_hide_others,
    filters_and_totals_are_the_whole_lists,
    another_tenants_cursor_shows_nothing_of_theirs,
);
