//! `corral completions SHELL` and `corral man`: shell completion scripts and manual
//! pages, both generated from the same clap definitions the binary parses with, so
//! they always match the installed version.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::Cli;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for; its script goes to standard output.
    ///
    /// For bash: `corral completions bash > /etc/bash_completion.d/corral`.
    #[arg(value_enum)]
    pub shell: Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write a page for every command (`corral.1`, `corral-cluster.1`, ...) into this
    /// directory instead of printing `corral.1` to standard output.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

pub fn completions(args: CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut command = Cli::command();
    let name = command.get_name().to_owned();
    clap_complete::generate(args.shell, &mut command, name, &mut std::io::stdout());
    Ok(ExitCode::SUCCESS)
}

pub fn man(args: ManArgs) -> anyhow::Result<ExitCode> {
    let command = Cli::command();
    match args.out_dir {
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            clap_mangen::generate_to(command, &dir)
                .with_context(|| format!("cannot write manual pages to {}", dir.display()))?;
            println!("manual pages written to {}", dir.display());
        }
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(command).render(&mut page)?;
            std::io::stdout()
                .write_all(&page)
                .context("cannot write the manual page")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
