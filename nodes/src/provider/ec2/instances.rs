//! A node's instance: found by its node tag or launched once, waited for, stopped,
//! started and terminated, and the addresses it is reached at.
//!
//! A launch names a client token derived from the tenant and node id, so a retried or
//! crashed create gets the same instance back from EC2, never a second one; before that,
//! an instance tagged with the node's id is looked up and reused (EC2-compatible clouds
//! and emulators do not all honour client tokens). EC2 is eventually consistent: an
//! instance it does not know yet is waited for like one that is still changing state.

use std::time::Duration;

use super::api::{self, ApiError, Instance, InstanceState, Params, QueryClient, LIVE_STATES};
use super::errors::ec2_error;
use super::settings::{Connect, Settings};
use super::{MAX_POLL, TAG_CLUSTER, TAG_NODE};
use crate::provider::{NodeSpec, ProviderError};

/// How long an instance may take to run, to stop, or to be terminated.
const STATE_WAIT: Duration = Duration::from_secs(600);
const FIRST_POLL: Duration = Duration::from_millis(200);

/// What a node's instance is launched with.
pub(super) struct Launch<'a> {
    pub(super) spec: &'a NodeSpec,
    pub(super) settings: &'a Settings,
    pub(super) tenant: &'a str,
    pub(super) image: &'a str,
    /// The image type's name, for the error of an image EC2 does not know.
    pub(super) imagetype: &'a str,
    pub(super) instance_type: &'a str,
    pub(super) key_name: &'a str,
    pub(super) group_id: &'a str,
    pub(super) tags: &'a [(&'a str, &'a str)],
}

/// The id of the node's instance: the live one tagged as the node, else one launched
/// now (once, whatever the retries).
pub(super) async fn ensure(
    client: &QueryClient,
    launch: &Launch<'_>,
) -> Result<String, ProviderError> {
    let node = launch.spec.id.as_str();
    let tenant = launch.tenant;
    let provider = launch.settings.provider.as_str();
    if let Some(instance) = node_instances(client, node, provider)
        .await?
        .into_iter()
        .find(|instance| !instance.state().is_gone())
    {
        tracing::info!(node, instance = %instance.instance_id, "an instance of the node exists; using it");
        return Ok(instance.instance_id);
    }
    let mut ran = run(client, launch, &client_token(&format!("{tenant}:{node}"))).await?;
    // The token already names an instance that has since been terminated (the node was
    // deleted and is made again): a token derived from that instance makes a new one,
    // still only once.
    if ran.state().is_gone() {
        let token = client_token(&format!("{tenant}:{node}:{}", ran.instance_id));
        ran = run(client, launch, &token).await?;
    }
    Ok(ran.instance_id)
}

/// RunInstances with `token`: the instance EC2 made for it (now or earlier).
async fn run(
    client: &QueryClient,
    launch: &Launch<'_>,
    token: &str,
) -> Result<Instance, ProviderError> {
    let node = launch.spec.id.as_str();
    let provider = launch.settings.provider.as_str();
    let mut all_tags = launch.tags.to_vec();
    let name = format!("corral-{node}");
    all_tags.push(("Name", &name));
    let params = Params::new()
        .set("ImageId", launch.image)
        .set("InstanceType", launch.instance_type)
        .set("MinCount", "1")
        .set("MaxCount", "1")
        .set("KeyName", launch.key_name)
        .set("SecurityGroupId.1", launch.group_id)
        .set("ClientToken", token)
        .tags("instance", &all_tags);
    let ran: api::RunInstances = client
        .call_as("RunInstances", params.as_slice())
        .await
        .map_err(|error| {
            if error.is("InvalidAMIID") {
                ProviderError::Ec2Image {
                    node: node.to_owned(),
                    provider: provider.to_owned(),
                    region: launch.settings.region.clone(),
                    image: launch.image.to_owned(),
                    imagetype: launch.imagetype.to_owned(),
                }
            } else {
                ec2_error(node, provider, "run the instance")(error)
            }
        })?;
    ran.instances_set
        .items
        .into_iter()
        .next()
        .ok_or_else(|| ProviderError::Ec2 {
            node: node.to_owned(),
            provider: provider.to_owned(),
            action: "run the instance",
            detail: "RunInstances answered without an instance".to_owned(),
        })
}

/// Instances matching `params` (filters or ids), following pages.
async fn describe(client: &QueryClient, params: Params) -> Result<Vec<Instance>, ApiError> {
    let mut instances = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut page = params.as_slice().to_vec();
        if let Some(token) = &token {
            page.push(("NextToken".to_owned(), token.clone()));
        }
        let answer: api::DescribeInstances = client.call_as("DescribeInstances", &page).await?;
        instances.extend(
            answer
                .reservation_set
                .items
                .into_iter()
                .flat_map(|reservation| reservation.instances_set.items),
        );
        match answer.next_token.filter(|next| !next.is_empty()) {
            Some(next) => token = Some(next),
            None => return Ok(instances),
        }
    }
}

/// The instances tagged as node `node` that are not terminated.
pub(super) async fn node_instances(
    client: &QueryClient,
    node: &str,
    provider: &str,
) -> Result<Vec<Instance>, ProviderError> {
    let what = "look up the node's instance";
    live_instances_tagged(client, (TAG_NODE, node), node, provider, what).await
}

/// The instances tagged as of cluster `cluster` that are not terminated (`node` is the
/// one whose delete asks).
pub(super) async fn cluster_instances(
    client: &QueryClient,
    node: &str,
    provider: &str,
    cluster: &str,
) -> Result<Vec<Instance>, ProviderError> {
    let what = "look up the cluster's instances";
    live_instances_tagged(client, (TAG_CLUSTER, cluster), node, provider, what).await
}

/// The instances whose tag `tag` is `value` that are not terminated; a failure is
/// reported for `node` as failing to `what`.
async fn live_instances_tagged(
    client: &QueryClient,
    (tag, value): (&str, &str),
    node: &str,
    provider: &str,
    what: &'static str,
) -> Result<Vec<Instance>, ProviderError> {
    describe(
        client,
        Params::new()
            .filter(&format!("tag:{tag}"), &[value])
            .filter("instance-state-name", LIVE_STATES),
    )
    .await
    .map_err(ec2_error(node, provider, what))
}

/// The instance, or `None` when EC2 does not know it.
pub(super) async fn instance(
    client: &QueryClient,
    node: &str,
    provider: &str,
    instance_id: &str,
) -> Result<Option<Instance>, ProviderError> {
    match describe(client, Params::new().set("InstanceId.1", instance_id)).await {
        Ok(instances) => Ok(instances
            .into_iter()
            .find(|instance| instance.instance_id == instance_id)),
        Err(error) if error.is("InvalidInstanceID") => Ok(None),
        Err(error) => Err(ec2_error(node, provider, "look up the instance")(error)),
    }
}

/// The state an instance is waited into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Goal {
    Run,
    Stop,
    Terminate,
}

impl Goal {
    fn reached(self, state: &InstanceState) -> bool {
        *state
            == match self {
                Self::Run => InstanceState::Running,
                Self::Stop => InstanceState::Stopped,
                Self::Terminate => InstanceState::Terminated,
            }
    }

    /// The verb of "did not … within" errors.
    fn verb(self) -> &'static str {
        match self {
            Self::Run => "run",
            Self::Stop => "stop",
            Self::Terminate => "terminate",
        }
    }
}

/// Polls the instance until it reaches `goal`, for at most [`STATE_WAIT`]. An instance
/// that is not (yet) known is waited for: EC2 is eventually consistent. One that is
/// gone before it ran fails at once.
pub(super) async fn wait_for(
    client: &QueryClient,
    node: &str,
    provider: &str,
    instance_id: &str,
    goal: Goal,
) -> Result<Instance, ProviderError> {
    let deadline = tokio::time::Instant::now() + STATE_WAIT;
    let mut pause = FIRST_POLL;
    loop {
        let last = match instance(client, node, provider, instance_id).await? {
            Some(instance) if goal.reached(&instance.state()) => return Ok(instance),
            Some(instance) if goal == Goal::Run && instance.state().is_gone() => {
                return Err(ProviderError::Ec2 {
                    node: node.to_owned(),
                    provider: provider.to_owned(),
                    action: "run the instance",
                    detail: format!(
                        "instance {instance_id} went {} before it ran (see its state \
                         reason in the EC2 console)",
                        instance.instance_state.name
                    ),
                });
            }
            Some(instance) => instance.instance_state.name,
            None => "unknown".to_owned(),
        };
        if tokio::time::Instant::now() + pause > deadline {
            return Err(ProviderError::Ec2 {
                node: node.to_owned(),
                provider: provider.to_owned(),
                action: "wait for the instance",
                detail: format!(
                    "instance {instance_id} did not {} within {}s (it is {last})",
                    goal.verb(),
                    STATE_WAIT.as_secs()
                ),
            });
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(MAX_POLL);
    }
}

/// Terminates the instance and waits until it is terminated; one EC2 no longer knows
/// (terminated instances are forgotten after a while) is already gone.
pub(super) async fn terminate(
    client: &QueryClient,
    node: &str,
    provider: &str,
    instance_id: &str,
) -> Result<(), ProviderError> {
    let terminated = client
        .call(
            "TerminateInstances",
            Params::new().set("InstanceId.1", instance_id).as_slice(),
        )
        .await;
    match terminated {
        Ok(_) => wait_for(client, node, provider, instance_id, Goal::Terminate)
            .await
            .map(drop),
        Err(error) if error.is("InvalidInstanceID") => Ok(()),
        Err(error) => Err(ec2_error(node, provider, "terminate the instance")(error)),
    }
}

/// Stops the (running) instance and waits until it is stopped.
pub(super) async fn stop(
    client: &QueryClient,
    node: &str,
    provider: &str,
    instance_id: &str,
) -> Result<(), ProviderError> {
    client
        .call(
            "StopInstances",
            Params::new().set("InstanceId.1", instance_id).as_slice(),
        )
        .await
        .map_err(ec2_error(node, provider, "stop the instance"))?;
    wait_for(client, node, provider, instance_id, Goal::Stop)
        .await
        .map(drop)
}

/// Starts a stopped (or stopping) instance once it is stopped, and waits until it runs.
pub(super) async fn start(
    client: &QueryClient,
    node: &str,
    provider: &str,
    instance_id: &str,
) -> Result<Instance, ProviderError> {
    wait_for(client, node, provider, instance_id, Goal::Stop).await?;
    client
        .call(
            "StartInstances",
            Params::new().set("InstanceId.1", instance_id).as_slice(),
        )
        .await
        .map_err(ec2_error(node, provider, "start the instance again"))?;
    wait_for(client, node, provider, instance_id, Goal::Run).await
}

/// A client token for `seed`: EC2 allows 64 ASCII characters, a SHA-256 in hex is 64.
fn client_token(seed: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(format!("corral:{seed}").as_bytes());
    hex::encode(digest)
}

/// Where Corral connects (`host`) and where the cluster's nodes reach the node.
pub(super) fn addresses(
    instance: &Instance,
    connect: Connect,
    node: &str,
    provider: &str,
) -> Result<(String, Option<String>), ProviderError> {
    let private = instance
        .private_ip_address
        .clone()
        .filter(|ip| !ip.is_empty());
    let public = instance.ip_address.clone().filter(|ip| !ip.is_empty());
    let host = match connect {
        Connect::PublicIp => public.ok_or_else(|| ProviderError::Ec2 {
            node: node.to_owned(),
            provider: provider.to_owned(),
            action: "give the instance a public address",
            detail: format!(
                "instance {} has none (its subnet does not assign them); set `connect` to \
                 `private-ip` where Corral runs inside the VPC",
                instance.instance_id
            ),
        })?,
        Connect::PrivateIp => private.clone().ok_or_else(|| ProviderError::Ec2 {
            node: node.to_owned(),
            provider: provider.to_owned(),
            action: "give the instance a private address",
            detail: format!("instance {} has none", instance.instance_id),
        })?,
        // Never connected to: the record still says where the instance is.
        Connect::None => public
            .or_else(|| private.clone())
            .unwrap_or_else(|| instance.instance_id.clone()),
    };
    Ok((host, private))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_tokens_fit_ec2s_limit_and_are_stable() {
        let token = client_token(&format!("tenant:{}", "c".repeat(300)));
        assert_eq!(token.len(), 64);
        assert_eq!(token, client_token(&format!("tenant:{}", "c".repeat(300))));
        assert_ne!(token, client_token("tenant:other"));
    }
}
