use clap::Parser;
use sshtune::cli::{Cli, Command};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
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
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line: the cause chain joined, as the user needs to act on it.
            eprintln!("sshtune: {e:#}");
            ExitCode::from(sshtune::exit::code_for(&e))
        }
    }
}
