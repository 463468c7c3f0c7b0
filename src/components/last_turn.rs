//! `LastTurn`: the finished turn the pane's screen showed at its last evaluation (the
//! fingerprint of a `finished_turn` rule's hit: the prompt echoed in the transcript and the
//! answer under it), and whether that evaluation found one the screen did not show before: a turn
//! that started and ended between two looks (a fast answer inside one output batch, or between two
//! captures of a polled pane). Written by `evaluate_rules` only; read by `resolve_priority`.

use super::Generation;
use bevy_ecs::component::Component;

/// The last finished turn seen, per process generation.
#[derive(Component, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LastTurn {
    /// The generation the fingerprint belongs to, and the fingerprint (`None`: no finished turn
    /// on the screen yet). `None` before the generation's first evaluation.
    seen: Option<(Generation, Option<u64>)>,
    /// The latest evaluation found a finished turn that was not the one seen before.
    pub new: bool,
}

impl LastTurn {
    /// After an evaluation of `generation` whose winner pointed at finished turn `print` (`None`:
    /// the winner is no `finished_turn` rule, so the turn seen before is still the last one).
    /// The first look of a generation only learns what is there: an old transcript (a resumed
    /// session, a server restart) is no new turn.
    pub fn after(self, generation: Generation, print: Option<u64>) -> LastTurn {
        match (self.seen, print) {
            (Some((g, old)), Some(p)) if g == generation && old != Some(p) => LastTurn {
                seen: Some((g, Some(p))),
                new: true,
            },
            (Some((g, old)), _) if g == generation => LastTurn {
                seen: Some((g, old)),
                new: false,
            },
            _ => LastTurn {
                seen: Some((generation, print)),
                new: false,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_different_turn_in_the_same_generation_is_new() {
        let (g1, g2) = (Generation(1), Generation(2));
        let first = LastTurn::default().after(g1, Some(7));
        assert!(!first.new, "the first look only learns what is there");
        let start = LastTurn::default().after(g1, None);
        assert!(!start.new);
        let turn = start.after(g1, Some(7));
        assert!(turn.new, "a turn where there was none");
        assert!(!turn.after(g1, Some(7)).new, "the same turn again");
        assert!(
            !turn.after(g1, None).new,
            "another winner (a draft, a picker)"
        );
        assert!(turn.after(g1, None).after(g1, Some(8)).new, "the next turn");
        assert!(
            !turn.after(g1, None).after(g1, Some(7)).new,
            "back to the same turn"
        );
        assert!(!turn.after(g2, Some(9)).new, "a new process's first look");
    }
}
