//! `corral budget ...` and `corral showback`: your tenant's monthly budget and what
//! its clusters cost per user and per template in a month (tenant admins;
//! docs/cost.md).

use std::process::ExitCode;

use api_types::{money, BudgetRequest, BudgetView, ShowbackLineView, ShowbackView};
use clap::{Args, Subcommand};

use super::remote::{print_json, OutputArgs};

#[derive(Debug, Args)]
pub struct BudgetArgs {
    #[command(subcommand)]
    pub command: BudgetCommand,
}

#[derive(Debug, Subcommand)]
pub enum BudgetCommand {
    /// The budget and where this month stands.
    Show(OutputArgs),
    /// Set the monthly budget and what a create or grow over it gets.
    Set {
        /// The most the tenant's clusters may cost in a calendar month (UTC).
        #[arg(long, value_name = "AMOUNT")]
        monthly: f64,
        /// `refuse` (default) or `approval` (held for a tenant admin).
        #[arg(long, value_name = "ACTION")]
        action: Option<String>,
    },
    /// Remove the budget.
    Clear,
}

#[derive(Debug, Args)]
pub struct ShowbackArgs {
    /// `YYYY-MM` (UTC) [default: this month].
    #[arg(long)]
    pub month: Option<String>,
    /// Print CSV (a header row, then `month,by,name,cost` lines).
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

pub async fn run_budget(args: BudgetArgs) -> anyhow::Result<ExitCode> {
    let client = super::remote::signed_in()?;
    let (view, json): (BudgetView, bool) = match args.command {
        BudgetCommand::Show(output) => (client.budget().await?, output.json),
        BudgetCommand::Set { monthly, action } => (
            client
                .set_budget(&BudgetRequest {
                    monthly_budget: Some(monthly),
                    budget_action: action,
                })
                .await?,
            false,
        ),
        BudgetCommand::Clear => (client.set_budget(&BudgetRequest::default()).await?, false),
    };
    if json {
        print_json(&serde_json::to_value(&view)?);
        return Ok(ExitCode::SUCCESS);
    }
    match view.monthly_budget {
        Some(budget) => println!(
            "monthly budget {} (over it: {})",
            money(budget),
            view.budget_action
        ),
        None => println!("no monthly budget"),
    }
    println!(
        "{}: spent {} so far; live clusters {} per hour; projected {}",
        view.month,
        money(view.spent_this_month),
        money(view.per_hour),
        money(view.projected_month)
    );
    Ok(ExitCode::SUCCESS)
}

pub async fn run_showback(args: ShowbackArgs) -> anyhow::Result<ExitCode> {
    let client = super::remote::signed_in()?;
    let path = match &args.month {
        Some(month) => format!("/api/v1/showback?month={month}"),
        None => "/api/v1/showback".to_owned(),
    };
    let view: ShowbackView = client.get(&path).await?;
    if args.csv {
        print!("{}", view.to_csv());
    } else if args.output.json {
        print_json(&serde_json::to_value(&view)?);
    } else {
        println!("{}: total {}", view.month, money(view.total));
        print_table("user", &view.per_user);
        print_table("template", &view.per_template);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_table(by: &str, lines: &[ShowbackLineView]) {
    println!("per {by}:");
    if lines.is_empty() {
        println!("  (nothing priced)");
    }
    for line in lines {
        println!("  {:<24} {:>12}", line.name, money(line.cost));
    }
}
