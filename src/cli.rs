//! Command-line interface (clap derive). Validation of what the user typed happens here;
//! building working objects happens in `cmd`.

use crate::bench::model::Directions;
use crate::report::Format;
pub use crate::units::parse_size;
use crate::units::{parse_ceiling, Rate};
use clap::{Args, Parser, Subcommand, ValueEnum, ValueHint};
use std::path::PathBuf;
use std::time::Duration;

pub mod examples;

#[derive(Debug, Parser)]
#[command(name = "sshtune", version, about = "Which SSH cipher is fastest on this hardware, and what limits it", long_about = None, after_help = examples::top_help())]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Colour grades in terminal tables: `auto` on a terminal unless NO_COLOR is set, `always`
    /// (also into a pipe, e.g. for `less -R`), `never`. Files written with --output never
    /// carry colours.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Unit of rates in terminal and Markdown tables; JSON, CSV and HTML keep MiB/s.
    #[arg(long, global = true, value_enum, default_value_t = crate::report::rate_unit::RateUnit::MibS)]
    pub units: crate::report::rate_unit::RateUnit,
    /// The same as --format json, for every command that prints a report.
    #[arg(long, global = true)]
    pub json: bool,
}

/// `--color`, as ls and grep spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure per-cipher throughput up and down, with CPU on both ends and a bottleneck verdict.
    #[command(after_help = examples::help("bench"))]
    Bench(BenchArgs),
    /// Read a server's banner and offered algorithms without logging in.
    #[command(after_help = examples::help("probe"))]
    Probe(ProbeArgs),
    /// Run the native SSH server (built-in benchmark commands only, never a shell).
    #[command(after_help = examples::help("serve"))]
    Serve(ServeArgs),
    /// Turn bench results into an sshd_config drop-in, a client Host block and an rsync line
    /// that the target sshd accepts, fastest cipher first.
    #[command(after_help = examples::help("config"))]
    Config(ConfigArgs),
    /// Raw cost of each SSH cipher and MAC on this CPU, next to `openssl speed` of the same primitive.
    #[command(after_help = examples::help("speed"))]
    Speed(SpeedArgs),
    /// Raw-TCP receiver that bench starts on the server to measure the path's ceiling.
    #[command(hide = true)]
    TcpSink(TcpSinkArgs),
    /// rsync over SSH into a remote directory, measured as one system: throughput, CPU per
    /// stage on both ends, stage ceilings and what to change.
    #[command(after_help = examples::help("pipeline"))]
    Pipeline(PipelineArgs),
    /// Measure dm-crypt: capabilities, kernel cipher speed, and the cipher × layer × test matrix.
    #[command(after_help = examples::help("storage"))]
    Storage(StorageArgs),
    /// Re-render saved JSON reports in any format without measuring; two or more of one kind
    /// are compared row by row.
    #[command(after_help = examples::help("report"))]
    Report(ReportArgs),
    /// Write the man pages or the shell completions into a directory (for packages).
    #[command(hide = true)]
    Generate(GenerateArgs),
}

impl Command {
    /// The command's `--format`, for those that print a report.
    fn format_mut(&mut self) -> Option<&mut Format> {
        match self {
            Command::Bench(a) => Some(&mut a.format),
            Command::Probe(a) => Some(&mut a.format),
            Command::Config(a) => Some(&mut a.format),
            Command::Speed(a) => Some(&mut a.format),
            Command::Pipeline(a) => Some(&mut a.format),
            Command::Storage(a) => Some(&mut a.format),
            Command::Report(a) => Some(&mut a.format),
            Command::Serve(_) | Command::TcpSink(_) | Command::Generate(_) => None,
        }
    }

    /// `--json`: `--format json` for a command that prints a report; a usage error for one
    /// that prints none, or with a `--format` other than json.
    pub fn use_json(&mut self) -> Result<(), String> {
        match self.format_mut() {
            Some(f) if *f == Format::Table || *f == Format::Json => {
                *f = Format::Json;
                Ok(())
            }
            Some(f) => Err(format!("--json conflicts with --format {}", f.as_str())),
            None => Err("--json: this command prints no report".into()),
        }
    }

    /// Whether stdout carries JSON: a failure is then printed there as a JSON object too.
    pub fn prints_json(&mut self) -> bool {
        matches!(self, Command::Bench(a) if a.json_stream)
            || self.format_mut().is_some_and(|f| *f == Format::Json)
    }

    /// `-v` of the ssh options, for commands that start ssh.
    pub fn ssh_verbose(&self) -> u8 {
        match self {
            Command::Bench(a) => a.ssh.verbose,
            Command::Probe(a) => a.ssh.verbose,
            Command::Config(a) => a.ssh.verbose,
            Command::Pipeline(a) => a.ssh.verbose,
            _ => 0,
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// Saved reports (`--format json` of bench, speed, storage or pipeline); `-` reads
    /// standard input. Two or more of one kind: a comparison against the first.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    #[command(flatten)]
    pub out: OutputArgs,
    /// Name of each run in a comparison, in the order of the files (default: what differs
    /// between them among host, kernel, CPU quota and date).
    #[arg(long)]
    pub label: Vec<String>,
    /// Bench reports of different hosts compared row by row, instead of the fleet table (one
    /// line per host: best cipher, MiB/s, verdict, the config line it gets).
    #[arg(long)]
    pub compare: bool,
    /// In a comparison, exit with status 3 when a row of a later run is slower than in the
    /// first by more than PCT and the change is significant (sample ranges apart), listing
    /// those rows on stderr: a nightly regression check.
    #[arg(long, value_name = "PCT", value_parser = crate::report::compare::drops::parse_threshold)]
    pub fail_on_drop: Option<f64>,
}

/// Where a report is written besides stdout: as many files as asked, so one long run gives
/// JSON for scripts and a page for people without measuring twice.
#[derive(Debug, Clone, Default, Args)]
pub struct OutputArgs {
    /// Also write the report to FILE (repeatable). Its format comes from the extension
    /// (.json .csv .md .html .txt/.table); any other name takes --format. Stdout keeps
    /// --format unless a file already receives it. Every FILE is checked writable before
    /// anything is measured.
    #[arg(long, value_name = "FILE")]
    pub output: Vec<PathBuf>,
    /// Write the report as JSON to FILE, whatever its name (repeatable).
    #[arg(long, value_name = "FILE")]
    pub export_json: Vec<PathBuf>,
    /// Write the report as CSV to FILE (repeatable).
    #[arg(long, value_name = "FILE")]
    pub export_csv: Vec<PathBuf>,
    /// Write the report as Markdown to FILE (repeatable).
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Vec<PathBuf>,
    /// Write the report as one self-contained HTML page to FILE (repeatable).
    #[arg(long, value_name = "FILE")]
    pub export_html: Vec<PathBuf>,
}

impl OutputArgs {
    /// Every requested file with its explicit format (`None`: from the extension).
    pub fn requests(&self) -> Vec<(PathBuf, Option<Format>)> {
        let mut all: Vec<(PathBuf, Option<Format>)> =
            self.output.iter().map(|p| (p.clone(), None)).collect();
        for (paths, f) in [
            (&self.export_json, Format::Json),
            (&self.export_csv, Format::Csv),
            (&self.export_markdown, Format::Markdown),
            (&self.export_html, Format::Html),
        ] {
            all.extend(paths.iter().map(|p| (p.clone(), Some(f))));
        }
        all
    }
}

#[derive(Debug, Clone, Args)]
pub struct GenerateArgs {
    pub what: Generated,
    /// Directory to write into (created if missing).
    pub dir: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Generated {
    /// sshtune.1 and one page per subcommand (sshtune-bench.1, ...).
    Man,
    /// bash (sshtune.bash), zsh (_sshtune) and fish (sshtune.fish).
    Completions,
}

/// Destination options, passed to `ssh` exactly as given.
#[derive(Debug, Args, Clone, Default)]
pub struct SshArgs {
    /// Port to connect to on the remote host (ssh -p).
    #[arg(short = 'p', long = "port")]
    pub port: Option<u16>,
    /// User to log in as (ssh -l).
    #[arg(short = 'l', long = "login")]
    pub login: Option<String>,
    /// Identity file (ssh -i).
    #[arg(short = 'i', long = "identity")]
    pub identity: Option<PathBuf>,
    /// Alternative ssh config file (ssh -F).
    #[arg(short = 'F', long = "ssh-config")]
    pub config: Option<PathBuf>,
    /// Extra ssh option, repeatable (ssh -o), e.g. -o ProxyJump=gw.
    #[arg(short = 'o', long = "ssh-option")]
    pub option: Vec<String>,
    /// Connect through this jump host, `[user@]host[:port]`, comma-separated hops (ssh -J;
    /// the same as -o ProxyJump=...).
    #[arg(short = 'J', long = "jump", value_name = "DESTINATION")]
    pub jump: Option<String>,
    /// IPv4 addresses only (ssh -4; -o AddressFamily=inet).
    #[arg(short = '4', long = "ipv4", conflicts_with = "ipv6")]
    pub ipv4: bool,
    /// IPv6 addresses only (ssh -6; -o AddressFamily=inet6).
    #[arg(short = '6', long = "ipv6")]
    pub ipv6: bool,
    /// ssh's own debug output on stderr (ssh -v; repeat for more). The native engine has no
    /// ssh log to show.
    #[arg(short = 'v', long = "verbose", action = clap::ArgAction::Count)]
    pub verbose: u8,
}

impl BenchArgs {
    /// The engine to run, after the defaults described on `--engine`.
    pub fn engine(&self) -> Engine {
        match (self.engine, &self.host) {
            (Some(e), _) => e,
            (None, Some(_)) => Engine::Openssh,
            (None, None) if crate::process::find_program("sshd").is_some() => Engine::Both,
            (None, None) => Engine::Native,
        }
    }
}

impl SshArgs {
    /// What the bench report records of these arguments: `-J`, `-4` and `-6` as the `-o`
    /// options they stand for, so a derived `Host` block carries them too. `-v` is not
    /// recorded: it changes what ssh prints, not where it goes.
    pub fn used(&self) -> crate::bench::model::SshArgsUsed {
        crate::bench::model::SshArgsUsed {
            port: self.port,
            login: self.login.clone(),
            identity: self.identity.as_ref().map(|p| p.display().to_string()),
            ssh_config: self.config.as_ref().map(|p| p.display().to_string()),
            options: self.options(),
        }
    }

    /// `-o` values, then the ones `-J`, `-4` and `-6` stand for (ssh takes the first value
    /// of an option, so an explicit `-o` wins, as it does in ssh).
    fn options(&self) -> Vec<String> {
        let mut v = self.option.clone();
        if let Some(j) = &self.jump {
            v.push(format!("ProxyJump={j}"));
        }
        if self.ipv4 {
            v.push("AddressFamily=inet".into());
        }
        if self.ipv6 {
            v.push("AddressFamily=inet6".into());
        }
        v
    }

    pub fn to_ssh_options(&self) -> Vec<String> {
        let mut v = Vec::new();
        if let Some(c) = &self.config {
            v.extend(["-F".to_string(), c.display().to_string()]);
        }
        if let Some(p) = self.port {
            v.extend(["-p".to_string(), p.to_string()]);
        }
        if let Some(l) = &self.login {
            v.extend(["-l".to_string(), l.clone()]);
        }
        if let Some(i) = &self.identity {
            v.extend(["-i".to_string(), i.display().to_string()]);
        }
        for o in self.options() {
            v.extend(["-o".to_string(), o]);
        }
        v.extend((0..self.verbose.min(3)).map(|_| "-v".to_string()));
        v
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Engine {
    /// The system `ssh` client against the server's sshd.
    Openssh,
    /// sshtune's own SSH client (against `sshtune serve`, or any sshd with a shell).
    Native,
    /// Both engines, rows side by side.
    Both,
}

#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// Destination as ssh takes it (host, user@host or a ~/.ssh/config alias). Omitted: a
    /// private sshd on 127.0.0.1 with temporary keys, removed afterwards.
    #[arg(value_hint = ValueHint::Hostname)]
    pub host: Option<String>,
    #[command(flatten)]
    pub ssh: SshArgs,
    /// Ciphers to measure (comma-separated). Default: the server's offer that the local ssh supports.
    #[arg(long, value_delimiter = ',')]
    pub ciphers: Vec<String>,
    /// MACs to pair with non-AEAD ciphers (comma-separated). Default: the one the client would negotiate.
    #[arg(long, value_delimiter = ',')]
    pub macs: Vec<String>,
    /// Timed samples per cipher and direction with --thorough; by default rows below the leader
    /// stop after two and contenders get up to two more than this.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,
    /// Untimed warm-up transfers before the samples (adaptive sizing always does at least one).
    #[arg(long, default_value_t = 1)]
    pub warmup: u32,
    /// Fixed bytes per transfer (e.g. 64M, 1G). Default: grow until a transfer lasts --min-duration.
    #[arg(long, value_parser = parse_size)]
    pub size: Option<u64>,
    /// Shortest transfer --thorough sizing aims for (e.g. 2s, 500ms); by default samples
    /// start at 0.25 s (or four channel windows) and lengthen up to this only while they disagree.
    #[arg(long, default_value = "2s", value_name = "DURATION", value_parser = crate::units::parse_duration)]
    pub min_duration: f64,
    /// The reference run: --repeat samples of at least --min-duration each for every row and a
    /// fixed warm-up, no racing (slower; what the default mode is checked against). Default:
    /// samples sized by stability (starting at 0.25 s) and rows whose whole range lies below
    /// the leader's stopped after two samples.
    #[arg(long)]
    pub thorough: bool,
    /// The default mode; accepted so scripts written for it keep working (no effect).
    #[arg(long, hide = true, conflicts_with = "thorough")]
    pub adaptive: bool,
    /// Stop sampling contenders once the run has lasted this long (e.g. 30s, 2m); every row
    /// still gets its first samples. Not with --thorough.
    #[arg(long, value_parser = crate::units::parse_duration, conflicts_with = "thorough", value_name = "DURATION")]
    pub max_time: Option<f64>,
    #[arg(long, value_enum, default_value_t = Directions::Both)]
    pub direction: Directions,
    /// Which SSH implementation carries the transfers. Default: `openssh` for a HOST; with no
    /// HOST, `both` when an OpenSSH sshd is installed, else `native` alone.
    #[arg(long, value_enum)]
    pub engine: Option<Engine>,
    /// Also measure each row as N transfers at once over N connections (OpenSSH engine), with
    /// the gain over one; `auto`: the server's online cores, at most 8.
    #[arg(long, default_value = "1", value_name = "N|auto")]
    pub streams: crate::bench::model::StreamsAsked,
    /// Native engine: largest SSH data packet payload we send and accept (e.g. 32K; 1K–128K).
    #[arg(long, value_parser = parse_packet_size)]
    pub packet_size: Option<u32>,
    /// Native engine: channel receive window we grant (e.g. 8M; 64K–1G). OpenSSH uses 2 MiB.
    #[arg(long, value_parser = parse_window)]
    pub window: Option<u32>,
    #[arg(long, help = THREADS_HELP, default_value_t = 1,
          value_parser = clap::value_parser!(u8).range(1..=2))]
    pub threads: u8,
    /// known_hosts file the native engine checks the server's key against, instead of
    /// `UserKnownHostsFile` from `ssh -G` (global files and StrictHostKeyChecking still apply).
    #[arg(long)]
    pub known_hosts: Option<PathBuf>,
    /// Raw-TCP ceiling of the path, measured elsewhere, for the network verdict: a rate per
    /// second (`940Mbit`, `1Gbit` = bits, SI; `117MB` = bytes, SI; `110MiB` = bytes, binary; a
    /// bare number is MiB/s), or `@FILE`, an `iperf3 -J` report (its
    /// end.sum_received.bits_per_second is used).
    #[arg(long, conflicts_with = "no_ceiling", value_parser = parse_ceiling, value_name = "RATE|@FILE")]
    pub ceiling: Option<Rate>,
    /// Do not measure the raw-TCP ceiling (no receiver is started on the server); verdicts
    /// then rest on CPU figures and the path inference.
    #[arg(long, alias = "no-ceilings")]
    pub no_ceiling: bool,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    #[command(flatten)]
    pub out: OutputArgs,
    /// Print the evidence behind each verdict (CPU %, quota, ceiling, ratio).
    #[arg(long)]
    pub explain: bool,
    /// One JSON object per line on stdout as the run goes, as iperf3's --json-stream: each
    /// sample (`"event": "sample"`), each engine's rows (`"row"`), and the whole report last
    /// (`"end"`). Files asked with --output are written as usual.
    #[arg(long, conflicts_with_all = ["format", "explain"])]
    pub json_stream: bool,
    /// No progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,
    /// Path of sshtune on the server, for measuring the raw-TCP ceiling (default: found in the
    /// remote PATH, if there).
    #[arg(long, value_name = "PATH")]
    pub remote_sshtune: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct TcpSinkArgs {
    /// Address to listen on. Default: the server address of the ssh connection
    /// (SSH_CONNECTION), else 127.0.0.1.
    #[arg(long)]
    pub listen: Option<std::net::IpAddr>,
    /// Secret the sender must present first; other connections are ignored.
    #[arg(long)]
    pub token: String,
    /// Connections to count before exiting.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10))]
    pub count: u32,
    /// Give up after this long in total (e.g. 30s; 1s–10m).
    #[arg(long, default_value = "30s", value_name = "DURATION", value_parser = parse_sink_timeout)]
    pub timeout: Duration,
}

#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// Host (or user@host, or an ssh config alias).
    #[arg(value_hint = ValueHint::Hostname)]
    pub host: String,
    #[command(flatten)]
    pub ssh: SshArgs,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    #[command(flatten)]
    pub out: OutputArgs,
    /// Exit with status 3 when the server offers a cipher or MAC of this grade or worse
    /// (after printing the report).
    #[arg(long, value_enum, value_name = "GRADE")]
    pub fail_on: Option<FailOn>,
    /// How long to wait for the server at each step (e.g. 10s, 500ms; 1s–1h).
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = parse_step_timeout)]
    pub timeout: Duration,
}

/// The lowest grade `probe --fail-on` tolerates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    /// Fail when anything offered is graded broken.
    Broken,
    /// Fail when anything offered is graded weak or broken.
    Weak,
}

impl FailOn {
    /// The best grade that still fails.
    pub fn threshold(self) -> ciphers::Grade {
        match self {
            FailOn::Broken => ciphers::Grade::Broken,
            FailOn::Weak => ciphers::Grade::Weak,
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address and port to listen on. Anything but loopback exposes the server (a warning is printed).
    #[arg(long, default_value = "127.0.0.1:2222")]
    pub listen: std::net::SocketAddr,
    /// Public keys allowed to log in. Default: ~/.ssh/authorized_keys.
    #[arg(long)]
    pub authorized_keys: Option<PathBuf>,
    /// User name a client may log in as (repeatable). Default: the account serve runs as.
    #[arg(long = "user", value_name = "NAME", value_parser = parse_user_name)]
    pub users: Vec<String>,
    /// Host key (OpenSSH ed25519 format); created on first use. Default: in the user's state dir.
    #[arg(long)]
    pub host_key: Option<PathBuf>,
    /// Logged-in connections served at once; more are refused.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub max_sessions: u32,
    /// Unauthenticated connections: from START on, refuse new ones with RATE% chance, rising to
    /// 100% at FULL (as sshd's MaxStartups).
    #[arg(long, default_value = "10:30:100", value_name = "START:RATE:FULL")]
    pub max_startups: crate::serve::limits::Startups,
    /// Unauthenticated connections from one address at once.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub per_source_max_startups: u32,
    /// Time from connect to the end of authentication (as sshd's LoginGraceTime; 1s–1h).
    #[arg(long, default_value = "30s", value_name = "DURATION", value_parser = parse_step_timeout)]
    pub login_grace_time: Duration,
    /// How long a connection may stay silent (or not take our data) before it is dropped
    /// (at least 1s).
    #[arg(long, default_value = "5m", value_name = "DURATION", value_parser = parse_idle_timeout)]
    pub idle_timeout: Duration,
    /// Also offer insecure legacy ciphers (arcfour*, blowfish-cbc, cast128-cbc, 3des-cbc, none).
    #[arg(long)]
    pub allow_legacy: bool,
    /// Rekey after this much data in one direction (e.g. 1M), below the cipher's own limit.
    #[arg(long, value_parser = parse_size)]
    pub rekey_limit: Option<u64>,
    #[arg(long, help = THREADS_HELP, default_value_t = 1,
          value_parser = clap::value_parser!(u8).range(1..=2))]
    pub threads: u8,
}

/// `--threads` of the native engine and `serve`, one text for both.
const THREADS_HELP: &str = "Native engine and serve: threads that seal what we send. 2 computes \
    the keystream of aes*-ctr and chacha20-poly1305 ahead on a second core (other ciphers \
    ignore it); off (1) by default: it showed no reliable gain in the measurements (docs/bench-json.md), and a loss where the helper shares a CPU \
    quota with the connection";

#[derive(Debug, Clone, Args)]
pub struct ConfigArgs {
    /// A bench report (`sshtune bench --format json --output FILE`); `-` reads standard input.
    /// From a report of both engines, the OpenSSH engine's rows are used. Several reports of
    /// one host are pooled: each row's samples are those of every run.
    #[arg(long, num_args = 1.., conflicts_with = "host", required_unless_present = "host")]
    pub from: Vec<PathBuf>,
    /// Measure this destination first (as `sshtune bench HOST` does).
    #[arg(long, value_hint = ValueHint::Hostname)]
    pub host: Option<String>,
    #[command(flatten)]
    pub ssh: SshArgs,
    /// Ciphers to measure with --host (comma-separated). Default: all the server offers.
    #[arg(long, value_delimiter = ',', requires = "host")]
    pub ciphers: Vec<String>,
    /// Fixed bytes per transfer with --host (e.g. 64M). Default: adaptive.
    #[arg(long, value_parser = parse_size, requires = "host")]
    pub size: Option<u64>,
    /// Which ciphers may be recommended.
    #[arg(long, value_enum, default_value_t = crate::config::policy::Policy::Secure)]
    pub policy: crate::config::policy::Policy,
    /// Order by throughput in this direction (both: the slower of the two).
    #[arg(long, value_enum, default_value_t = Directions::Both)]
    pub direction: Directions,
    /// The target sshd's OpenSSH release (e.g. 7.4). Default: from the bench's server banner.
    #[arg(long, value_parser = parse_openssh_version)]
    pub openssh_version: Option<ciphers::OpenSshVersion>,
    /// Host pattern for the client block and rsync line. Default: the bench's host.
    #[arg(long)]
    pub client_host: Option<String>,
    /// Print the sshd_config drop-in (default: all three outputs).
    #[arg(long)]
    pub server: bool,
    /// Print the ssh_config Host block.
    #[arg(long)]
    pub client: bool,
    /// Print the rsync command line.
    #[arg(long)]
    pub rsync: bool,
    /// Validate the drop-in with the real `sshd -t` on a temporary config. Rejected: nothing
    /// on stdout, sshd's message on stderr, exit status 3.
    #[arg(long)]
    pub check: bool,
    /// Install the drop-in at PATH (e.g. /etc/ssh/sshd_config.d/50-sshtune.conf): backup,
    /// atomic write, `sshd -t` on the full config, roll back if it fails.
    #[arg(long, value_name = "PATH")]
    pub apply: Option<PathBuf>,
    /// The main sshd config --apply validates.
    #[arg(long, default_value = "/etc/ssh/sshd_config")]
    pub sshd_config: PathBuf,
    /// The sshd binary for --check and --apply. Default: found in PATH and sbin.
    #[arg(long)]
    pub sshd: Option<PathBuf>,
    /// No bench progress on stderr.
    /// `table`: the summary on stderr and the lines on stdout; `json`: one object on stdout
    /// with the line, why its first cipher is first, what was dropped and the three outputs.
    #[arg(long, value_enum, default_value_t = Format::Table, value_parser = config_format)]
    pub format: Format,
    #[arg(short, long)]
    pub quiet: bool,
}

/// `config` prints lines, not a table of rows: table (its text) and json only.
fn config_format(s: &str) -> Result<Format, String> {
    match <Format as ValueEnum>::from_str(s, true)? {
        f @ (Format::Table | Format::Json) => Ok(f),
        f => Err(format!("config prints table or json, not {}", f.as_str())),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CryptoChoice {
    Openssl,
    Rust,
    Both,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SpeedRows {
    /// Each cipher alone (AEADs seal whole SSH packets).
    Cipher,
    /// Each MAC alone.
    Mac,
    /// Cipher + MAC sealing SSH packets.
    Pair,
}

#[derive(Debug, Clone, Args)]
pub struct SpeedArgs {
    /// Ciphers to time (comma-separated SSH names). Default: every cipher in the catalog.
    #[arg(long, value_delimiter = ',')]
    pub ciphers: Vec<String>,
    /// MACs to time alone and to pair with each non-AEAD cipher. Default: every MAC alone,
    /// pairs with umac-64-etm@openssh.com (OpenSSH's first choice).
    #[arg(long, value_delimiter = ',')]
    pub macs: Vec<String>,
    /// Which kinds of rows to measure (comma-separated). Default: all.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub rows: Vec<SpeedRows>,
    /// Crypto backend(s) to time.
    #[arg(long, value_enum, default_value_t = CryptoChoice::Both)]
    pub crypto: CryptoChoice,
    /// CPU time a sample may last (e.g. 1s, 500ms): samples start at 0.1 s and double while they disagree
    /// by more than 5% (one outlier among two extra samples is set aside), up to this. The
    /// `openssl speed` reference runs once for 1 s.
    #[arg(long, default_value = "1s", value_name = "DURATION", value_parser = parse_min_time)]
    pub min_time: f64,
    /// Timed samples per row; the report shows their median and range.
    #[arg(long, alias = "samples", default_value_t = 3, value_parser = clap::value_parser!(u32).range(3..=100))]
    pub repeat: u32,
    /// Skip the `openssl speed` reference column.
    #[arg(long)]
    pub no_reference: bool,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    #[command(flatten)]
    pub out: OutputArgs,
    /// No progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn parse_openssh_version(s: &str) -> Result<ciphers::OpenSshVersion, String> {
    ciphers::OpenSshVersion::parse(s)
        .ok_or_else(|| format!("not an OpenSSH version: {s:?} (expected e.g. 9.2 or 7.4p1)"))
}

fn parse_min_time(s: &str) -> Result<f64, String> {
    let v = crate::units::parse_duration(s)?;
    if !(0.001..=600.0).contains(&v) {
        return Err("--min-time must be between 1ms and 10m".into());
    }
    Ok(v)
}

#[derive(Debug, Clone, Args)]
pub struct PipelineArgs {
    /// `HOST:/dest/dir` (host as ssh takes it). A bare `/dir` or nothing: a private sshd on
    /// 127.0.0.1 writing into DIR (default: a temp directory), removed afterwards.
    pub destination: Option<String>,
    #[command(flatten)]
    pub ssh: SshArgs,
    /// SSH ciphers to run rsync with (comma-separated). Default: the fastest `ok`-graded
    /// ciphers by an SSH-only bench in this run, plus the one ssh picks by default.
    #[arg(long, value_delimiter = ',')]
    pub ciphers: Vec<String>,
    /// How many ciphers the default choice keeps.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub max_ciphers: u32,
    /// Generated dataset shape (incompressible random data).
    #[arg(long, value_enum, default_value_t = crate::pipeline::dataset::DatasetKind::Big)]
    pub dataset: crate::pipeline::dataset::DatasetKind,
    /// Generated dataset size.
    #[arg(long, value_parser = parse_size, default_value = "256M")]
    pub size: u64,
    /// Transfer this directory (or file) instead of generated data.
    #[arg(long, conflicts_with_all = ["dataset", "size"])]
    pub source: Option<PathBuf>,
    /// rsync variants (comma-separated).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "whole-file,delta,delta-md5,compress"
    )]
    pub variants: Vec<crate::pipeline::rsync::Variant>,
    /// Timed runs per cipher and variant (and per stage ceiling).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: u32,
    /// rsync program on the remote side (rsync --rsync-path).
    #[arg(long, default_value = "rsync")]
    pub rsync_path: String,
    /// Sampling interval of the CPU and I/O readers (e.g. 200ms, 1s; 50ms–5s).
    #[arg(long, default_value = "200ms", value_name = "DURATION", value_parser = parse_interval)]
    pub interval: Duration,
    /// The interval in milliseconds, as a bare number (kept for scripts; see --interval).
    #[arg(long, hide = true, conflicts_with = "interval", value_parser = clap::value_parser!(u64).range(50..=5000))]
    pub interval_ms: Option<u64>,
    /// Do not measure stage ceilings (SSH-only, disk-only, rsync-local); no verdict then.
    #[arg(long, alias = "no-ceilings")]
    pub no_ceiling: bool,
    /// Leave the files this run wrote on the remote side.
    #[arg(long)]
    pub keep: bool,
    /// Also measure SSH cipher × LUKS setting: scratch LUKS2 volumes on a loop file beside
    /// the destination directory (root; a directory on this machine), removed afterwards.
    #[arg(long)]
    pub luks: bool,
    /// LUKS settings to compare (comma-separated names: current, xts256, xts512, second,
    /// xts256-4k, xts256-nowq, xts256-samecpu). Default: all the machine has.
    #[arg(long, value_delimiter = ',', requires = "luks")]
    pub luks_settings: Vec<String>,
    /// Run every LUKS setting end to end, also those the model says cannot change the result.
    #[arg(long, requires = "luks")]
    pub no_trim: bool,
    /// With --luks: end the run within this time (e.g. 10m); the LUKS matrix is cut to what
    /// fits (fewer settings first, then fewer copies) and the report names what it left out.
    #[arg(long, requires = "luks", value_name = "DURATION", value_parser = crate::units::parse_duration)]
    pub max_time: Option<f64>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    #[command(flatten)]
    pub out: OutputArgs,
    /// No progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Debug, Clone, Args)]
pub struct StorageArgs {
    /// Which matrix: the seed's tables, a default that finishes in minutes, or a quick look.
    #[arg(long, value_enum, default_value_t = crate::storage::plan::Preset::Default)]
    pub preset: crate::storage::plan::Preset,
    /// Shorthand for --preset quick.
    #[arg(long)]
    pub quick: bool,
    /// Size of the loop file (default 1G; 256M with --quick).
    #[arg(long, value_parser = parse_size)]
    pub size: Option<u64>,
    /// Directory for the loop file and mount point (default: the system temp directory).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Use this block device instead of a loop file. Everything on it is destroyed.
    #[arg(long)]
    pub device: Option<PathBuf>,
    /// Confirms that --device may be overwritten.
    #[arg(long, requires = "device")]
    pub destroy_data: bool,
    /// Overwrite --device even if it carries a filesystem or partition table (never when mounted or in use).
    #[arg(long, requires = "destroy_data")]
    pub force: bool,
    /// CPU-spinning threads running during the matrix (the seed's loaded-CPU table).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=1024))]
    pub load: u32,
    /// Cipher specs instead of the preset's, e.g. aes-xts-plain64:512,aes-cbc-essiv:sha256:256.
    #[arg(long, value_delimiter = ',')]
    pub ciphers: Vec<String>,
    /// Sector sizes instead of the preset's (512, 4096...).
    #[arg(long, value_delimiter = ',')]
    pub sector_sizes: Vec<u32>,
    /// dm-crypt queueing settings instead of the preset's.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub perf: Vec<crate::storage::plan::Perf>,
    /// Layers instead of the preset's.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub layers: Vec<crate::storage::plan::Layer>,
    /// Tests instead of the preset's (e.g. wr-s,rd for the seed's file-copy table).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub tests: Vec<crate::storage::plan::Test>,
    /// Format LUKS2 headers instead of header-less plain mappings (same data path).
    #[arg(long, alias = "luks")]
    pub luks2: bool,
    /// Samples per test.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: Option<u32>,
    /// Upper bound of each fio run (e.g. 20s; 1s–1h; default 20s, 5s with --quick).
    #[arg(long, value_name = "DURATION", value_parser = parse_step_timeout)]
    pub fio_runtime: Option<Duration>,
    /// Only capabilities and cipher speed; no mapping is made.
    #[arg(long)]
    pub no_matrix: bool,
    /// Skip the cipher speed layer.
    #[arg(long)]
    pub no_speed: bool,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    #[command(flatten)]
    pub out: OutputArgs,
    /// No progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

/// A duration flag's value (`30s`, `500ms`, `2m`; a bare number is seconds) within `lo..=hi` seconds.
fn duration_within(s: &str, lo: f64, hi: f64, range: &str) -> Result<Duration, String> {
    let v = crate::units::parse_duration(s)?;
    if !(lo..=hi).contains(&v) {
        return Err(format!("{s:?} is outside {range}"));
    }
    Ok(Duration::from_secs_f64(v))
}

fn parse_step_timeout(s: &str) -> Result<Duration, String> {
    duration_within(s, 1.0, 3600.0, "1s–1h")
}

fn parse_sink_timeout(s: &str) -> Result<Duration, String> {
    duration_within(s, 1.0, 600.0, "1s–10m")
}

fn parse_idle_timeout(s: &str) -> Result<Duration, String> {
    duration_within(s, 1.0, f64::from(u32::MAX), "1s and more")
}

fn parse_interval(s: &str) -> Result<Duration, String> {
    duration_within(s, 0.05, 5.0, "50ms–5s")
}

fn parse_packet_size(s: &str) -> Result<u32, String> {
    let v = parse_size(s)?;
    if !(1024..=128 * 1024).contains(&v) {
        return Err("--packet-size must be between 1K and 128K".into());
    }
    Ok(v as u32)
}

fn parse_window(s: &str) -> Result<u32, String> {
    let v = parse_size(s)?;
    if !(64 * 1024..=1 << 30).contains(&v) {
        return Err("--window must be between 64K and 1G".into());
    }
    Ok(v as u32)
}

/// A login name for `serve --user`: not empty, no whitespace, control characters or `:`.
pub fn parse_user_name(s: &str) -> Result<String, String> {
    if s.is_empty()
        || s.chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == ':')
    {
        return Err(format!("{s:?} is not a user name"));
    }
    Ok(s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
