#!/usr/bin/env bash
# seed-bugs.sh: re-introduces each seed bug, one small patch at a time, in a scratch copy of
# the committed tree, and runs the golden suite against it. A bug is "killed" when at least one
# golden case fails. Not run in CI: it rebuilds once per patch (minutes each on two cores).
#
#   scripts/seed-bugs.sh            # every patch
#   scripts/seed-bugs.sh NAME...    # only these
#
# The scratch copy builds in a target directory of its own (SEED_BUGS_TARGET_DIR, default
# /tmp/nomos-seed-bugs-target): sharing the tree's own would let the two `nomos-eval` binaries
# overwrite each other.
set -euo pipefail
export CARGO_TARGET_DIR=${SEED_BUGS_TARGET_DIR:-/tmp/nomos-seed-bugs-target}
root=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
scratch=$(mktemp -d /tmp/nomos-seed-bugs.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
git -C "$root" archive HEAD | tar -x -C "$scratch"
export SCRATCH="$scratch"

python3 - "$@" <<'PY'
import json, os, subprocess, sys

S = os.environ["SCRATCH"]
core = "crates/nomos-core/src/"
agent = "crates/nomos-agent/src/"
classify = "crates/nomos-classify/src/"

# name, [(file, old, new)]: each `old` must occur in the file, else the patch does not apply.
PATCHES = [
    ("re-proposal appends a generation", [(core + "session/plan.rs",
        "            self.steps.retain(|s| s.generation != generation);\n            (generation, None)",
        "            (generation + 1, None)")]),
    ("seq continues across generations", [(core + "session/plan.rs",
        "            let seq = idx as u32 + 1;",
        "            let seq = idx as u32 + 1 + self.steps.iter().filter(|s| s.generation < target).count() as u32;")]),
    ("a replaced step changes", [(core + "session/plan.rs",
        "            .position(|s| s.generation == generation && s.seq == seq)",
        "            .position(|s| s.seq == seq)"),
        (core + "session/plan.rs",
        "        if current == StepStatus::Replaced {\n            return ToolReply::refused(text::step_replaced(seq));\n        }\n", "")]),
    ("no turn.done after a model error", [(agent + "turn.rs",
        "                session.handle_turn_done(now, error.clone(), n_tool_calls);",
        "                if error.is_none() { session.handle_turn_done(now, error.clone(), n_tool_calls); }")]),
    ("docker compose logs|ps not read-only", [(classify + "rules/containers.rs",
        "    read_only: &[\n        \"logs\",\n        \"ps\",\n",
        "    read_only: &[\n")]),
    ("re-completion accepted", [(core + "session/lifecycle.rs",
        "        if let Some(refusal) = self.refuse_if_terminal(\"complete_task\") {\n            return refusal;\n        }",
        "")]),
    ("completion without write-back accepted", [(core + "session/lifecycle.rs",
        "if outcome == Outcome::Success && self.record.knowledge == KnowledgeLoop::Discovered {",
        "if false && outcome == Outcome::Success && self.record.knowledge == KnowledgeLoop::Discovered {")]),
    ("no auto-complete of a trivial no-goal turn", [(core + "session/lifecycle.rs",
        "            SessionVerdict::CompleteTrivial { summary } => {\n                self.finish(now, Outcome::Success, summary);\n                true\n            }",
        "            SessionVerdict::CompleteTrivial { .. } => false,")]),
    ("no nudge, no close", [(core + "sweep.rs",
        "        None if idle >= thresholds.idle_after => SessionVerdict::Nudge,\n", ""),
        (core + "sweep.rs",
        "Some(nudged_at) if now.since(nudged_at) >= thresholds.nudge_grace => {",
        "Some(nudged_at) if false && now.since(nudged_at) >= thresholds.nudge_grace => {")]),
    ("an empty assistant message persisted", [(core + "session/lifecycle.rs",
        "        if content.trim().is_empty() && tool_calls.is_empty() {\n            return None;\n        }\n", "")]),
    ("the resume note without the quote", [(core + "resume.rs",
        "    lines.push(quote_line(last_operator_message));",
        "    let _ = quote_line(last_operator_message);")]),
    ("the resume note without the plan line", [(core + "resume.rs",
        "        lines.push(plan_line(plan));",
        "        let _ = plan_line(plan);")]),
    ("dispatch after expiry", [(core + "session/approval.rs",
        "        if approval_expired(approval, now) {\n            self.resolve_approval(now, idx, ApprovalStatus::Expired, \"approval expired\");\n            return Err(DecisionError::Expired(approval_id));\n        }\n", "")]),
    ("a config_mutation without assent", [(core + "session/run.rs",
        "            if !self.assent_open(now) {",
        "            if false && !self.assent_open(now) {")]),
    ("no reconcile of running at start-up", [(agent + "sweeper.rs",
        "            SweepPhase::Startup => NON_TERMINAL_EXECUTIONS.to_vec(),",
        "            SweepPhase::Startup => NON_TERMINAL_EXECUTIONS.iter().copied().filter(|s| *s != ExecutionStatus::Running).collect(),")]),
    ("a destructive command run inside the window", [(core + "session/bound.rs",
        "        if class == CommandClass::Destructive || program_unknown {",
        "        if class == CommandClass::Destructive {\n            return Bound::Runs;\n        }\n        if program_unknown {")]),
    ("activity times from now", [(core + "activity.rs",
        "    entries.sort();\n    entries\n}",
        "    for entry in &mut entries { entry.at = now; }\n    entries.sort();\n    entries\n}")]),
    ("an empty Ok reply accepted", [(agent + "turn.rs",
        "                Ok(response) if !response.is_empty() => return Ok(response),",
        "                Ok(response) if true || !response.is_empty() => return Ok(response),")]),
]

wanted = sys.argv[1:]
results = []
for name, edits in PATCHES:
    if wanted and name not in wanted:
        continue
    originals = {}
    applies = True
    for path, old, new in edits:
        full = os.path.join(S, path)
        if not os.path.exists(full):
            applies = False
            break
        text = originals.get(full) or open(full).read()
        originals.setdefault(full, text)
        current = open(full).read()
        if old not in current:
            applies = False
            break
        open(full, "w").write(current.replace(old, new, 1))
    if not applies:
        verdict, detail = "does not apply", "an anchor is missing (the code moved)"
    else:
        run = subprocess.run(
            ["cargo", "run", "-q", "-p", "nomos-eval", "--", "--manifest", "evals/golden.yaml", "--json"],
            cwd=S, capture_output=True, text=True)
        if run.returncode == 1:
            report = json.loads(run.stdout)
            failed = [c["name"] for c in report["cases"] if c["result"] == "fail"]
            verdict, detail = "killed", ", ".join(failed)
        elif run.returncode == 0:
            verdict, detail = "SURVIVED", "every golden case passed"
        else:
            verdict, detail = "error", run.stderr.strip().splitlines()[-1] if run.stderr.strip() else f"exit {run.returncode}"
    for full, text in originals.items():
        open(full, "w").write(text)
    results.append((name, verdict, detail))
    print(f"{verdict:>14}  {name}: {detail}", flush=True)

killed = sum(1 for _, v, _ in results if v == "killed")
print(f"\n{killed} of {len(results)} seed bugs fail at least one golden case")
sys.exit(0 if killed == len(results) else 1)
PY
