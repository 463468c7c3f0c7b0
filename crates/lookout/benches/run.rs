//! The `lookout run` bench: what wrapping a program costs on a big stream, against `script -q -c`
//! (the floor: a plain PTY pass-through) in the same run. Each runs `cat FILE` (100 MB of
//! coloured build-log lines by default) inside a PTY this bench holds as the outer terminal, whose
//! output it reads and drops; CPU is the wrapped process tree's (`getrusage` of the reaped
//! children), and for `lookout run` also its server's (from `/proc`), which parses the stream too.
//! Prints the figures; never asserted.
//!
//! Run: `cargo build --release -p lookout && cargo bench -p lookout --bench run`. The binary is
//! `$LOOKOUT_BIN`, else `lookout` next to the bench executable's `deps/` directory;
//! `RUN_MB=100` sets the stream's size. Touches a temp dir, a PTY, the binary it starts, `/proc`.

mod support;

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use support::lookout_bin;

fn main() {
    let mb: usize = std::env::var("RUN_MB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    let Some(bin) = lookout_bin() else {
        eprintln!("run bench: no lookout binary (build it, or set LOOKOUT_BIN)");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("stream.txt");
    write_stream(&file, mb << 20);
    let cat = format!("cat {}", file.display());
    let socket = dir.path().join("lookout.sock");
    let mut server = serve(&bin, dir.path(), &socket);
    println!("lookout: {}; stream: {mb} MB", bin.display());
    println!("| wrapper | CPU s (wrapper + cat) | wall s | server CPU s | × script |");
    println!("|---|---|---|---|---|");
    let (floor, wall) = in_pty(&["script", "-q", "-c", &cat, "/dev/null"]);
    println!("| script -q -c | {floor:.2} | {wall:.1} | – | 1.00 |");
    let before = cpu_of(server.id());
    let argv = [
        bin.to_str().unwrap_or("lookout"),
        "run",
        "--socket",
        socket.to_str().unwrap_or(""),
        "--pane",
        "bench",
        "--",
        "sh",
        "-c",
        &cat,
    ];
    let (cpu, wall) = in_pty(&argv);
    // The server works off the last feeds after `run` has exited.
    std::thread::sleep(Duration::from_secs(2));
    let served = cpu_of(server.id()) - before;
    println!(
        "| lookout run | {cpu:.2} | {wall:.1} | {served:.2} | {:.2} |",
        cpu / floor.max(1e-3)
    );
    println!(
        "FIGURE run_cpu_ratio_vs_script {:.2}",
        cpu / floor.max(1e-3)
    );
    let _ = server.kill();
    let _ = server.wait();
}

/// `mb` bytes of build-log lines with colour, as agents' commands print them.
fn write_stream(path: &Path, bytes: usize) {
    let words = [
        "Compiling",
        "lookout",
        "v0.2.0",
        "\x1b[32mok\x1b[0m",
        "\x1b[1;31merror\x1b[0m[E0308]:",
        "src/main.rs:12:5",
        "warning:",
        "│",
        "✓",
        "test",
        "finished",
    ];
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).expect("stream file"));
    let (mut written, mut seed) = (0, 0x2545_f491_u64);
    while written < bytes {
        let mut line = String::new();
        for _ in 0..3 + seed % 12 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            line.push_str(words[(seed % words.len() as u64) as usize]);
            line.push(' ');
        }
        line.push_str("\r\n");
        written += line.len();
        out.write_all(line.as_bytes()).expect("write");
    }
}

/// Runs `argv` in a PTY whose output is read and dropped; (CPU of the reaped tree, wall) seconds.
fn in_pty(argv: &[&str]) -> (f64, f64) {
    let pty = native_pty_system()
        .openpty(PtySize {
            rows: 50,
            cols: 200,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("openpty");
    let mut cmd = CommandBuilder::new(argv[0]);
    cmd.args(&argv[1..]);
    let before = children_cpu();
    let start = Instant::now();
    let mut child = pty.slave.spawn_command(cmd).expect("spawn");
    drop(pty.slave);
    let mut reader = pty.master.try_clone_reader().expect("reader");
    let drain = std::thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 16];
        while matches!(reader.read(&mut buf), Ok(n) if n > 0) {}
    });
    let _ = child.wait();
    let wall = start.elapsed().as_secs_f64();
    drop(pty.master);
    let _ = drain.join();
    (children_cpu() - before, wall)
}

/// User + system CPU of every reaped child so far, seconds.
fn children_cpu() -> f64 {
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        .expect("getrusage");
    let secs = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
    secs(usage.user_time()) + secs(usage.system_time())
}

/// User + system CPU of a live process, seconds.
fn cpu_of(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15 of stat: 12 and 13 after the command's ')'.
    (ticks(11) + ticks(12)) / 100.0
}

/// A server of its own, no database, on `socket`.
fn serve(bin: &Path, dir: &Path, socket: &Path) -> Child {
    let child = Command::new(bin)
        .args(["serve", "--no-db", "--socket"])
        .arg(socket)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_STATE_HOME", dir.join("state"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("lookout serve");
    let end = Instant::now() + Duration::from_secs(30);
    while !socket.exists() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}
