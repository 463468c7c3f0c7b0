//! The matcher: pure functions that read a screen and a kind's compiled rules and say which rule
//! wins (see docs/behaviour.md, Rules). No World, no I/O; the evaluate system and `lookout
//! explain` both call it.

pub mod composer;
pub mod composer_view;
mod grid;
pub mod matcher;
pub mod regions;
mod texts;

pub use matcher::{Explanation, Look, Outcome, RuleReport, Scratch, Strategy};
pub use regions::{Grid, RowBuf, Rows};
