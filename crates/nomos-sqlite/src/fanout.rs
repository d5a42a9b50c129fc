//! Fan-out rows (FLEET-1): written once in the commit that creates them, read with the
//! session's snapshot (`nomos-store-sql`).

use nomos_core::fanout::Fanout;
use nomos_core::ports::store::StoreError;
use nomos_store_sql::codec::to_json;

use crate::script::Script;

/// Adds the inserts of new fan-outs to a commit's script; one already stored is left as
/// it is (a fan-out never changes).
pub(crate) fn push_fanouts(script: &mut Script, fanouts: &[Fanout]) -> Result<(), StoreError> {
    for fanout in fanouts {
        script.push(
            "INSERT INTO fanouts (id, session_id, created_at, body) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (id) DO NOTHING",
            vec![
                fanout.id.to_string().into(),
                fanout.session_id.to_string().into(),
                fanout.created_at.as_millis().into(),
                to_json(fanout, "fan-out")?.into(),
            ],
            format!("fan-out {}", fanout.id),
        );
    }
    Ok(())
}
