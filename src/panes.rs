//! The embedder's side of the world: open and close panes, queue what happened, read states.
//!
//! These run between ticks (never inside one) and only touch the world through its public
//! resources and components; the schedule does the rest.

use crate::components::*;
use crate::event::rfc3339;
use crate::manifest::HookPolicy;
use crate::resources::*;
use crate::rules::Explanation;
use bevy_ecs::prelude::*;
use std::sync::Arc;
use std::time::SystemTime;

/// What a pane asks of its person, most urgent last (so `max` is the worst): the one ranking of
/// states that the board's roll-up and the tmux source's window options share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Badge {
    /// Nothing to do: idle, or done and already seen.
    Idle,
    /// Running a turn.
    Working,
    /// Finished a turn nobody has read.
    Done,
    /// Waiting for an answer.
    Blocked,
}

impl Badge {
    /// The badge of one pane.
    pub fn of(state: &PaneState) -> Badge {
        match state.lifecycle {
            LifecycleState::Blocked => Badge::Blocked,
            _ if state.input_required => Badge::Blocked,
            LifecycleState::Done if state.unread => Badge::Done,
            LifecycleState::Working => Badge::Working,
            LifecycleState::Done | LifecycleState::Idle => Badge::Idle,
        }
    }

    /// The lifecycle word it reads as (a done turn already seen reads `idle`).
    pub fn lifecycle(self) -> LifecycleState {
        match self {
            Badge::Idle => LifecycleState::Idle,
            Badge::Working => LifecycleState::Working,
            Badge::Done => LifecycleState::Done,
            Badge::Blocked => LifecycleState::Blocked,
        }
    }

    /// The word shown for it (the lifecycle names of the wire).
    pub fn name(self) -> &'static str {
        match self {
            Badge::Idle => "idle",
            Badge::Working => "working",
            Badge::Done => "done",
            Badge::Blocked => "blocked",
        }
    }

    /// Its SGR colour: blocked red, done teal, working yellow, idle plain.
    pub fn sgr(self) -> &'static str {
        match self {
            Badge::Blocked => "\x1b[1;31m",
            Badge::Done => "\x1b[1;36m",
            Badge::Working => "\x1b[33m",
            Badge::Idle => "\x1b[2m",
        }
    }
}

/// Whether a pane of that id is open.
pub fn exists(world: &World, id: &str) -> bool {
    world.resource::<PaneIndex>().get(id).is_some()
}

/// How many panes are open.
pub fn count(world: &World) -> usize {
    world.resource::<PaneIndex>().0.len()
}

/// The ids of every open pane, in no particular order.
pub fn ids(world: &World) -> impl Iterator<Item = &str> {
    world.resource::<PaneIndex>().0.keys().map(PaneId::as_str)
}

/// The compiled manifests the world was built with.
pub fn catalog(world: &World) -> Arc<crate::manifest::Catalog> {
    world.resource::<Manifests>().0.clone()
}

/// Runs one tick at `now` (the embedder's clock and the wall time to stamp events with) and
/// returns the outbox holding its events and report answers.
pub fn tick(world: &mut World, now: std::time::Instant, wall: SystemTime) -> EventOutbox {
    *world.resource_mut::<Clock>() = Clock::at(now, wall);
    world.run_schedule(crate::Tick);
    world.resource::<EventOutbox>().clone()
}

/// The number of the last event given out.
pub fn last_seq(world: &World) -> crate::event::EventSeq {
    world.resource::<EventCounter>().0
}

/// Continues event numbering after `seq` (a server resuming from its store).
pub fn resume_seq(world: &mut World, seq: crate::event::EventSeq) {
    world.resource_mut::<EventCounter>().0 = seq;
}

/// What a store keeps of a pane between runs.
pub struct Kept<'w> {
    /// The pane's kind, if identified.
    pub kind: Option<&'w str>,
    /// Its lifecycle.
    pub lifecycle: &'w Lifecycle,
    /// Its attention flags.
    pub attention: &'w Attention,
    /// Its labels.
    pub labels: &'w Labels,
}

/// What a store keeps of pane `id`, if it is open.
pub fn kept<'w>(world: &'w World, id: &str) -> Option<Kept<'w>> {
    let e = world.entity(world.resource::<PaneIndex>().get(id)?);
    Some(Kept {
        kind: e.get::<AgentKind>()?.name.as_deref(),
        lifecycle: e.get::<Lifecycle>()?,
        attention: e.get::<Attention>()?,
        labels: e.get::<Labels>()?,
    })
}

/// The panes running an identified agent whose release is not known yet and that `wanted`
/// (pane, generation) still asks about: the edge probes each once and queues
/// [`ProcessEvent::Version`]. Only those are copied out (this runs after every tick).
pub fn unversioned_agents(
    world: &mut World,
    mut wanted: impl FnMut(&str, Generation) -> bool,
) -> Vec<(String, HookedProcess)> {
    let mut query = world.query::<(&PaneId, &AgentKind, &HookedProcess)>();
    query
        .iter(world)
        .filter(|(_, kind, p)| kind.id.is_some() && p.alive() && p.version.is_none())
        .filter(|(pane, _, p)| wanted(pane.as_str(), p.generation))
        .map(|(pane, _, p)| (pane.as_str().to_owned(), p.clone()))
        .collect()
}

/// The panes in the order a person should look at them: blocked, then done-unread, working, idle;
/// the longest waiting first within each (RFC 3339 times sort as text).
pub fn by_urgency(panes: &mut [PaneState]) {
    panes.sort_by(|a, b| {
        Badge::of(b)
            .cmp(&Badge::of(a))
            .then_with(|| a.since.cmp(&b.since))
            .then_with(|| a.pane.cmp(&b.pane))
    });
}

/// A pane with no agent in it that asks nothing (a plain shell): boards hide it unless asked.
pub fn is_plain(pane: &PaneState) -> bool {
    pane.kind.is_none() && Badge::of(pane) == Badge::Idle
}

/// A pane's state as the wire and the store show it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PaneState {
    /// The pane id.
    pub pane: String,
    /// Its agent kind, if known.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub kind: Option<String>,
    /// idle / working / blocked / done.
    pub lifecycle: LifecycleState,
    /// The agent waits for an answer.
    pub input_required: bool,
    /// A finished turn nobody has seen.
    pub unread: bool,
    /// Labels from the last turn-end.
    pub labels: Vec<String>,
    /// Why the lifecycle last changed (`screen:<rule>`, `hook:<source>`, `process:exited`).
    pub cause: Option<String>,
    /// Since when (RFC 3339 UTC).
    pub since: String,
    /// The process generation.
    pub generation: u64,
    /// A hook has spoken for this generation.
    pub hooked: bool,
    /// The pane's kind has rules but no recording proves them (no `recorded` version in its
    /// manifests): its states are a best guess. Sent only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unverified: bool,
    /// The pane's rules may no longer fit its CLI (the screen kept changing with no rule
    /// firing, or the CLI is newer than every recording): what is wrong and what to record.
    /// Never a state. Sent only when raised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules_stale: Option<String>,
    /// The CLI's release as its `--version` said (probed at the edge), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Whether the agent process is there: only `dead` (and a pane that is gone:
    /// `unknown_pane`, "missing") may ever authorise recovery.
    #[serde(default)]
    pub liveness: Liveness,
    /// What the agent's input box holds: only proven emptiness is `empty`; a pane
    /// stored or sent before the field existed reads `unknown`.
    #[serde(default)]
    pub composer: ComposerView,
    /// When the agent's usage limit resets, as its screen says it (`2:53pm`, `3:05 PM`): sent
    /// only while the pane is blocked by a rule labelled `usage_limit` whose `resets_at` found a
    /// time on the screen. The screen's words, not an instant: it gives no date or zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resets_at: Option<String>,
}

/// Is the agent in this pane alive? Only what the process probe proves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Liveness {
    /// The foreground program is an agent (identified, or named by the embedder).
    Alive,
    /// A recognised shell alone in the foreground: the agent is gone.
    Dead,
    /// No process was ever reported for the pane.
    #[default]
    Unreadable,
    /// Something else is in charge (a bare `node`, an unknown program).
    Ambiguous,
}

/// The shells whose presence alone in a pane's foreground means "no agent here".
const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "fish", "dash", "ksh", "mksh", "tcsh", "csh", "ash", "yash", "nu",
    "elvish", "xonsh", "pwsh",
];

/// The liveness of a pane whose kind and process are these.
pub fn liveness(kind: &AgentKind, process: &HookedProcess) -> Liveness {
    let shell = |name: &str| {
        let base = name
            .rsplit('/')
            .next()
            .unwrap_or(name)
            .trim_start_matches('-');
        SHELLS.contains(&base)
    };
    // An interactive shell: a shell's name with options only (`-bash`, `zsh -l`), not a script it runs.
    let is_shell = match process.argv.split_first() {
        Some((argv0, rest)) => shell(argv0) && rest.iter().all(|a| a.starts_with('-')),
        None => process.comm.as_deref().is_some_and(shell),
    };
    match process.presence {
        Presence::Unknown => Liveness::Unreadable,
        // The agent exited and nothing new took over: what is left in charge is the pane's shell.
        Presence::Exited => Liveness::Dead,
        // Identified from the process itself (its script or executable): the agent runs.
        Presence::Alive if kind.name.is_some() && !kind.named => Liveness::Alive,
        // A named kind is the embedder's word, but a shell in charge is still no agent.
        Presence::Alive if is_shell => Liveness::Dead,
        Presence::Alive if kind.name.is_some() => Liveness::Alive,
        Presence::Alive => Liveness::Ambiguous,
    }
}

/// What to restore when a pane comes back under the same id.
#[derive(Debug, Clone, Default)]
pub struct Restore {
    /// Lifecycle.
    pub lifecycle: LifecycleState,
    /// Since when.
    pub since: Option<SystemTime>,
    /// The cause of the lifecycle.
    pub cause: Option<Cause>,
    /// `input_required`, with its raiser.
    pub input_required: Option<Cause>,
    /// `unread`, with its raiser.
    pub unread: Option<Cause>,
    /// Labels.
    pub labels: Vec<String>,
}

/// Why a pane could not be opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenError {
    /// The pane already exists.
    Exists,
    /// Its screen is out of bounds or does not fit the world's screen memory.
    Size(SizeError),
}

/// Why a pane could not be resized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResizeError {
    /// No pane has that id.
    Unknown,
    /// The new screen is out of bounds or does not fit.
    Size(SizeError),
}

/// No pane has that id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownPane;

impl std::fmt::Display for UnknownPane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("no pane has that id")
    }
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::Exists => f.write_str("a pane with that id is already open"),
            OpenError::Size(e) => e.fmt(f),
        }
    }
}

impl std::fmt::Display for ResizeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResizeError::Unknown => UnknownPane.fmt(f),
            ResizeError::Size(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for UnknownPane {}
impl std::error::Error for OpenError {}
impl std::error::Error for ResizeError {}

/// Opens a pane (`pane.open`). `kind`: named by the embedder (identification never overrides it).
/// The screen must be within [`check_size`] and fit [`ScreenCells`].
pub fn open_pane(
    world: &mut World,
    id: &str,
    rows: u16,
    cols: u16,
    kind: Option<&str>,
    restore: Option<Restore>,
) -> Result<Entity, OpenError> {
    spawn_pane(world, id, rows, cols, kind, restore, Screen::new)
}

/// Opens a pane whose screen the embedder keeps itself and hands over as rows
/// ([`feed_rows`]) instead of bytes: no second terminal, no vt100 grid. Otherwise as
/// [`open_pane`].
pub fn open_rows_pane(
    world: &mut World,
    id: &str,
    rows: u16,
    cols: u16,
    kind: Option<&str>,
    restore: Option<Restore>,
) -> Result<Entity, OpenError> {
    spawn_pane(world, id, rows, cols, kind, restore, Screen::rows)
}

fn spawn_pane(
    world: &mut World,
    id: &str,
    rows: u16,
    cols: u16,
    kind: Option<&str>,
    restore: Option<Restore>,
    screen: fn(u16, u16) -> Screen,
) -> Result<Entity, OpenError> {
    if world.resource::<PaneIndex>().get(id).is_some() {
        return Err(OpenError::Exists);
    }
    let pane = PaneId::new(id);
    world
        .resource_mut::<ScreenCells>()
        .reserve(&pane, rows, cols)
        .map_err(OpenError::Size)?;
    let clock = *world.resource::<Clock>();
    let agent = match kind {
        Some(name) => AgentKind {
            name: Some(Arc::from(name)),
            id: world.resource::<Manifests>().0.kind_id(name),
            named: true,
        },
        None => AgentKind::default(),
    };
    let restore = restore.unwrap_or_default();
    let lifecycle = Lifecycle {
        state: restore.lifecycle,
        prev: restore.lifecycle,
        since: restore.since.unwrap_or(clock.wall),
        cause: restore.cause,
    };
    let flags = (restore.input_required.is_some(), restore.unread.is_some());
    let attention = Attention {
        input_required: restore.input_required,
        unread: restore.unread,
        prev: flags,
        cause: None,
    };
    let labels = Labels {
        labels: restore.labels,
        ..Labels::default()
    };
    let entity = world
        .spawn((
            (
                pane.clone(),
                screen(rows, cols),
                Title::default(),
                Progress::default(),
                Inband::default(),
                agent,
            ),
            (
                HookedProcess::default(),
                HookEvidence::default(),
                ScreenVerdict::default(),
                Wake::default(),
                RowsSeen::default(),
                ComposerSeen::default(),
                Glimpse::default(),
                Drift::default(),
                Composer::default(),
            ),
            (
                Verdict::default(),
                lifecycle,
                attention,
                labels,
                Settling::default(),
                LastTurn::default(),
            ),
        ))
        .id();
    world.resource_mut::<PaneIndex>().0.insert(pane, entity);
    world.resource_mut::<Awake>().wake(entity);
    Ok(entity)
}

/// Closes a pane (`pane.close`): it is forgotten; its events stay wherever they were sent.
pub fn close_pane(world: &mut World, id: &str) -> Result<(), UnknownPane> {
    let pane = PaneId::new(id);
    let entity = world
        .resource_mut::<PaneIndex>()
        .0
        .remove(&pane)
        .ok_or(UnknownPane)?;
    world.resource_mut::<ScreenCells>().release(&pane);
    world.despawn(entity);
    Ok(())
}

fn entity(world: &World, id: &str) -> Result<Entity, UnknownPane> {
    world.resource::<PaneIndex>().get(id).ok_or(UnknownPane)
}

/// Queues PTY output for the next tick.
pub fn feed(world: &mut World, id: &str, bytes: &[u8]) -> Result<(), UnknownPane> {
    entity(world, id)?;
    world.resource_mut::<OutputInbox>().bytes(id, bytes, None);
    Ok(())
}

/// Queues output bytes that arrived at `at` (the embedder's clock, the same one it sets as
/// `Clock`): output in bursts apart by more than [`BURST_GAP`] is read burst by burst, so a
/// working screen shown between two ticks still counts.
pub fn feed_at(
    world: &mut World,
    id: &str,
    bytes: &[u8],
    at: std::time::Instant,
) -> Result<(), UnknownPane> {
    entity(world, id)?;
    world
        .resource_mut::<OutputInbox>()
        .bytes(id, bytes, Some(at));
    Ok(())
}

/// Queues the rows of a pane opened with [`open_rows_pane`] that changed at `at` (the embedder's
/// clock, as for [`feed_at`]), with the cursor, the alternate-screen flag and any new title or
/// progress. A pane fed with bytes ignores rows, and one fed with rows ignores bytes.
pub fn feed_rows(
    world: &mut World,
    id: &str,
    update: RowsUpdate,
    at: std::time::Instant,
) -> Result<(), UnknownPane> {
    entity(world, id)?;
    world
        .resource_mut::<OutputInbox>()
        .rows(id, update, Some(at));
    Ok(())
}

/// The output bytes queued for `id` and not read yet: a tick reads at most
/// [`PANE_BYTES_PER_TICK`](crate::resources::PANE_BYTES_PER_TICK) of a pane, so an embedder fed
/// faster than that holds back the producer while this is large.
pub fn output_queued(world: &mut World, id: &str) -> usize {
    world.resource_mut::<OutputInbox>().queued_bytes(id)
}

/// When the embedder should run the next tick for the output queued so far ([`OUTPUT_BATCH`]
/// after the first chunk queued with [`feed_at`] since the last tick; `None`: no such output).
/// Ticking then, besides the periodic tick, is what makes detection follow the screen.
pub fn output_due(world: &World) -> Option<std::time::Instant> {
    world.resource::<OutputInbox>().due()
}

/// When the embedder should run the next tick for queued process events: now, when any waits (a
/// program started or exited in a pane is known to detection at once, not a periodic tick later).
pub fn process_due(world: &World) -> Option<std::time::Instant> {
    let waiting = !world.resource::<ProcessInbox>().0.is_empty();
    waiting.then(std::time::Instant::now)
}

/// When the embedder should run the next tick besides its periodic one: for queued output
/// ([`output_due`]) or process events ([`process_due`]), or when a pane's time condition or idle
/// settle comes due ([`Awake`]'s timers). A past instant means "now".
pub fn next_due(world: &World) -> Option<std::time::Instant> {
    output_due(world)
        .into_iter()
        .chain(process_due(world))
        .chain(world.resource::<Awake>().next_timer())
        .min()
}

/// Queues a resize for the next tick; the new screen must be within bounds and fit.
pub fn resize(world: &mut World, id: &str, rows: u16, cols: u16) -> Result<(), ResizeError> {
    entity(world, id).map_err(|_| ResizeError::Unknown)?;
    world
        .resource_mut::<ScreenCells>()
        .reserve(&PaneId::new(id), rows, cols)
        .map_err(ResizeError::Size)?;
    world.resource_mut::<OutputInbox>().resize(id, rows, cols);
    Ok(())
}

/// Queues a process event; returns the generation the pane will be in once it is applied.
pub fn process(
    world: &mut World,
    id: &str,
    event: ProcessEvent,
) -> Result<Generation, UnknownPane> {
    let e = entity(world, id)?;
    let current = world.get::<HookedProcess>(e).map_or(0, |p| p.generation.0);
    let pending = world
        .resource::<ProcessInbox>()
        .0
        .iter()
        .filter(|(p, ev)| &**p == id && matches!(ev, ProcessEvent::Started { .. }))
        .count() as u64;
    let started = u64::from(matches!(event, ProcessEvent::Started { .. }));
    world
        .resource_mut::<ProcessInbox>()
        .0
        .push((Arc::from(id), event));
    Ok(Generation(current + pending + started))
}

/// Queues `pane.seen` (clears `unread` on the next tick).
pub fn seen(world: &mut World, id: &str) -> Result<(), UnknownPane> {
    entity(world, id)?;
    world
        .resource_mut::<SeenInbox>()
        .0
        .push((Arc::from(id), Cause::Seen));
    Ok(())
}

/// The person was seen at the pane, and `how` (`focus`, `input`): `unread` clears with cause
/// `seen:<how>`.
pub fn seen_by(world: &mut World, id: &str, how: &str) -> Result<(), UnknownPane> {
    entity(world, id)?;
    world
        .resource_mut::<SeenInbox>()
        .0
        .push((Arc::from(id), Cause::SeenBy(Arc::from(how))));
    Ok(())
}

/// Input was submitted to the agent in pane `id` and taken (`how`: `send`): a turn started. A pane
/// at rest (idle or done) is working from now on, so that turn ends `done` with `unread` — and an
/// event — even when it was over before any look saw it working: the screen's verdict is decided
/// again on the next tick. A working or blocked pane is left as it is.
pub fn submitted(world: &mut World, id: &str, how: &str) -> Result<(), UnknownPane> {
    let e = entity(world, id)?;
    let wall = world.resource::<Clock>().wall;
    if let Some(mut lifecycle) = world.get_mut::<Lifecycle>(e)
        && matches!(lifecycle.state, LifecycleState::Idle | LifecycleState::Done)
    {
        *lifecycle = Lifecycle {
            state: LifecycleState::Working,
            prev: lifecycle.state,
            since: wall,
            cause: Some(Cause::Input(Arc::from(how))),
        };
        if let Some(mut verdict) = world.get_mut::<ScreenVerdict>(e) {
            verdict.set_changed();
        }
        world.resource_mut::<Awake>().wake(e);
    }
    Ok(())
}

/// Queues a hook report; its answer arrives on the outbox with the returned ticket.
pub fn report(world: &mut World, report: crate::report::Report) -> Ticket {
    world.resource_mut::<ReportInbox>().push(report)
}

/// The pane's state now.
pub fn state(world: &World, id: &str) -> Result<PaneState, UnknownPane> {
    let e = entity(world, id)?;
    let get = world.entity(e);
    let (Some(kind), Some(lc), Some(att), Some(labels), Some(process)) = (
        get.get::<AgentKind>(),
        get.get::<Lifecycle>(),
        get.get::<Attention>(),
        get.get::<Labels>(),
        get.get::<HookedProcess>(),
    ) else {
        return Err(UnknownPane);
    };
    let deciding = deciding_blocked_rule(world, get, kind, lc);
    Ok(PaneState {
        pane: id.to_owned(),
        kind: kind.name.as_deref().map(str::to_owned),
        lifecycle: lc.state,
        input_required: att.input_required.is_some(),
        unread: att.unread.is_some(),
        labels: deciding
            .and_then(|r| r.spec.label.as_deref())
            .filter(|l| !labels.labels.iter().any(|have| have == l))
            .map(str::to_owned)
            .into_iter()
            .chain(labels.labels.iter().cloned())
            .collect(),
        cause: lc.cause.as_ref().map(ToString::to_string),
        since: rfc3339(lc.since),
        generation: process.generation.0,
        hooked: process.hooked,
        unverified: kind
            .id
            .and_then(|id| world.resource::<Manifests>().0.kind(id))
            .is_some_and(|k| k.unverified()),
        rules_stale: get.get::<Drift>().and_then(|d| {
            d.describe(
                kind.name.as_deref().unwrap_or("agent"),
                world.resource::<Clock>().now,
            )
        }),
        version: process.version.clone(),
        liveness: liveness(kind, process),
        composer: get
            .get::<Composer>()
            .map(|c| c.0.clone())
            .unwrap_or_default(),
        resets_at: deciding
            .and_then(|r| r.spec.resets_at.as_ref())
            .zip(get.get::<Screen>())
            .and_then(|(re, screen)| reset_time(re, &screen.text())),
    })
}

/// The blocked rule deciding the pane now, when the pane is blocked: labels and the reset time
/// come from it. Read here, off the tick, so the hot path never captures anything.
fn deciding_blocked_rule<'w>(
    world: &'w World,
    entity: EntityRef<'w>,
    kind: &AgentKind,
    lifecycle: &Lifecycle,
) -> Option<&'w crate::manifest::Rule> {
    if lifecycle.state != LifecycleState::Blocked {
        return None;
    }
    let Some((id, crate::manifest::RuleState::Blocked, _)) = &entity.get::<ScreenVerdict>()?.0
    else {
        return None;
    };
    let rules = world.resource::<Manifests>().0.kind(kind.id?)?;
    rules
        .rules
        .iter()
        .find(|r| r.id == *id && r.spec.state == crate::manifest::RuleState::Blocked)
}

/// The last reset time `re` (its group `at`) finds on the screen: the newest one shown.
fn reset_time(re: &regex::Regex, screen: &str) -> Option<String> {
    let at = re
        .captures_iter(screen)
        .filter_map(|c| c.name("at"))
        .last()?;
    let at = at.as_str().split_whitespace().collect::<Vec<_>>().join(" ");
    (!at.is_empty()).then_some(at)
}

/// Every pane's state, ordered by id.
pub fn states(world: &World) -> Vec<PaneState> {
    let mut ids: Vec<&PaneId> = world.resource::<PaneIndex>().0.keys().collect();
    ids.sort();
    ids.iter()
        .filter_map(|id| state(world, id.as_str()).ok())
        .collect()
}

/// Whether the pane's agent holds input typed while it works, to send next (its manifest's
/// `[composer] queues`): `pane.send` reads pending text on a working pane as queued only then.
pub fn queues_input(world: &World, id: &str) -> bool {
    let Ok(e) = entity(world, id) else {
        return false;
    };
    let catalog = &world.resource::<Manifests>().0;
    world
        .entity(e)
        .get::<AgentKind>()
        .and_then(|k| catalog.rules_for(k.id))
        .and_then(|k| k.composer.as_ref())
        .is_some_and(|c| c.queues)
}

/// `agent.explain`: the pane's rules evaluated on its screen now, plus hook status and policy.
pub fn explain(
    world: &World,
    id: &str,
) -> Result<(PaneState, Option<Explanation>, HookPolicy), UnknownPane> {
    let st = state(world, id)?;
    let e = entity(world, id)?;
    let get = world.entity(e);
    let clock = *world.resource::<Clock>();
    let catalog = &world.resource::<Manifests>().0;
    let rules = get.get::<AgentKind>().and_then(|k| catalog.rules_for(k.id));
    let policy = rules.map(|k| k.policy).unwrap_or_default();
    let explanation = match (
        rules,
        get.get::<Screen>(),
        get.get::<Title>(),
        get.get::<Progress>(),
    ) {
        (Some(rules), Some(screen), Some(title), Some(progress)) => {
            Some(rules.explain(&crate::rules::Look {
                screen: screen.grid(),
                title: &title.0,
                progress: &progress.0,
                changed_at: get.get::<RowsSeen>().and_then(|s| s.changed_at),
                now: clock.now,
            }))
        }
        _ => None,
    };
    Ok((st, explanation, policy))
}

/// The pane's visible screen text.
pub fn screen_text(world: &World, id: &str) -> Result<String, UnknownPane> {
    let e = entity(world, id)?;
    world.get::<Screen>(e).map(Screen::text).ok_or(UnknownPane)
}

#[cfg(test)]
mod liveness_tests {
    use super::*;

    fn process(presence: Presence, argv0: &str) -> HookedProcess {
        HookedProcess {
            presence,
            argv: vec![argv0.to_owned()],
            ..HookedProcess::default()
        }
    }

    fn script(shell: &str, path: &str) -> HookedProcess {
        HookedProcess {
            presence: Presence::Alive,
            argv: vec![shell.to_owned(), path.to_owned()],
            ..HookedProcess::default()
        }
    }

    fn named(name: &str) -> AgentKind {
        AgentKind {
            named: true,
            ..kind(Some(name))
        }
    }

    fn kind(name: Option<&str>) -> AgentKind {
        AgentKind {
            name: name.map(Arc::from),
            ..AgentKind::default()
        }
    }

    #[test]
    fn only_a_proven_agent_is_alive_and_only_a_shell_is_dead() {
        use Liveness::*;
        let cases = [
            (
                kind(Some("claude")),
                process(Presence::Alive, "claude"),
                Alive,
            ),
            (kind(None), process(Presence::Alive, "-bash"), Dead),
            (kind(None), process(Presence::Alive, "/usr/bin/zsh"), Dead),
            (named("claude"), process(Presence::Alive, "bash"), Dead),
            (
                kind(Some("claude")),
                script("bash", "/usr/local/bin/claude"),
                Alive,
            ),
            (kind(None), script("bash", "./build.sh"), Ambiguous),
            (kind(None), process(Presence::Alive, "node"), Ambiguous),
            (
                kind(Some("claude")),
                process(Presence::Exited, "claude"),
                Dead,
            ),
            (kind(None), HookedProcess::default(), Unreadable),
        ];
        for (kind, process, want) in cases {
            assert_eq!(liveness(&kind, &process), want, "{:?}", process.argv);
        }
    }
}
