//! The live bench: a tmux server of its own (`tmux -L lookout-live-PID-N-K`) with N panes — idle
//! shells, one in ten printing a spinner 10× a second, a few running a scripted Claude that shows a
//! permission dialog — watched by the real `lookout serve` in a home of its own. Prints, per N:
//! rounds/s, CPU of lookout (with the tmux clients it runs) and of the tmux server, lookout's RSS,
//! and dialog → blocked latency (the time from asking the pane to draw the dialog to the server's
//! event) p50/p99/misses; then the floor, measured on the same panes: one tmux process a round
//! capturing every pane. Never asserted.
//!
//! Run: `cargo build --release -p lookout && cargo bench -p lookout --bench live`. The binary is
//! `$LOOKOUT_BIN`, else `lookout` next to the bench executable's `deps/` directory (the profile
//! `cargo bench` builds); `LOOKOUT_BIN=old,new` runs each size with each binary in turn (a before
//! and after under the same load). `LIVE_PANES=10,50,200` and `LIVE_SECS=20` choose sizes and
//! duration, `LIVE_IDLE=1` leaves every pane idle (no spinner, no dialog shown: CPU only).
//! Touches tmux, a temp dir, the `lookout` binary it starts, and `/proc`.

// The scripted Claude of the edge tests (its `w` and `b` scenes: working, a permission dialog).
#[path = "../tests/edge/support/fake_claude.rs"]
mod fake_claude;

use lookout::server::Client;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const SPINNER: &str =
    r#"i=0; while :; do printf '\r\342\240\213 working %s' $i; i=$((i+1)); sleep 0.1; done"#;

fn main() {
    let sizes: Vec<usize> = std::env::var("LIVE_PANES")
        .unwrap_or_else(|_| "10,50,200".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let secs: u64 = std::env::var("LIVE_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let bins = lookout_bins();
    if bins.is_empty() {
        eprintln!("live bench: no lookout binary (build it, or set LOOKOUT_BIN)");
        return;
    }
    for (i, bin) in bins.iter().enumerate() {
        println!("lookout {}: {}", i + 1, bin.display());
    }
    println!(
        "| lookout | panes | rounds/s | CPU lookout+clients | CPU tmux server | RSS MiB | blocked p50 / p99 ms | misses | floor: CPU client + server |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for n in sizes {
        for (i, bin) in bins.iter().enumerate() {
            run(i + 1, bin, n, Duration::from_secs(secs));
        }
    }
}

fn lookout_bins() -> Vec<PathBuf> {
    if let Some(bins) = std::env::var_os("LOOKOUT_BIN") {
        let bins = bins.to_string_lossy().into_owned();
        return bins.split(',').map(PathBuf::from).collect();
    }
    let exe = std::env::current_exe().ok();
    let bin = exe.and_then(|e| Some(e.parent()?.parent()?.join("lookout")));
    bin.filter(|b| b.exists()).into_iter().collect()
}

struct Tmux(String);

impl Tmux {
    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.0])
            .args(args)
            .output();
        out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.run(&["kill-server"]);
    }
}

struct Serve(Child);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// CPU seconds of `pid` (and of its reaped children), from `/proc/PID/stat`.
fn cpu(pid: u32, children: bool) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    let f: Vec<f64> = stat
        .rsplit_once(')')
        .map(|(_, r)| {
            r.split_whitespace()
                .map(|x| x.parse().unwrap_or(0.0))
                .collect()
        })
        .unwrap_or_default();
    let ticks = f.get(11).unwrap_or(&0.0) + f.get(12).unwrap_or(&0.0);
    let reaped = if children {
        f.get(13).unwrap_or(&0.0) + f.get(14).unwrap_or(&0.0)
    } else {
        0.0
    };
    (ticks + reaped) / 100.0
}

/// CPU of `pid`, its reaped children and every live descendant (lookout's control clients and
/// their keepers).
fn cpu_tree(pid: u32) -> f64 {
    let mut parent = std::collections::HashMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(child) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default();
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, r)| r.split_whitespace().nth(1)?.parse::<u32>().ok());
        if let Some(ppid) = ppid {
            parent.insert(child, ppid);
        }
    }
    let descends = |mut p: u32| {
        while let Some(&up) = parent.get(&p) {
            if up == pid {
                return true;
            }
            p = up;
        }
        false
    };
    let live: f64 = parent
        .keys()
        .filter(|&&p| descends(p))
        .map(|&p| cpu(p, false))
        .sum();
    cpu(pid, true) + live
}

fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok());
    kib.unwrap_or(0.0) / 1024.0
}

fn start_panes(tmux: &Tmux, dir: &Path, n: usize) -> Vec<String> {
    let bin = fake_claude::fake_claude(dir);
    let dialogs = (n / 50).max(1);
    let idle = std::env::var_os("LIVE_IDLE").is_some();
    let mut agents = Vec::new();
    for i in 0..n {
        let command = if i < dialogs {
            format!("env PATH={}:$PATH claude", bin.display())
        } else if i % 10 == 5 && !idle {
            SPINNER.to_owned()
        } else {
            "sh".to_owned()
        };
        let args: Vec<&str> = if i == 0 {
            vec![
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-x",
                "120",
                "-y",
                "30",
            ]
        } else {
            vec!["new-window", "-d"]
        };
        let id = tmux.run(&[args, vec!["-P", "-F", "#{pane_id}", &command]].concat());
        if i < dialogs {
            agents.push(id.trim().to_owned());
        }
    }
    agents
}

fn run(label: usize, bin: &Path, n: usize, secs: Duration) {
    let home = tempfile::Builder::new()
        .prefix("lookout-live-")
        .tempdir()
        .expect("tempdir");
    let tmux = Tmux(format!("lookout-live-{}-{n}-{label}", std::process::id()));
    let agents = start_panes(&tmux, home.path(), n);
    let server_pid: u32 = tmux
        .run(&["display", "-p", "#{pid}"])
        .trim()
        .parse()
        .unwrap_or(0);
    let env = |cmd: &mut Command| {
        cmd.env("XDG_RUNTIME_DIR", home.path().join("run"))
            .env("XDG_STATE_HOME", home.path().join("state"))
            .env("XDG_CONFIG_HOME", home.path().join("config"))
            .env_remove("TMUX")
            .env_remove("LOOKOUT_SOCKET");
    };
    std::fs::create_dir_all(home.path().join("run/lookout")).expect("run dir");
    let socket = home.path().join("run/lookout/lookout.sock");
    let mut serve = Command::new(bin);
    env(&mut serve);
    serve
        .args(["serve"])
        .arg("--socket")
        .arg(&socket)
        .stderr(Stdio::null());
    let serve = Serve(serve.spawn().expect("start lookout serve"));
    let pid = serve.0.id();
    let connected = wait_for(Duration::from_secs(10), || Client::connect(&socket).ok());
    let Some(mut client) = connected else {
        eprintln!("live bench: lookout serve did not answer");
        return;
    };
    let mut attach = Command::new(bin);
    env(&mut attach);
    attach
        .args(["tmux", "--socket-name", &tmux.0, "--server-socket"])
        .arg(&socket);
    let _ = attach.stdout(Stdio::null()).status();
    let rounds = |c: &mut Client| {
        c.call_raw("source.list", json!({}))
            .ok()
            .and_then(|v| v["sources"][0]["rounds"].as_u64())
            .unwrap_or(0)
    };
    // Settled: every pane opened and the agents identified.
    let _ = wait_for(Duration::from_secs(60), || {
        (rounds(&mut client) >= 4).then_some(())
    });
    let events = subscribe(&socket);
    let (cpu0, server0, rounds0, t0) = (
        cpu_tree(pid),
        cpu(server_pid, false),
        rounds(&mut client),
        Instant::now(),
    );
    let latencies = dialogs(&tmux, &agents, &events, secs);
    let wall = t0.elapsed().as_secs_f64();
    let lookout = (cpu_tree(pid) - cpu0) / wall * 100.0;
    let server = (cpu(server_pid, false) - server0) / wall * 100.0;
    let per_s = (rounds(&mut client) - rounds0) as f64 / wall;
    let rss = rss_mib(pid);
    drop(serve);
    let floor = floor(&tmux, server_pid, secs);
    let (p50, p99, misses) = percentiles(latencies);
    println!(
        "| {label} | {n} | {per_s:.2} | {lookout:.1} % | {server:.1} % | {rss:.0} | {p50} / {p99} | {misses} | {:.1} + {:.1} % |",
        floor.0, floor.1
    );
}

fn wait_for<T>(within: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let end = Instant::now() + within;
    while Instant::now() < end {
        if let Some(v) = f() {
            return Some(v);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

/// Every event the server sends, with when it arrived.
fn subscribe(socket: &Path) -> mpsc::Receiver<(Instant, String)> {
    let (tx, rx) = mpsc::channel();
    let socket = socket.to_path_buf();
    std::thread::spawn(move || {
        let Ok(client) = Client::connect(&socket) else {
            return;
        };
        let Ok((_, _, events)) = client.subscribe() else {
            return;
        };
        for event in events.flatten() {
            let text = serde_json::to_string(&event).unwrap_or_default();
            if tx.send((Instant::now(), text)).is_err() {
                return;
            }
        }
    });
    rx
}

/// Shows the dialog in each agent pane in turn for `secs`; each latency in ms, `None` for a
/// dialog not read blocked within 3 s.
fn dialogs(
    tmux: &Tmux,
    agents: &[String],
    events: &mpsc::Receiver<(Instant, String)>,
    secs: Duration,
) -> Vec<Option<f64>> {
    let end = Instant::now() + secs;
    let mut out = Vec::new();
    if std::env::var_os("LIVE_IDLE").is_some() {
        std::thread::sleep(secs);
        return out;
    }
    for pane in agents.iter().cycle() {
        if Instant::now() >= end {
            break;
        }
        while events.try_recv().is_ok() {}
        let asked = Instant::now();
        tmux.run(&["send-keys", "-t", pane, "b", "Enter"]);
        let needle = format!(":{pane}\"");
        let mut seen = None;
        while let Ok((at, text)) =
            events.recv_timeout(Duration::from_secs(3).saturating_sub(asked.elapsed()))
        {
            if text.contains(&needle) && text.contains("\"blocked\"") {
                seen = Some(at.duration_since(asked).as_secs_f64() * 1000.0);
                break;
            }
        }
        out.push(seen);
        tmux.run(&["send-keys", "-t", pane, "w", "Enter"]);
        std::thread::sleep(Duration::from_millis(700));
    }
    out
}

fn percentiles(mut latencies: Vec<Option<f64>>) -> (String, String, String) {
    let misses = latencies.iter().filter(|l| l.is_none()).count();
    let total = latencies.len();
    latencies.retain(Option::is_some);
    let mut seen: Vec<f64> = latencies.into_iter().flatten().collect();
    seen.sort_by(f64::total_cmp);
    let at = |q: f64| {
        let i = ((seen.len() as f64 - 1.0) * q).round() as usize;
        seen.get(i).map_or("-".into(), |v| format!("{v:.0}"))
    };
    (at(0.5), at(0.99), format!("{misses}/{total}"))
}

/// The floor: one tmux process a round (2 a second) capturing every pane; CPU % of that process
/// and of the tmux server.
fn floor(tmux: &Tmux, server_pid: u32, secs: Duration) -> (f64, f64) {
    let ids: Vec<String> = tmux
        .run(&["list-panes", "-a", "-F", "#{pane_id}"])
        .lines()
        .map(str::to_owned)
        .collect();
    let mut args: Vec<&str> = vec![
        "-L",
        &tmux.0,
        "list-panes",
        "-a",
        "-F",
        "#{pane_id} #{cursor_x}",
    ];
    for id in &ids {
        args.extend([";", "capture-pane", "-p", "-e", "-t", id]);
    }
    let (mine0, server0, t0) = (
        cpu(std::process::id(), true),
        cpu(server_pid, false),
        Instant::now(),
    );
    while t0.elapsed() < secs {
        let _ = Command::new("tmux").args(&args).output();
        std::thread::sleep(Duration::from_millis(500));
    }
    let wall = t0.elapsed().as_secs_f64();
    let mine = (cpu(std::process::id(), true) - mine0) / wall * 100.0;
    (mine, (cpu(server_pid, false) - server0) / wall * 100.0)
}
