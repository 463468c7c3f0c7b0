//! `Screen`: the pane's headless terminal (a `vt100` parser, no scrollback) and when it last
//! changed. Written by `ingest_output` only. `Osc` collects the title and OSC 9;4 progress the
//! parser sees so that ingest can move them into `Title`/`Progress`.

use bevy_ecs::component::Component;
use std::num::NonZeroU16;
use std::time::Instant;

/// Catches the OSC sequences the rules read: window title (0/2) and progress (9;4).
#[derive(Debug, Default)]
pub struct Osc {
    /// A title set since the last drain.
    pub title: Option<String>,
    /// A progress payload (`4;1;-1`, …) set since the last drain.
    pub progress: Option<String>,
}

impl vt100::Callbacks for Osc {
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.title = Some(String::from_utf8_lossy(title).into_owned());
    }

    fn unhandled_osc(&mut self, _: &mut vt100::Screen, params: &[&[u8]]) {
        // OSC 9;4;<state>;<value>: ConEmu/Windows Terminal progress, used by several agents.
        if let [b"9", b"4", rest @ ..] = params {
            let parts: Vec<String> = rest
                .iter()
                .map(|p| String::from_utf8_lossy(p).into_owned())
                .collect();
            self.progress = Some(format!("4;{}", parts.join(";")));
        }
    }
}

/// The pane's visible screen and when it last changed.
#[derive(Component)]
pub struct Screen {
    /// The terminal emulator.
    pub parser: vt100::Parser<Osc>,
    /// When output last arrived (`None` until the first output).
    pub changed_at: Option<Instant>,
}

impl Screen {
    /// A blank screen of `rows` × `cols` (each at least 1).
    pub fn new(rows: u16, cols: u16) -> Self {
        let rows = NonZeroU16::new(rows).unwrap_or(NonZeroU16::MIN);
        let cols = NonZeroU16::new(cols).unwrap_or(NonZeroU16::MIN);
        Screen {
            parser: vt100::Parser::new_with_callbacks(rows, cols, 0, Osc::default()),
            changed_at: None,
        }
    }

    /// The vt100 screen.
    pub fn screen(&self) -> &vt100::Screen {
        self.parser.screen()
    }

    /// The visible text, rows joined by newlines (for explain, replay and tests).
    pub fn text(&self) -> String {
        self.parser.screen().contents()
    }
}

impl std::fmt::Debug for Screen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (rows, cols) = self.parser.screen().size();
        f.debug_struct("Screen")
            .field("rows", &rows)
            .field("cols", &cols)
            .field("changed_at", &self.changed_at)
            .finish()
    }
}
