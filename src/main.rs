use clap::Parser;
use sshtune::cli::{Cli, Command};
use std::panic::{self, AssertUnwindSafe};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut command = cli.command;
    if cli.json {
        if let Err(e) = command.use_json() {
            eprintln!("sshtune: {e}");
            return ExitCode::from(sshtune::exit::USAGE);
        }
    }
    let json = command.prints_json();
    sshtune::cmd::apply_global(cli.color, cli.units, command.ssh_verbose());
    quiet_on_closed_stdout();
    let result = panic::catch_unwind(AssertUnwindSafe(|| run(command)));
    match result {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            // One line: the cause chain joined, as the user needs to act on it.
            eprintln!("sshtune: {e:#}");
            let status = sshtune::exit::code_for(&e);
            if json {
                // A script reading JSON still gets JSON, as iperf3 -J does.
                let error = serde_json::json!({ "error": format!("{e:#}"), "status": status });
                println!("{error}");
            }
            ExitCode::from(status)
        }
        // The reader of stdout went away (`sshtune report x.json | head -1`): what it wanted
        // was printed, and the unwinding ran every clean-up guard on its way here.
        Err(payload) if is_closed_stdout(payload.as_ref()) => ExitCode::SUCCESS,
        Err(payload) => panic::resume_unwind(payload),
    }
}

fn run(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Bench(args) => sshtune::cmd::bench::run(args),
        Command::Probe(args) => sshtune::cmd::probe::run(args),
        Command::Serve(args) => sshtune::cmd::serve::run(args),
        Command::Config(args) => sshtune::cmd::config::run(args),
        Command::Speed(args) => sshtune::cmd::speed::run(args),
        Command::TcpSink(args) => sshtune::cmd::tcp_sink::run(args),
        Command::Pipeline(args) => sshtune::cmd::pipeline::run(args),
        Command::Storage(args) => sshtune::cmd::storage::run(args),
        Command::Report(args) => sshtune::cmd::report::run(args),
        Command::Generate(args) => sshtune::cmd::generate::run(args),
    }
}

/// Rust ignores SIGPIPE, so `print!` into a pipe whose reader has exited panics with "failed
/// printing to stdout: Broken pipe". That panic is not an error of ours: its message is kept off
/// stderr here and `main` turns it into a quiet exit 0, as `cat file | head -1` ends. Every other
/// panic keeps the default report.
fn quiet_on_closed_stdout() {
    let default = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        if !is_closed_stdout(info.payload()) {
            default(info);
        }
    }));
}

fn is_closed_stdout(payload: &(dyn std::any::Any + Send)) -> bool {
    let text = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("");
    text.starts_with("failed printing to stdout") && text.contains("Broken pipe")
}
