//! The one contract suite every store adapter must pass.
//!
//! Each check is a `pub async fn(&dyn Store)` that expects a fresh, empty, migrated
//! store and panics on a broken rule. [`store_contract_tests!`](crate::store_contract_tests)
//! turns the whole list into one `#[tokio::test]` per check for an adapter:
//!
//! ```text
//! async fn fresh() -> nomos_sqlite::SqliteStore { nomos_sqlite::SqliteStore::in_memory().await.unwrap() }
//! nomos_test_support::store_contract_tests!(fresh);
//!
//! async fn on_file() -> (nomos_sqlite::SqliteStore, tempfile::TempDir) { ... }
//! nomos_test_support::store_contract_tests!(on_file, guarded);
//! ```
//!
//! A behaviour difference between two adapters is a bug in one of them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod chain;
mod events;
mod execution_pages;
mod fanouts;
pub mod fixtures;
mod knowledge;
mod previews;
mod queries;
mod sessions;

pub use chain::*;
pub use events::*;
pub use execution_pages::*;
pub use fanouts::*;
pub use knowledge::*;
pub use previews::*;
pub use queries::*;
pub use sessions::*;

/// Expands to one `#[tokio::test]` per contract check, each on a store made by
/// `$factory` (an async function returning a value that implements `Store`).
/// Expands to one `#[tokio::test]` per contract check, each on a fresh store made by
/// `$factory`: an async function returning a value that implements `Store`, or, with
/// `guarded`, a `(store, guard)` pair whose guard (a temp dir...) lives as long as the test.
#[macro_export]
macro_rules! store_contract_tests {
    ($factory:path) => {
        $crate::store_contract_tests!(@each $factory, plain;
            check_passes_on_a_migrated_store,
            commit_then_load_round_trips,
            previews_round_trip_with_their_request,
            inserting_an_existing_session_is_a_duplicate,
            stale_version_is_a_conflict_and_writes_nothing,
            commit_without_a_session_row_still_bumps_the_version,
            commit_naming_no_single_session_is_invalid,
            concurrent_committers_one_wins_the_other_reloads,
            racing_writers_with_retries_lose_no_commit,
            duplicate_step_seq_fails_and_leaves_nothing,
            all_plan_generations_are_read_back_in_order,
            removed_steps_are_deleted_and_kept_ones_updated,
            step_close_times_round_trip_to_the_millisecond,
            messages_and_tool_calls_round_trip_in_order,
            duplicate_tool_call_is_refused_and_leaves_no_partial_rows,
            commit_batch_skips_the_conflicting_commit,
            delete_session_cascades_to_everything_it_owns,
            rows_of_another_session_are_not_overwritten,
            load_sessions_matches_loading_each_one,
            fanouts_round_trip_with_their_executions,
            last_messages_skip_notes_and_follow_id_order,
            events_are_numbered_without_gaps_and_globally_ordered,
            events_after_replays_from_a_position,
            events_are_stored_in_a_versioned_envelope,
            newest_positions_are_those_of_the_last_committed_event,
            the_event_log_is_a_hash_chain_per_session,
            sessions_are_listed_by_status_idle_time_and_goal,
            sessions_page_by_id,
            sessions_page_newest_first_filtered_by_status_and_text,
            archived_sessions_round_trip_and_filter,
            owners_and_approvers_round_trip_and_filter,
            executions_are_listed_for_the_stale_execution_sweeps,
            executions_are_listed_newest_first_with_ties_broken_by_id,
            executions_page_newest_first_without_skips_or_repeats,
            execution_filters_combine_with_order_and_cursor,
            pending_approvals_are_listed_by_request_time,
            entities_upsert_by_slug_and_list_by_kind,
            attribute_patches_merge_and_null_removes,
            relationships_are_idempotent_and_need_both_ends,
            knowledge_entries_round_trip_and_upsert_replaces,
            search_finds_words_of_title_content_and_tags,
            search_treats_hostile_query_text_safely,
            last_audited_is_the_newest_audit_or_update_entry,
        );
    };
    ($factory:path, guarded) => {
        $crate::store_contract_tests!(@each $factory, guarded;
            check_passes_on_a_migrated_store,
            commit_then_load_round_trips,
            previews_round_trip_with_their_request,
            inserting_an_existing_session_is_a_duplicate,
            stale_version_is_a_conflict_and_writes_nothing,
            commit_without_a_session_row_still_bumps_the_version,
            commit_naming_no_single_session_is_invalid,
            concurrent_committers_one_wins_the_other_reloads,
            racing_writers_with_retries_lose_no_commit,
            duplicate_step_seq_fails_and_leaves_nothing,
            all_plan_generations_are_read_back_in_order,
            removed_steps_are_deleted_and_kept_ones_updated,
            step_close_times_round_trip_to_the_millisecond,
            messages_and_tool_calls_round_trip_in_order,
            duplicate_tool_call_is_refused_and_leaves_no_partial_rows,
            commit_batch_skips_the_conflicting_commit,
            delete_session_cascades_to_everything_it_owns,
            rows_of_another_session_are_not_overwritten,
            load_sessions_matches_loading_each_one,
            fanouts_round_trip_with_their_executions,
            last_messages_skip_notes_and_follow_id_order,
            events_are_numbered_without_gaps_and_globally_ordered,
            events_after_replays_from_a_position,
            events_are_stored_in_a_versioned_envelope,
            newest_positions_are_those_of_the_last_committed_event,
            the_event_log_is_a_hash_chain_per_session,
            sessions_are_listed_by_status_idle_time_and_goal,
            sessions_page_by_id,
            sessions_page_newest_first_filtered_by_status_and_text,
            archived_sessions_round_trip_and_filter,
            owners_and_approvers_round_trip_and_filter,
            executions_are_listed_for_the_stale_execution_sweeps,
            executions_are_listed_newest_first_with_ties_broken_by_id,
            executions_page_newest_first_without_skips_or_repeats,
            execution_filters_combine_with_order_and_cursor,
            pending_approvals_are_listed_by_request_time,
            entities_upsert_by_slug_and_list_by_kind,
            attribute_patches_merge_and_null_removes,
            relationships_are_idempotent_and_need_both_ends,
            knowledge_entries_round_trip_and_upsert_replaces,
            search_finds_words_of_title_content_and_tags,
            search_treats_hostile_query_text_safely,
            last_audited_is_the_newest_audit_or_update_entry,
        );
    };
    (@each $factory:path, $mode:ident; $($check:ident),+ $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $check() {
                let fixture = $factory().await;
                let store = $crate::store_contract_tests!(@store fixture, $mode);
                $crate::store_contract::$check(store).await;
            }
        )+
    };
    (@store $fixture:ident, plain) => { &$fixture };
    (@store $fixture:ident, guarded) => { &$fixture.0 };
}
