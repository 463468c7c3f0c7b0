//! The edge's tests, one binary (one link of tokio, zbus, SQLite and NATS): real servers on real
//! sockets, real PTYs, real tmux, a real nats-server and D-Bus bus, each where it is the subject.

mod agent_versions;
mod attention;
mod check;
mod client_deadlines;
mod conventions;
mod daemon;
mod fairness;
mod fleet;
mod fuzz_smoke;
mod hardening;
mod hooks;
mod inband;
mod names;
mod notify;
mod persistence;
mod pty_acceptance;
mod pty_record;
mod pty_run;
mod report_fallback;
mod run_limits;
mod run_server;
mod send;
mod server;
mod service;
mod status_line;
mod support;
mod tmux;
mod watch;
mod web;
