//! Token and cost totals of one turn: the sum of the `Usage` of each model call in it.

use nomos_core::ports::chat::{ChatResponse, Usage};

/// The usage of the model calls of one turn, summed with [`Usage::add`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TurnUsage {
    n_calls: u32,
    total: Usage,
}

impl TurnUsage {
    /// Adds one call's usage.
    pub fn add(&mut self, usage: &Usage) {
        self.n_calls += 1;
        self.total.add(usage);
    }

    /// Adds the usage of a reply.
    pub fn add_response(&mut self, response: &ChatResponse) {
        self.add(&response.usage);
    }

    /// How many calls were added.
    pub fn n_calls(&self) -> u32 {
        self.n_calls
    }

    /// The sum so far (cost is `None` until some call reports one).
    pub fn total(&self) -> Usage {
        self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turn_usage_sums_tokens_and_cost_over_calls() {
        let mut turn = TurnUsage::default();
        turn.add(&Usage {
            prompt_tokens: 100,
            completion_tokens: 20,
            cost_usd: None,
        });
        assert_eq!(turn.total().cost_usd, None);
        turn.add(&Usage {
            prompt_tokens: 150,
            completion_tokens: 30,
            cost_usd: Some(0.25),
        });
        turn.add(&Usage {
            prompt_tokens: 10,
            completion_tokens: 5,
            cost_usd: Some(0.5),
        });
        assert_eq!(turn.n_calls(), 3);
        assert_eq!(
            turn.total(),
            Usage {
                prompt_tokens: 260,
                completion_tokens: 55,
                cost_usd: Some(0.75)
            }
        );
    }
}
