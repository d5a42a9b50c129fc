//! GATE-9, GATE-10: the golden suite under `assent_scope = "window"` and `"declared"`:
//! approval cards shown per session, and state-changing commands that ran without the
//! operator having seen them (on an approved card or as a declared command of the plan
//! they assented to). With `declared` that count is zero.

use nomos_core::declared::AssentScope;
use nomos_golden::manifest::Manifest;
use nomos_golden::run::{ModelChoice, Oversight, oversight, run_case_scoped};

async fn suite(manifest: &Manifest, scope: AssentScope) -> Vec<(String, Oversight)> {
    let mut rows = Vec::new();
    for case in &manifest.cases {
        let observed = run_case_scoped(case, &ModelChoice::Stub, scope)
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        rows.push((case.name.clone(), oversight(&observed.snapshot)));
    }
    rows
}

// rule: GATE-9
// rule: GATE-10
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_declared_scope_no_change_runs_unseen_and_the_cards_are_counted() {
    let path = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|| panic!("CARGO_MANIFEST_DIR is not set: run this under cargo")),
    )
    .join("../../evals/golden.yaml");
    let manifest = Manifest::load(&path).unwrap();
    let window = suite(&manifest, AssentScope::Window).await;
    let declared = suite(&manifest, AssentScope::Declared).await;
    let total = |rows: &[(String, Oversight)]| {
        rows.iter()
            .fold(Oversight::default(), |t, (_, o)| Oversight {
                cards: t.cards + o.cards,
                changes_run: t.changes_run + o.changes_run,
                unseen: t.unseen + o.unseen,
            })
    };
    let (w, d) = (total(&window), total(&declared));
    let sessions = manifest.cases.len() as f64;
    println!(
        "golden suite, {} sessions\n\
         scope     cards  cards/session  changes run  unseen\n\
         window    {:5}  {:13.2}  {:11}  {:6}\n\
         declared  {:5}  {:13.2}  {:11}  {:6}",
        manifest.cases.len(),
        w.cards,
        f64::from(w.cards) / sessions,
        w.changes_run,
        w.unseen,
        d.cards,
        f64::from(d.cards) / sessions,
        d.changes_run,
        d.unseen
    );
    for ((name, wo), (_, dof)) in window.iter().zip(&declared) {
        if wo != dof {
            println!("  {name}: window {wo:?} / declared {dof:?}");
        }
    }
    assert_eq!(
        d.unseen, 0,
        "with declared scope every change was seen: {declared:?}"
    );
    assert!(d.changes_run > 0, "the suite runs changes at all");
}
