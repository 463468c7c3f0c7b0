//! lookout: the detection core (an ECS world of panes) and the tools around it.

pub mod cli;
pub mod pty;
