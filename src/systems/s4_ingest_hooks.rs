//! Ingest, step 4: hook reports (see docs/behaviour.md, Hook reports) → `HookedProcess`
//! bookkeeping and `HookEvidence`.
//!
//! Every report is judged in a fixed order — unknown pane, bad params, authority, announcement,
//! sequence — and answered: refusals at once through the outbox, acceptances by `emit_events`
//! once the tick knows whether the state moved. A report that arrives before its agent is
//! identified is held for at most 1.5 s (`HeldReports`) and never attaches to another kind.

use crate::components::{AgentKind, HookClaim, HookEvidence, HookedProcess, LabelSet};
use crate::report::{Answer, Refusal, RefusalCode, Report, ReportBody, TurnEndStatus};
use crate::resources::{
    Awake, Clock, EventOutbox, HeldReport, HeldReports, PaneIndex, ReportInbox, Ticket,
};
use bevy_ecs::prelude::*;
use std::collections::HashSet;
use std::time::Duration;

/// How long an early report waits for its agent.
pub const HOLD: Duration = Duration::from_millis(1500);

/// The outcome of judging one report.
#[derive(Debug, PartialEq, Eq)]
pub enum Judgement {
    /// Accepted.
    Accept,
    /// No identified agent yet: wait.
    Hold,
    /// Refused.
    Refuse(Refusal),
}

fn refuse(code: RefusalCode, message: String) -> Judgement {
    Judgement::Refuse(Refusal { code, message })
}

/// Judges a report against the pane's process and kind (pure; `expired`: its hold ran out).
pub fn judge(
    report: &Report,
    process: &HookedProcess,
    kind: &AgentKind,
    expired: bool,
) -> Judgement {
    if let Some(problem) = bad_params(report) {
        return refuse(RefusalCode::BadParams, problem);
    }
    let claimed = report.source_kind();
    let live = if process.alive() {
        kind.name.as_deref()
    } else {
        None
    };
    match live {
        None if !expired => return Judgement::Hold,
        None => {
            return refuse(
                RefusalCode::NoAuthority,
                format!(
                    "no `{claimed}` process is running in pane `{}` (waited {} ms); report from \
                     inside the agent's own hooks, and have the pane source report its process",
                    report.pane,
                    HOLD.as_millis()
                ),
            );
        }
        Some(kind) if kind != claimed => {
            return refuse(
                RefusalCode::NoAuthority,
                format!(
                    "source `{}` speaks for `{claimed}`, but pane `{}` runs `{kind}`",
                    report.source, report.pane
                ),
            );
        }
        Some(_) => {}
    }
    let seq = match &report.body {
        ReportBody::Session(_) => return Judgement::Accept,
        ReportBody::State { seq, .. } | ReportBody::TurnEnd { seq, .. } => *seq,
    };
    if !process.sessions.contains_key(&report.source) {
        return refuse(
            RefusalCode::NotAnnounced,
            format!(
                "source `{}` has not announced its session in this process; send report.session first",
                report.source
            ),
        );
    }
    if let Some(last) = process.seqs.get(&report.source)
        && seq <= *last
    {
        return refuse(
            RefusalCode::StaleSeq,
            format!(
                "seq {seq} is not greater than {last}, the last accepted from `{}`",
                report.source
            ),
        );
    }
    Judgement::Accept
}

fn bad_params(report: &Report) -> Option<String> {
    if report.source.trim().is_empty() || report.source_kind().is_empty() {
        return Some("`source` must name the reporter, as `<anything>:<kind>`".into());
    }
    match &report.body {
        ReportBody::Session(s) if s.trim().is_empty() => Some("`session` must not be empty".into()),
        ReportBody::TurnEnd { status, .. } if status.v != 1 => Some(format!(
            "turn-end status version {} is not supported; send \"v\": 1",
            status.v
        )),
        _ => None,
    }
}

/// A turn-end status → the claim and the labels that replace the pane's.
pub fn turn_end_claim(status: &TurnEndStatus) -> (HookClaim, LabelSet) {
    let claim = if status.blocking > 0 {
        HookClaim::Blocked
    } else if status.agents > 0 {
        HookClaim::Working
    } else {
        HookClaim::TurnEnded
    };
    let mut labels = Vec::new();
    if status.blocking > 0 {
        labels.push(format!("gate ×{}", status.blocking));
    }
    if status.agents > 0 {
        labels.push(format!(
            "{} agent{}",
            status.agents,
            if status.agents == 1 { "" } else { "s" }
        ));
    }
    (
        claim,
        LabelSet {
            labels,
            gates: status.gates.clone(),
            agent_names: status.agent_names.clone(),
        },
    )
}

/// Judges held reports, then new ones, in order; records accepted ones.
pub fn ingest_hooks(
    mut inbox: ResMut<ReportInbox>,
    mut held: ResMut<HeldReports>,
    index: Res<PaneIndex>,
    clock: Res<Clock>,
    outbox: Res<EventOutbox>,
    mut awake: ResMut<Awake>,
    mut panes: Query<(&mut HookedProcess, &AgentKind, &mut HookEvidence)>,
) {
    if inbox.queue.is_empty() && held.0.is_empty() {
        return;
    }
    let waiting = std::mem::take(&mut held.0);
    let fresh = std::mem::take(&mut inbox.queue);
    let mut touched: HashSet<Entity> = HashSet::new();
    let items = waiting
        .into_iter()
        .map(|h| (h.ticket, h.report, Some(h.until)))
        .chain(fresh.into_iter().map(|(t, r)| (t, r, None)));
    for (ticket, report, until) in items {
        let Some(entity) = index.get(&report.pane) else {
            let message = format!("no pane `{}`; open it first (pane.open)", report.pane);
            outbox.answer(
                ticket,
                Answer::Refused(Refusal {
                    code: RefusalCode::UnknownPane,
                    message,
                }),
            );
            continue;
        };
        let Ok((mut process, kind, mut evidence)) = panes.get_mut(entity) else {
            continue;
        };
        let expired = until.is_some_and(|u| clock.now >= u);
        match judge(&report, &process, kind, expired) {
            Judgement::Refuse(refusal) => outbox.answer(ticket, Answer::Refused(refusal)),
            Judgement::Hold => {
                let until = until.unwrap_or(clock.now + HOLD);
                held.0.push(HeldReport {
                    ticket,
                    report,
                    until,
                });
            }
            Judgement::Accept => {
                awake.wake(entity);
                let fresh_tick = touched.insert(entity);
                accept(
                    ticket,
                    report,
                    &mut process,
                    &mut evidence,
                    fresh_tick,
                    &outbox,
                );
            }
        }
    }
}

fn accept(
    ticket: Ticket,
    report: Report,
    process: &mut HookedProcess,
    evidence: &mut Mut<HookEvidence>,
    fresh_tick: bool,
    outbox: &EventOutbox,
) {
    let (seq, claim, labels) = match report.body {
        ReportBody::Session(session) => {
            process.sessions.insert(report.source, session);
            outbox.answer(ticket, Answer::Applied { changed: false });
            return;
        }
        ReportBody::State { seq, state } => {
            let claim = match state {
                crate::report::ReportedState::Working => HookClaim::Working,
                crate::report::ReportedState::Blocked => HookClaim::Blocked,
                crate::report::ReportedState::Done => HookClaim::Done,
            };
            (seq, claim, None)
        }
        ReportBody::TurnEnd { seq, status } => {
            let (claim, labels) = turn_end_claim(&status);
            (seq, claim, Some(labels))
        }
    };
    process.seqs.insert(report.source.clone(), seq);
    let first = !process.hooked;
    process.hooked = true;
    let mut tickets = if fresh_tick {
        Vec::new()
    } else {
        std::mem::take(&mut evidence.tickets)
    };
    tickets.push(ticket);
    let first = first || (!fresh_tick && evidence.first);
    **evidence = HookEvidence {
        claim: Some(claim),
        labels,
        source: report.source,
        first,
        tickets,
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::Presence;
    use crate::report::ReportedState;
    use std::sync::Arc;

    fn report(source: &str, body: ReportBody) -> Report {
        Report {
            pane: Arc::from("p"),
            source: Arc::from(source),
            body,
        }
    }

    fn state(seq: u64) -> ReportBody {
        ReportBody::State {
            seq,
            state: ReportedState::Working,
        }
    }

    fn claude_pane() -> (HookedProcess, AgentKind) {
        let mut p = HookedProcess {
            presence: Presence::Alive,
            ..Default::default()
        };
        p.sessions.insert(Arc::from("hook:claude"), "s1".into());
        (
            p,
            AgentKind {
                name: Some(Arc::from("claude")),
                id: None,
                named: false,
            },
        )
    }

    fn code(j: Judgement) -> Option<RefusalCode> {
        match j {
            Judgement::Refuse(r) => Some(r.code),
            _ => None,
        }
    }

    #[test]
    fn source_kind_by_shape() {
        assert_eq!(report("herdr:claude", state(1)).source_kind(), "claude");
        assert_eq!(
            report("x:y:codex-closing-block", state(1)).source_kind(),
            "codex"
        );
        assert_eq!(report("opencode", state(1)).source_kind(), "opencode");
    }

    #[test]
    fn authority_needs_a_live_process_of_the_kind() {
        let (p, k) = claude_pane();
        assert_eq!(
            judge(&report("hook:claude", state(1)), &p, &k, false),
            Judgement::Accept
        );
        assert_eq!(
            code(judge(&report("hook:codex", state(1)), &p, &k, false)),
            Some(RefusalCode::NoAuthority)
        );
        let shell = AgentKind::default();
        assert_eq!(
            judge(&report("hook:claude", state(1)), &p, &shell, false),
            Judgement::Hold
        );
        assert_eq!(
            code(judge(&report("hook:claude", state(1)), &p, &shell, true)),
            Some(RefusalCode::NoAuthority)
        );
        let gone = HookedProcess {
            presence: Presence::Exited,
            ..p.clone()
        };
        assert_eq!(
            judge(&report("hook:claude", state(1)), &gone, &k, false),
            Judgement::Hold
        );
    }

    #[test]
    fn announcement_sequence_and_order_of_reasons() {
        let (mut p, k) = claude_pane();
        assert_eq!(
            code(judge(&report("other:claude", state(1)), &p, &k, false)),
            Some(RefusalCode::NotAnnounced)
        );
        p.seqs.insert(Arc::from("hook:claude"), 5);
        assert_eq!(
            code(judge(&report("hook:claude", state(5)), &p, &k, false)),
            Some(RefusalCode::StaleSeq)
        );
        assert_eq!(
            code(judge(&report("hook:claude", state(4)), &p, &k, false)),
            Some(RefusalCode::StaleSeq)
        );
        assert_eq!(
            judge(&report("hook:claude", state(6)), &p, &k, false),
            Judgement::Accept
        );
        // bad_params before no_authority before not_announced.
        let bad = ReportBody::TurnEnd {
            seq: 1,
            status: TurnEndStatus {
                v: 2,
                ..Default::default()
            },
        };
        assert_eq!(
            code(judge(&report("hook:codex", bad), &p, &k, true)),
            Some(RefusalCode::BadParams)
        );
        assert_eq!(
            code(judge(&report("new:codex", state(1)), &p, &k, false)),
            Some(RefusalCode::NoAuthority)
        );
        assert_eq!(
            code(judge(&report("", state(1)), &p, &k, false)),
            Some(RefusalCode::BadParams)
        );
    }

    #[test]
    fn turn_end_contract() {
        let s = |blocking, agents| TurnEndStatus {
            v: 1,
            blocking,
            agents,
            ..Default::default()
        };
        assert_eq!(turn_end_claim(&s(2, 3)).0, HookClaim::Blocked);
        assert_eq!(turn_end_claim(&s(2, 3)).1.labels, ["gate ×2", "3 agents"]);
        assert_eq!(turn_end_claim(&s(0, 1)).0, HookClaim::Working);
        assert_eq!(turn_end_claim(&s(0, 1)).1.labels, ["1 agent"]);
        assert_eq!(turn_end_claim(&s(0, 0)).0, HookClaim::TurnEnded);
        assert!(turn_end_claim(&s(0, 0)).1.labels.is_empty());
    }
}
