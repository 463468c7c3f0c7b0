//! `EventOutbox`: events and report answers leave the world through unbounded crossbeam channels
//! the embedder drains after each tick (the tick never blocks on a consumer). `EventCounter`
//! numbers events gap-free.

use crate::event::{Event, EventSeq};
use crate::report::Answer;
use crate::resources::Ticket;
use bevy_ecs::resource::Resource;
use crossbeam_channel::{Receiver, Sender, unbounded};

/// Where events and answers go.
#[derive(Resource, Debug, Clone)]
pub struct EventOutbox {
    events_tx: Sender<Event>,
    events_rx: Receiver<Event>,
    answers_tx: Sender<(Ticket, Answer)>,
    answers_rx: Receiver<(Ticket, Answer)>,
}

impl Default for EventOutbox {
    fn default() -> Self {
        let (events_tx, events_rx) = unbounded();
        let (answers_tx, answers_rx) = unbounded();
        EventOutbox {
            events_tx,
            events_rx,
            answers_tx,
            answers_rx,
        }
    }
}

impl EventOutbox {
    /// Sends an event (never blocks: the channel is unbounded and we hold a receiver).
    pub fn event(&self, event: Event) {
        let _ = self.events_tx.send(event);
    }

    /// Sends a report's answer.
    pub fn answer(&self, ticket: Ticket, answer: Answer) {
        let _ = self.answers_tx.send((ticket, answer));
    }

    /// The receiving end of events (clone it to drain from another thread).
    pub fn events(&self) -> &Receiver<Event> {
        &self.events_rx
    }

    /// The receiving end of answers.
    pub fn answers(&self) -> &Receiver<(Ticket, Answer)> {
        &self.answers_rx
    }
}

/// The last event number handed out.
#[derive(Resource, Debug, Default, Clone, Copy)]
pub struct EventCounter(pub EventSeq);
