//! `corral group ...` and `corral approval ...`: your tenant's user groups, its
//! approval rules, and the creates and grows waiting for a decision (issue 44).

use std::process::ExitCode;

use api_types::{
    ApprovalDenial, ApprovalRuleRequest, ApprovalRuleView, ApprovalView, GroupMemberRequest,
    GroupRequest, GroupView,
};
use clap::{Args, Subcommand};

use super::remote::{print_json, OutputArgs};

#[derive(Debug, Args)]
pub struct GroupArgs {
    #[command(subcommand)]
    pub command: GroupCommand,
}

#[derive(Debug, Subcommand)]
pub enum GroupCommand {
    /// Add a group (templates may be limited to it with "groups": [NAME]).
    Add { name: String },
    /// List your tenant's groups and their members.
    List(OutputArgs),
    /// Remove a group and its memberships.
    Remove { name: String },
    /// Show a group's members, or add or remove one.
    Members {
        name: String,
        #[command(subcommand)]
        change: Option<MemberChange>,
    },
}

#[derive(Debug, Subcommand)]
pub enum MemberChange {
    /// Put a user into the group.
    Add { username: String },
    /// Take a user out of the group.
    Remove { username: String },
}

#[derive(Debug, Args)]
pub struct ApprovalArgs {
    #[command(subcommand)]
    pub command: ApprovalCommand,
}

#[derive(Debug, Subcommand)]
pub enum ApprovalCommand {
    /// Approval rules: which creates and grows wait for an approver.
    #[command(subcommand)]
    Rule(RuleCommand),
    /// Requests: pending first (approvers see the tenant's, others their own).
    List {
        /// Only those still waiting.
        #[arg(long)]
        pending: bool,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Approve a request: its job is submitted.
    Approve { id: String },
    /// Deny a request with a reason the requester sees.
    Deny {
        id: String,
        #[arg(long)]
        reason: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum RuleCommand {
    /// Add a rule: exactly one of --size-above, --template, --provider, --cost-above.
    Add(RuleAddArgs),
    /// List the rules, oldest first (the first that matches holds a request).
    List(OutputArgs),
    /// Remove a rule (requests it held keep waiting).
    Remove { id: String },
}

#[derive(Debug, Args)]
// Exactly one of the three says what the rule matches; the others are its options.
#[group(skip)]
#[command(group(
    clap::ArgGroup::new("matches")
        .required(true)
        .args(["size_above", "template", "provider", "cost_above"])
))]
pub struct RuleAddArgs {
    /// Clusters that would have more than N nodes.
    #[arg(long, value_name = "N")]
    pub size_above: Option<String>,
    /// Clusters of this template.
    #[arg(long, value_name = "TEMPLATE")]
    pub template: Option<String>,
    /// Clusters on this provider.
    #[arg(long, value_name = "PROVIDER")]
    pub provider: Option<String>,
    /// Clusters whose estimated cost per month (730 h) after the create or grow is
    /// above X (docs/cost.md).
    #[arg(long, value_name = "X")]
    pub cost_above: Option<String>,
    /// A group whose members may decide too (tenant admins always may).
    #[arg(long, value_name = "GROUP")]
    pub approvers: Option<String>,
    /// Seconds a request waits before it expires [default: 86400].
    #[arg(long, value_name = "SECONDS")]
    pub window: Option<u64>,
}

pub async fn run_group(args: GroupArgs) -> anyhow::Result<ExitCode> {
    let client = super::remote::signed_in()?;
    match args.command {
        GroupCommand::Add { name } => {
            let group = client.add_group(&GroupRequest { name }).await?;
            println!("group {} added", group.name);
        }
        GroupCommand::List(output) => {
            let groups = client.groups().await?;
            if output.json {
                print_json(&serde_json::to_value(&groups)?);
            } else if groups.is_empty() {
                println!("no groups");
            } else {
                for group in &groups {
                    println!("{}  members: {}", group.name, members(&group.members));
                }
            }
        }
        GroupCommand::Remove { name } => {
            client.remove_group(&name).await?;
            println!("group {name} removed");
        }
        GroupCommand::Members { name, change } => {
            let group: GroupView = match change {
                None => client.group(&name).await?,
                Some(MemberChange::Add { username }) => {
                    client
                        .add_group_member(&name, &GroupMemberRequest { username })
                        .await?
                }
                Some(MemberChange::Remove { username }) => {
                    client.remove_group_member(&name, &username).await?
                }
            };
            println!("{}  members: {}", group.name, members(&group.members));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn members(names: &[String]) -> String {
    if names.is_empty() {
        "-".to_owned()
    } else {
        names.join(", ")
    }
}

pub async fn run_approval(args: ApprovalArgs) -> anyhow::Result<ExitCode> {
    let client = super::remote::signed_in()?;
    match args.command {
        ApprovalCommand::Rule(RuleCommand::Add(add)) => {
            let (kind, value) = match (add.size_above, add.template, add.provider, add.cost_above) {
                (Some(nodes), _, _, _) => ("size-above", nodes),
                (_, Some(template), _, _) => ("template", template),
                (_, _, Some(provider), _) => ("provider", provider),
                (_, _, _, Some(amount)) => ("cost-above", amount),
                // clap's group requires one of them.
                (None, None, None, None) => {
                    anyhow::bail!("give --size-above, --template, --provider or --cost-above")
                }
            };
            let request = ApprovalRuleRequest {
                kind: kind.to_owned(),
                value,
                approvers: add.approvers,
                window_secs: add.window,
            };
            let rule: ApprovalRuleView = client.add_approval_rule(&request).await?;
            println!("rule {} added: {}", rule.id, describe_rule(&rule));
        }
        ApprovalCommand::Rule(RuleCommand::List(output)) => {
            let rules = client.approval_rules().await?;
            if output.json {
                print_json(&serde_json::to_value(&rules)?);
            } else if rules.is_empty() {
                println!("no approval rules");
            } else {
                for rule in &rules {
                    println!("{}  {}", rule.id, describe_rule(rule));
                }
            }
        }
        ApprovalCommand::Rule(RuleCommand::Remove { id }) => {
            client.remove_approval_rule(&id).await?;
            println!("rule {id} removed");
        }
        ApprovalCommand::List { pending, output } => {
            let requests = client.approvals(pending).await?;
            if output.json {
                print_json(&serde_json::to_value(&requests)?);
            } else if requests.is_empty() {
                println!("no approval requests");
            } else {
                for request in &requests {
                    print_request(request);
                }
            }
        }
        ApprovalCommand::Approve { id } => {
            let submitted = client.approve(&id).await?;
            println!(
                "approved: cluster {} is {}; job {}",
                submitted.cluster.name, submitted.cluster.state, submitted.job_id
            );
        }
        ApprovalCommand::Deny { id, reason } => {
            let request = client.deny(&id, &ApprovalDenial { reason }).await?;
            println!(
                "denied: {} of cluster {}",
                request.operation, request.cluster
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn describe_rule(rule: &ApprovalRuleView) -> String {
    format!(
        "{}; approvers: tenant admins{}; expires after {} s",
        rule.description,
        rule.approvers
            .as_ref()
            .map(|group| format!(", group {group}"))
            .unwrap_or_default(),
        rule.window_secs
    )
}

/// A request in a few lines: what it would do, why it waits, how it ended.
pub fn print_request(request: &ApprovalView) {
    let what = match request.operation {
        api_types::ApprovalOperation::Create => format!("{} node(s)", request.size),
        api_types::ApprovalOperation::Grow => {
            format!("+{} to {} node(s)", request.growth, request.size)
        }
    };
    println!(
        "{}  {:<8} {} cluster {} ({what}, template {}, provider {})",
        request.id,
        request.state,
        request.operation,
        request.cluster,
        request.template,
        request.provider,
    );
    println!(
        "    asked by {} because of rule: {}; {} task(s)",
        request.requested_by.as_deref().unwrap_or("-"),
        request.rule,
        request.tasks
    );
    if let Some(by) = &request.decided_by {
        println!("    decided by {by}");
    }
    if let Some(reason) = &request.reason {
        println!("    reason: {reason}");
    }
    if let Some(job) = &request.job_id {
        println!("    job: {job}");
    }
}
