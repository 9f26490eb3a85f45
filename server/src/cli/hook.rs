//! `corral hook ...`: your tenant's lifecycle hooks on the server. `add` prints the
//! signing secret once, on a line of its own (`secret: ...`), for the receiver's
//! configuration; nothing shows it again.

use std::process::ExitCode;
use std::time::Duration;

use api_types::{
    CreatedHook, DeliveryView, GateFailurePolicy, GateOperation, HookEvent, HookFormat,
    HookRequest, HookView, Page,
};
use clap::{Args, Subcommand};

use super::remote::Client;

#[derive(Debug, Args)]
pub struct HookArgs {
    #[command(subcommand)]
    pub command: HookCommand,
}

#[derive(Debug, Subcommand)]
pub enum HookCommand {
    /// Add a hook: an http(s) URL told of events (--events), asked before operations
    /// (--gate), or both. Prints its signing secret, this once.
    Add(AddArgs),
    /// List your tenant's hooks.
    List,
    /// Remove a hook with its delivery log.
    Remove { id: String },
    /// Send a `test` event to a hook and show how the receiver answered.
    Test { id: String },
    /// Show a hook's deliveries, newest first, with each attempt.
    Deliveries {
        id: String,
        /// How many deliveries to show.
        #[arg(long, default_value_t = 20)]
        limit: u32,
    },
    /// Send a delivered or given-up delivery again (same id and body).
    Redeliver { id: String, delivery: String },
}

#[derive(Debug, Args)]
pub struct AddArgs {
    pub url: String,
    /// Events to send, comma-separated: job.started, job.succeeded, job.failed,
    /// approval.needed, lease.expiring, test (health.down, health.up, node.replaced are
    /// reserved).
    #[arg(long, value_delimiter = ',', value_parser = parse_word::<HookEvent>)]
    pub events: Vec<HookEvent>,
    /// Ask the hook before these operations are queued, comma-separated: create,
    /// change, delete. Its `{"allow": false, "reason": "..."}` refuses them.
    #[arg(long = "gate", value_delimiter = ',', value_parser = parse_word::<GateOperation>)]
    pub gates: Vec<GateOperation>,
    /// json (Corral's signed event body) or slack (`{"text": "..."}`).
    #[arg(long, value_parser = parse_word::<HookFormat>)]
    pub format: Option<HookFormat>,
    /// Seconds each call may take (1-10) [default: 10].
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<u32>,
    /// What a gate that cannot be asked means: allow or refuse [default: refuse].
    #[arg(long, value_parser = parse_word::<GateFailurePolicy>)]
    pub on_failure: Option<GateFailurePolicy>,
}

/// A word of one of the hook enums, for clap.
fn parse_word<T: std::str::FromStr<Err = api_types::UnknownValue>>(raw: &str) -> Result<T, String> {
    raw.trim()
        .parse()
        .map_err(|error: api_types::UnknownValue| error.to_string())
}

/// How long `hook test` waits for the delivery's first attempt.
const TEST_WAIT: Duration = Duration::from_secs(30);

pub async fn run(args: HookArgs) -> anyhow::Result<ExitCode> {
    let client = super::remote::signed_in()?;
    match args.command {
        HookCommand::Add(args) => {
            let request = HookRequest {
                url: args.url,
                events: args.events,
                gates: args.gates,
                format: args.format,
                timeout_secs: args.timeout,
                on_failure: args.on_failure,
            };
            let created: CreatedHook = client.add_hook(&request).await?;
            println!("hook {} added", created.hook.id);
            print_hook(&created.hook);
            println!("secret: {}", created.secret);
            println!("(the secret signs every call; it is not shown again)");
            Ok(ExitCode::SUCCESS)
        }
        HookCommand::List => {
            let page: Page<HookView> = client.hooks(500).await?;
            if page.items.is_empty() {
                println!("no hooks");
            }
            for hook in &page.items {
                println!("{}", hook.id);
                print_hook(hook);
            }
            Ok(ExitCode::SUCCESS)
        }
        HookCommand::Remove { id } => {
            client.remove_hook(&id).await?;
            println!("hook {id} removed");
            Ok(ExitCode::SUCCESS)
        }
        HookCommand::Test { id } => {
            let queued = client.test_hook(&id).await?;
            println!("test delivery {} queued", queued.id);
            let delivery = wait_for_attempt(&client, &id, &queued.id).await?;
            print_delivery(&delivery);
            Ok(match delivery.state {
                api_types::DeliveryState::Delivered => ExitCode::SUCCESS,
                _ => ExitCode::FAILURE,
            })
        }
        HookCommand::Deliveries { id, limit } => {
            let page = client.hook_deliveries(&id, limit).await?;
            if page.items.is_empty() {
                println!("no deliveries");
            }
            for delivery in &page.items {
                print_delivery(delivery);
            }
            Ok(ExitCode::SUCCESS)
        }
        HookCommand::Redeliver { id, delivery } => {
            let view = client.redeliver(&id, &delivery).await?;
            println!("delivery {} queued again", view.id);
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The delivery once its first attempt is recorded (or as it is after [`TEST_WAIT`]).
async fn wait_for_attempt(
    client: &Client,
    hook: &str,
    delivery: &str,
) -> anyhow::Result<DeliveryView> {
    let started = std::time::Instant::now();
    loop {
        let page = client.hook_deliveries(hook, 20).await?;
        let found = page.items.into_iter().find(|view| view.id == delivery);
        match found {
            Some(view) if !view.log.is_empty() || started.elapsed() >= TEST_WAIT => {
                return Ok(view)
            }
            None if started.elapsed() >= TEST_WAIT => {
                anyhow::bail!("delivery {delivery} is gone (was the hook removed?)")
            }
            _ => tokio::time::sleep(Duration::from_millis(250)).await,
        }
    }
}

fn words<T: std::fmt::Display>(items: &[T]) -> String {
    if items.is_empty() {
        return "-".to_owned();
    }
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

fn print_hook(hook: &HookView) {
    println!("  url:        {}", hook.url);
    println!("  events:     {}", words(&hook.events));
    println!("  gates:      {}", words(&hook.gates));
    println!(
        "  format:     {}  timeout: {} s  on failure: {}",
        hook.format, hook.timeout_secs, hook.on_failure
    );
}

fn print_delivery(delivery: &DeliveryView) {
    println!(
        "{}  {:<14} {:<9} attempts {}",
        delivery.id, delivery.event, delivery.state, delivery.attempts
    );
    for attempt in &delivery.log {
        let answer = match (attempt.status, &attempt.error) {
            (Some(status), _) => format!("HTTP {status}"),
            (None, Some(error)) => error.clone(),
            (None, None) => "no answer".to_owned(),
        };
        let excerpt = attempt.response_excerpt.trim();
        let excerpt: String = excerpt.chars().take(120).collect();
        println!(
            "    #{} {}  {}  {} ms{}",
            attempt.attempt,
            chrono::DateTime::<chrono::Utc>::from_timestamp_millis(attempt.at_ms)
                .map(|time| time.format("%Y-%m-%d %H:%M:%S").to_string())
                .unwrap_or_default(),
            answer,
            attempt.elapsed_ms,
            if excerpt.is_empty() {
                String::new()
            } else {
                format!("  {excerpt}")
            }
        );
    }
}
