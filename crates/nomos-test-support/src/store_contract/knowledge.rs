//! Contract checks of the knowledge graph: entities, attribute patches,
//! relationships, knowledge entries, full-text search and last audits.

use nomos_core::ports::store::{AuditMark, Store, StoreError};
use nomos_core::record::{Entity, KnowledgeEntry, Relationship};
use serde_json::json;

use super::fixtures::at;

fn entity(slug: &str, kind: &str) -> Entity {
    Entity {
        slug: slug.into(),
        kind: kind.into(),
        name: slug.rsplit(':').next().unwrap_or(slug).into(),
        attributes: json!({"os": "debian", "ram_gb": 8, "tags": ["prod"], "nested": {"a": 1}}),
        updated_at: at(0),
    }
}

fn entry(
    key: &str,
    title: &str,
    content: &str,
    tags: &[&str],
    about: &[&str],
    updated: i64,
) -> KnowledgeEntry {
    KnowledgeEntry {
        key: key.into(),
        title: title.into(),
        content: content.into(),
        tags: tags.iter().map(|t| t.to_string()).collect(),
        about: about.iter().map(|t| t.to_string()).collect(),
        created_at: at(0),
        updated_at: at(updated),
    }
}

/// Entities upsert by slug and list by kind, ordered by slug.
pub async fn entities_upsert_by_slug_and_list_by_kind(store: &dyn Store) {
    let hubris = entity("host:hubris", "host");
    store.upsert_entity(&hubris).await.unwrap();
    store
        .upsert_entity(&entity("lxc:nextcloud", "lxc"))
        .await
        .unwrap();
    store
        .upsert_entity(&entity("host:atlas", "host"))
        .await
        .unwrap();
    assert_eq!(
        store.entity("host:hubris").await.unwrap(),
        Some(hubris.clone())
    );
    assert_eq!(store.entity("host:nope").await.unwrap(), None);

    let mut renamed = hubris.clone();
    renamed.name = "Hubris".into();
    renamed.attributes = json!({"os": "proxmox"});
    renamed.updated_at = at(5);
    store.upsert_entity(&renamed).await.unwrap();
    assert_eq!(store.entity("host:hubris").await.unwrap(), Some(renamed));

    let hosts: Vec<String> = store
        .list_entities(Some("host"))
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.slug)
        .collect();
    assert_eq!(hosts, ["host:atlas", "host:hubris"]);
    assert_eq!(store.list_entities(None).await.unwrap().len(), 3);
    assert!(store.list_entities(Some("vm")).await.unwrap().is_empty());

    let mut bad = entity("host:bad", "host");
    bad.attributes = json!([1, 2]);
    assert!(matches!(
        store.upsert_entity(&bad).await,
        Err(StoreError::Invalid(_))
    ));
    assert_eq!(store.entity("host:bad").await.unwrap(), None);
}

/// An attribute patch merges keys, `null` removes one; a missing entity is
/// `NotFound`, a patch that is not an object is `Invalid`.
pub async fn attribute_patches_merge_and_null_removes(store: &dyn Store) {
    store
        .upsert_entity(&entity("host:hubris", "host"))
        .await
        .unwrap();
    let patched = store
        .update_entity_attributes(
            "host:hubris",
            &json!({"os": null, "ram_gb": 16, "cpu": "ryzen"}),
            at(9),
        )
        .await
        .unwrap();
    let expected = json!({"ram_gb": 16, "tags": ["prod"], "nested": {"a": 1}, "cpu": "ryzen"});
    assert_eq!(patched.attributes, expected);
    assert_eq!(patched.updated_at, at(9));
    assert_eq!(store.entity("host:hubris").await.unwrap(), Some(patched));

    let err = store
        .update_entity_attributes("host:ghost", &json!({"a": 1}), at(9))
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::NotFound { ref what } if what.contains("host:ghost")),
        "{err:?}"
    );
    let err = store
        .update_entity_attributes("host:hubris", &json!("os"), at(9))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Invalid(_)), "{err:?}");
    assert_eq!(
        store
            .entity("host:hubris")
            .await
            .unwrap()
            .unwrap()
            .attributes,
        expected
    );
}

/// Relationships are idempotent on (from, kind, to), need both ends, and are found
/// from either end.
pub async fn relationships_are_idempotent_and_need_both_ends(store: &dyn Store) {
    store
        .upsert_entity(&entity("host:hubris", "host"))
        .await
        .unwrap();
    store
        .upsert_entity(&entity("lxc:nextcloud", "lxc"))
        .await
        .unwrap();
    store
        .upsert_entity(&entity("svc:nginx", "service"))
        .await
        .unwrap();
    let runs_on = Relationship {
        from: "lxc:nextcloud".into(),
        kind: "runs_on".into(),
        to: "host:hubris".into(),
        created_at: at(1),
    };
    store.create_relationship(&runs_on).await.unwrap();
    store.create_relationship(&runs_on).await.unwrap();
    let depends = Relationship {
        from: "svc:nginx".into(),
        kind: "depends_on".into(),
        to: "lxc:nextcloud".into(),
        created_at: at(2),
    };
    store.create_relationship(&depends).await.unwrap();
    assert_eq!(
        store.relations("host:hubris").await.unwrap(),
        vec![runs_on.clone()]
    );
    assert_eq!(
        store.relations("lxc:nextcloud").await.unwrap(),
        vec![runs_on.clone(), depends]
    );

    let dangling = Relationship {
        to: "host:ghost".into(),
        ..runs_on.clone()
    };
    let err = store.create_relationship(&dangling).await.unwrap_err();
    assert!(
        matches!(err, StoreError::NotFound { ref what } if what.contains("host:ghost")),
        "{err:?}"
    );
    let dangling = Relationship {
        from: "vm:ghost".into(),
        ..runs_on
    };
    let err = store.create_relationship(&dangling).await.unwrap_err();
    assert!(
        matches!(err, StoreError::NotFound { ref what } if what.contains("vm:ghost")),
        "{err:?}"
    );
    assert!(store.relations("host:ghost").await.unwrap().is_empty());
}

/// Knowledge entries round trip with their tags and subjects in order, and an
/// upsert by key replaces the entry.
pub async fn knowledge_entries_round_trip_and_upsert_replaces(store: &dyn Store) {
    let first = entry(
        "audit/hubris",
        "Hubris audit",
        "Disk 40% full",
        &["audit", "disk"],
        &["host:hubris", "lxc:nextcloud"],
        10,
    );
    store.upsert_knowledge(&first).await.unwrap();
    assert_eq!(
        store.knowledge("audit/hubris").await.unwrap(),
        Some(first.clone())
    );
    let replaced = entry(
        "audit/hubris",
        "Hubris audit (2)",
        "Disk 80% full",
        &["update"],
        &["host:hubris"],
        20,
    );
    store.upsert_knowledge(&replaced).await.unwrap();
    assert_eq!(
        store.knowledge("audit/hubris").await.unwrap(),
        Some(replaced)
    );
    assert_eq!(store.knowledge("nope").await.unwrap(), None);
    // The search index follows the replacement.
    assert!(store.search_knowledge("40", 10).await.unwrap().is_empty());
    assert_eq!(store.search_knowledge("80", 10).await.unwrap().len(), 1);
}

/// Search finds entries by words of their title, content or tags, best first.
pub async fn search_finds_words_of_title_content_and_tags(store: &dyn Store) {
    store
        .upsert_knowledge(&entry(
            "k1",
            "Nginx reverse proxy",
            "Serves nextcloud on port 443",
            &["web"],
            &[],
            1,
        ))
        .await
        .unwrap();
    store
        .upsert_knowledge(&entry(
            "k2",
            "Backups",
            "restic runs nightly; nginx logs are excluded",
            &["storage"],
            &[],
            2,
        ))
        .await
        .unwrap();
    store
        .upsert_knowledge(&entry(
            "k3",
            "Firewall",
            "nftables rules",
            &["security", "audit"],
            &[],
            3,
        ))
        .await
        .unwrap();
    let keys = |hits: Vec<nomos_core::ports::store::KnowledgeHit>| -> Vec<String> {
        hits.into_iter().map(|h| h.entry.key).collect()
    };
    assert_eq!(
        keys(store.search_knowledge("nextcloud", 10).await.unwrap()),
        ["k1"]
    );
    assert_eq!(
        keys(store.search_knowledge("RESTIC", 10).await.unwrap()),
        ["k2"]
    );
    assert_eq!(
        keys(store.search_knowledge("security", 10).await.unwrap()),
        ["k3"]
    );
    assert_eq!(
        keys(store.search_knowledge("nftables rules", 10).await.unwrap()),
        ["k3"]
    );
    let both = store.search_knowledge("nginx", 10).await.unwrap();
    assert_eq!(both.len(), 2);
    // The title match ranks above the passing mention.
    assert_eq!(both[0].entry.key, "k1");
    assert!(both[0].rank >= both[1].rank);
    assert_eq!(store.search_knowledge("nginx", 1).await.unwrap().len(), 1);
    assert!(
        store
            .search_knowledge("kubernetes", 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(both[0].entry, store.knowledge("k1").await.unwrap().unwrap());
}

/// Query text is never query syntax: quotes, dashes, operators and brackets neither
/// error nor change what the words find.
pub async fn search_treats_hostile_query_text_safely(store: &dyn Store) {
    store
        .upsert_knowledge(&entry(
            "k1",
            "Nginx proxy",
            "upstream keepalive",
            &["web"],
            &[],
            1,
        ))
        .await
        .unwrap();
    for query in [
        "\"",
        "\"nginx",
        "nginx\"",
        "-nginx",
        "nginx -proxy",
        "nginx AND",
        "OR nginx",
        "NOT",
        "nginx NEAR(proxy)",
        "(nginx",
        "nginx*",
        "col:nginx",
        "title:nginx",
        "'; DROP TABLE knowledge; --",
        "",
        "   ",
        "!!!",
        "nginx & | ! proxy",
        "\\",
        "^nginx",
        "{nginx}",
    ] {
        let result = store.search_knowledge(query, 10).await;
        assert!(result.is_ok(), "query {query:?} failed: {result:?}");
    }
    let hits = store
        .search_knowledge("\"nginx\" -proxy", 10)
        .await
        .unwrap();
    assert_eq!(
        hits.len(),
        1,
        "words inside quotes and after a dash still match"
    );
    assert!(store.search_knowledge("", 10).await.unwrap().is_empty());
    assert_eq!(store.knowledge("k1").await.unwrap().unwrap().key, "k1");
}

/// For each slug, in the order asked, the newest update time of an entry about it
/// tagged `audit` or `update`; none for a slug never audited.
// rule: WRITEBACK-3
pub async fn last_audited_is_the_newest_audit_or_update_entry(store: &dyn Store) {
    let entries = [
        entry(
            "a1",
            "Hubris audit",
            "ok",
            &["audit"],
            &["host:hubris"],
            100,
        ),
        entry(
            "a2",
            "Hubris upgrade",
            "apt upgrade",
            &["ops", "update"],
            &["host:hubris", "host:atlas"],
            300,
        ),
        entry(
            "a3",
            "Hubris note",
            "not an audit",
            &["note"],
            &["host:hubris"],
            900,
        ),
        entry("a4", "Atlas audit", "ok", &["audit"], &["host:atlas"], 200),
        entry("a5", "Untagged", "ok", &[], &["host:zeus"], 50),
    ];
    for e in &entries {
        store.upsert_knowledge(e).await.unwrap();
    }
    let slugs: Vec<String> = ["host:zeus", "host:hubris", "host:atlas", "host:ghost"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let marks = store.last_audited(&slugs).await.unwrap();
    assert_eq!(
        marks,
        vec![
            AuditMark {
                slug: "host:zeus".into(),
                last_audited_at: None
            },
            AuditMark {
                slug: "host:hubris".into(),
                last_audited_at: Some(at(300))
            },
            AuditMark {
                slug: "host:atlas".into(),
                last_audited_at: Some(at(300))
            },
            AuditMark {
                slug: "host:ghost".into(),
                last_audited_at: None
            },
        ]
    );
    assert!(store.last_audited(&[]).await.unwrap().is_empty());
}
