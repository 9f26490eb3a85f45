//! The `corral` binary. Errors end here: printed as one line, exit code 1.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = server::cli::Cli::parse();
    match server::cli::run(cli) {
        Ok(code) => code,
        Err(err) => {
            // `{:#}` puts the whole cause chain on one line, without a backtrace.
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
