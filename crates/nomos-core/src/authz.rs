//! Who may decide (AUTHZ-2, AUTHZ-3): the rules about the principal behind a decision.
//!
//! The session applies them to every assent, plan decision and approval; the decider's
//! identity arrives with the input ([`crate::record::Decider`]), so the rules are data in,
//! verdict out, like every other rule of the core.
//!
//! * [`check_not_requester`]: no principal decides a request its own session made
//!   (AUTHZ-2), whatever its role.
//! * [`ApproverPolicy`]: how many distinct operators a request needs (AUTHZ-3), by class,
//!   by host tag and by a named operator policy rule's commands.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::classify::Policy;
use crate::record::Decider;
use crate::status::CommandClass;

/// What a decision decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionKind {
    /// Assent to a plan by an operator message (GATE-4).
    Assent,
    /// An explicit decision on the waiting plan (GATE-4 rev. 2).
    PlanDecision,
    /// A decision on one approval request (GATE-7).
    Approval,
}

impl DecisionKind {
    /// The wire spelling (`assent`, `plan_decision`, `approval`).
    pub fn as_str(&self) -> &'static str {
        match self {
            DecisionKind::Assent => "assent",
            DecisionKind::PlanDecision => "plan_decision",
            DecisionKind::Approval => "approval",
        }
    }

    fn what(&self) -> &'static str {
        match self {
            DecisionKind::Assent => "assent to a plan",
            DecisionKind::PlanDecision => "decide a plan",
            DecisionKind::Approval => "decide an approval",
        }
    }
}

/// Why a decision was refused because of who made it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DeciderRefusal {
    /// AUTHZ-2: the decider drives the session that made the request.
    #[error(
        "{principal} may not {}: the request was made by a session {principal} drives, and no principal decides its own request; another operator must decide it",
        kind.what()
    )]
    OwnRequest {
        /// Who tried.
        principal: String,
        /// What it tried.
        kind: DecisionKind,
    },
    /// AUTHZ-3: the decider already approved this request; the next approval must come
    /// from another operator.
    #[error(
        "{principal} already approved this request; it needs {required} distinct operators, so the next approval must come from another operator"
    )]
    AlreadyApproved {
        /// Who tried again.
        principal: String,
        /// How many distinct operators the request needs.
        required: u32,
    },
    /// AUTHZ-3: a request that needs several operators cannot count an approval nobody
    /// signed.
    #[error(
        "this request needs {required} distinct operators; an approval that names no operator cannot count"
    )]
    Anonymous {
        /// How many distinct operators the request needs.
        required: u32,
    },
    /// AUTHZ-3: a plan that needs several operators is approved only by their explicit
    /// plan decisions; a chat message cannot count as one of them.
    #[error(
        "this plan needs {required} distinct operators: each approves it with an explicit plan decision, and a chat message cannot count as one"
    )]
    ChatAssent {
        /// Who wrote the message, when it named someone.
        principal: Option<String>,
        /// How many distinct operators the plan needs.
        required: u32,
    },
}

impl DeciderRefusal {
    /// The principal refused, when the decision named one.
    pub fn principal(&self) -> Option<&str> {
        match self {
            DeciderRefusal::OwnRequest { principal, .. }
            | DeciderRefusal::AlreadyApproved { principal, .. } => Some(principal),
            DeciderRefusal::ChatAssent { principal, .. } => principal.as_deref(),
            DeciderRefusal::Anonymous { .. } => None,
        }
    }
}

/// AUTHZ-2: refuses a decision whose decider is `requester`, the principal whose session
/// made the request (see [`crate::record::SessionRecord::requester`]). A decision that names
/// nobody (an embedder deciding in code) and a session nobody outside drives pass.
pub fn check_not_requester(
    requester: Option<&str>,
    by: Option<&Decider>,
    kind: DecisionKind,
) -> Result<(), DeciderRefusal> {
    match (requester, by) {
        (Some(requester), Some(by)) if requester == by.name => Err(DeciderRefusal::OwnRequest {
            principal: by.name.clone(),
            kind,
        }),
        _ => Ok(()),
    }
}

/// AUTHZ-3: one two-person rule: requests it matches need `approvers` distinct operators.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApproverRule {
    /// Only requests of this class; any class when `None`.
    pub class: Option<CommandClass>,
    /// Only requests on a host carrying this tag (FLEET-1); any host when `None`.
    pub tag: Option<String>,
    /// Only the commands the operator policy's rule of this `name` matches (GATE-8); any
    /// command when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// How many distinct operators must approve.
    pub approvers: u32,
}

/// Why an approver policy is not usable.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ApproverPolicyError {
    /// A rule asks for fewer than 1 or more than [`MAX_APPROVERS`] operators.
    #[error("rule {index}: approvers must be between 1 and {MAX_APPROVERS}, got {got}")]
    Approvers {
        /// The rule's position, from 1.
        index: usize,
        /// The number given.
        got: u32,
    },
    /// A rule for read-only commands, which never wait for anyone (GATE-1).
    #[error("rule {index}: read_only commands never wait for an approval (GATE-1)")]
    ReadOnly {
        /// The rule's position, from 1.
        index: usize,
    },
    /// A rule names a policy rule the operator policy does not have.
    #[error(
        "rule {index}: `rule = \"{name}\"` names no rule of the policy file (a policy `[[rule]]` is named by its `name`)"
    )]
    UnknownRule {
        /// The rule's position, from 1.
        index: usize,
        /// The name given.
        name: String,
    },
}

/// AUTHZ-3: the most operators a rule may require.
pub const MAX_APPROVERS: u32 = 5;

/// AUTHZ-3: how many distinct operators each request needs. The strictest matching rule
/// wins; a request no rule matches needs one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApproverPolicy {
    rules: Vec<ApproverRule>,
    /// The tags of each inventory host, by slug.
    host_tags: BTreeMap<String, Vec<String>>,
    /// The operator policy whose named rules select commands.
    commands: Arc<Policy>,
}

impl ApproverPolicy {
    /// A policy from its rules and the inventory's tags, checked; a rule naming a policy
    /// rule needs [`ApproverPolicy::with_commands_of`].
    pub fn new(
        rules: Vec<ApproverRule>,
        host_tags: BTreeMap<String, Vec<String>>,
    ) -> Result<ApproverPolicy, ApproverPolicyError> {
        ApproverPolicy::with_commands_of(rules, host_tags, Arc::new(Policy::empty()))
    }

    /// A policy from its rules, the inventory's tags and the operator policy whose named
    /// rules (`rule = "NAME"`) select commands, checked.
    pub fn with_commands_of(
        rules: Vec<ApproverRule>,
        host_tags: BTreeMap<String, Vec<String>>,
        commands: Arc<Policy>,
    ) -> Result<ApproverPolicy, ApproverPolicyError> {
        for (idx, rule) in rules.iter().enumerate() {
            let index = idx + 1;
            if rule.approvers == 0 || rule.approvers > MAX_APPROVERS {
                return Err(ApproverPolicyError::Approvers {
                    index,
                    got: rule.approvers,
                });
            }
            if rule.class == Some(CommandClass::ReadOnly) {
                return Err(ApproverPolicyError::ReadOnly { index });
            }
            if let Some(name) = &rule.rule
                && commands.rule_named(name).is_none()
            {
                return Err(ApproverPolicyError::UnknownRule {
                    index,
                    name: name.clone(),
                });
            }
        }
        Ok(ApproverPolicy {
            rules,
            host_tags,
            commands,
        })
    }

    /// The rules, in order.
    pub fn rules(&self) -> &[ApproverRule] {
        &self.rules
    }

    /// How many distinct operators a request for `command` of `class` on `hosts` needs:
    /// the largest `approvers` of the rules that match it (a tag rule matches when any host
    /// of the set carries the tag, a `rule` rule when the named policy rule matches the
    /// command), and at least one.
    pub fn required_for(&self, class: CommandClass, hosts: &[&str], command: &str) -> u32 {
        let named = if self.rules.iter().any(|rule| rule.rule.is_some()) {
            self.commands.named_rules_matching(command)
        } else {
            Vec::new()
        };
        self.rules
            .iter()
            .filter(|rule| match &rule.rule {
                None => true,
                Some(name) => named.contains(&name.as_str()),
            })
            .filter(|rule| rule.class.is_none_or(|c| c == class))
            .filter(|rule| match &rule.tag {
                None => true,
                Some(tag) => hosts.iter().any(|host| {
                    self.host_tags
                        .get(*host)
                        .is_some_and(|tags| tags.iter().any(|t| t == tag))
                }),
            })
            .map(|rule| rule.approvers)
            .max()
            .unwrap_or(1)
            .max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decider(name: &str) -> Decider {
        Decider::named(name)
    }

    fn prod_policy() -> ApproverPolicy {
        let tags = BTreeMap::from([
            ("db1".to_owned(), vec!["prod".to_owned()]),
            ("web1".to_owned(), vec!["staging".to_owned()]),
        ]);
        ApproverPolicy::new(
            vec![
                ApproverRule {
                    class: Some(CommandClass::Destructive),
                    tag: Some("prod".to_owned()),
                    rule: None,
                    approvers: 2,
                },
                ApproverRule {
                    class: None,
                    tag: Some("vault".to_owned()),
                    rule: None,
                    approvers: 3,
                },
            ],
            tags,
        )
        .unwrap()
    }

    // rule: AUTHZ-2
    #[test]
    fn the_requester_may_not_decide_and_another_principal_may() {
        let refused = check_not_requester(
            Some("claude-code"),
            Some(&decider("claude-code")),
            DecisionKind::Approval,
        )
        .unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("claude-code may not decide an approval"),
            "{refused}"
        );
        assert_eq!(
            check_not_requester(
                Some("claude-code"),
                Some(&decider("alice")),
                DecisionKind::Approval
            ),
            Ok(())
        );
        // A session Nomos's model drives has no requester: its operator decides.
        assert_eq!(
            check_not_requester(None, Some(&decider("alice")), DecisionKind::Assent),
            Ok(())
        );
    }

    // rule: AUTHZ-3
    #[test]
    fn the_strictest_matching_rule_sets_the_number_of_operators() {
        let policy = prod_policy();
        assert_eq!(
            policy.required_for(CommandClass::Destructive, &["db1"], "zfs destroy tank/old"),
            2
        );
        assert_eq!(
            policy.required_for(
                CommandClass::ConfigMutation,
                &["db1"],
                "zfs destroy tank/old"
            ),
            1
        );
        assert_eq!(
            policy.required_for(CommandClass::Destructive, &["web1"], "zfs destroy tank/old"),
            1
        );
        // A fan-out needs what its strictest host needs.
        assert_eq!(
            policy.required_for(
                CommandClass::Destructive,
                &["web1", "db1"],
                "zfs destroy tank/old"
            ),
            2
        );
        assert_eq!(
            policy.required_for(
                CommandClass::Destructive,
                &["unknown"],
                "zfs destroy tank/old"
            ),
            1
        );
    }

    // rule: AUTHZ-3
    #[test]
    fn a_rule_naming_a_policy_rule_covers_exactly_the_commands_that_rule_matches() {
        let named = Policy::parse(
            "[[rule]]\nname = \"restart-db\"\nprefix = [\"systemctl\", \"restart\", \"postgresql\"]\nclass = \"destructive\"\nreason = \"the database\"\n",
            "policy.toml",
        )
        .unwrap();
        let rules = vec![ApproverRule {
            class: None,
            tag: None,
            rule: Some("restart-db".to_owned()),
            approvers: 3,
        }];
        let policy =
            ApproverPolicy::with_commands_of(rules.clone(), BTreeMap::new(), Arc::new(named))
                .unwrap();
        let class = CommandClass::Destructive;
        assert_eq!(
            policy.required_for(class, &["db1"], "systemctl restart postgresql"),
            3
        );
        assert_eq!(
            policy.required_for(class, &["db1"], "systemctl restart nginx"),
            1
        );
        let unknown = ApproverPolicy::new(rules, BTreeMap::new()).unwrap_err();
        assert_eq!(
            unknown,
            ApproverPolicyError::UnknownRule {
                index: 1,
                name: "restart-db".to_owned()
            }
        );
    }

    // rule: AUTHZ-3
    #[test]
    fn a_rule_for_zero_operators_or_read_only_commands_is_refused_at_load() {
        let zero = ApproverPolicy::new(
            vec![ApproverRule {
                class: None,
                tag: None,
                rule: None,
                approvers: 0,
            }],
            BTreeMap::new(),
        )
        .unwrap_err();
        assert!(zero.to_string().contains("rule 1: approvers"), "{zero}");
        let read_only = ApproverPolicy::new(
            vec![ApproverRule {
                class: Some(CommandClass::ReadOnly),
                tag: None,
                rule: None,
                approvers: 2,
            }],
            BTreeMap::new(),
        )
        .unwrap_err();
        assert!(read_only.to_string().contains("read_only"), "{read_only}");
    }
}
