//! A cluster's security group `corral-<cluster>`: SSH in from the provider's `ssh_cidr`,
//! and everything from the group itself so the cluster's nodes reach each other. Looked
//! up by name first and made only when missing, its rules authorised on every create
//! (one a call, so a create that crashed halfway is finished by the next), and deleted
//! with the cluster's last node once EC2 lets go of it.

use std::time::Duration;

use super::api::{self, Params, QueryClient};
use super::errors::ec2_error;
use super::settings::Settings;
use super::SSH_PORT;
use crate::provider::ProviderError;

/// Deleting a group its instances still hold fails until EC2 lets go of them.
const GROUP_DELETE_ATTEMPTS: u32 = 6;

/// The security group of cluster `cluster`.
pub fn group_name(cluster: &str) -> String {
    format!("corral-{cluster}")
}

/// The id of the cluster's security group, made (with its rules) when missing.
pub(super) async fn ensure(
    client: &QueryClient,
    node: &str,
    settings: &Settings,
    cluster: &str,
    tags: &[(&str, &str)],
) -> Result<String, ProviderError> {
    static MAKING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    let _turn = MAKING.lock().await;
    let provider = settings.provider.as_str();
    let name = group_name(cluster);
    let group_id = match cluster_groups(client, node, provider, cluster).await?.pop() {
        Some(id) => id,
        None => {
            let params = Params::new()
                .set("GroupName", &name)
                .set(
                    "GroupDescription",
                    format!("Corral cluster {cluster}: SSH in, the cluster's nodes to each other"),
                )
                .tags("security-group", tags);
            match client
                .call_as::<api::CreateSecurityGroup>("CreateSecurityGroup", params.as_slice())
                .await
            {
                Ok(made) => made.group_id,
                // Another process made it meanwhile.
                Err(error) if error.is("InvalidGroup.Duplicate") => {
                    cluster_groups(client, node, provider, cluster)
                        .await?
                        .pop()
                        .ok_or_else(|| ProviderError::Ec2 {
                            node: node.to_owned(),
                            provider: provider.to_owned(),
                            action: "make the security group",
                            detail: format!("{name} exists but cannot be found"),
                        })?
                }
                Err(error) => {
                    return Err(ec2_error(node, provider, "make the security group")(error))
                }
            }
        }
    };
    // Every time, and one rule per call: a create that crashed between making the
    // group and its rules leaves them to the next, and a rule already there only
    // fails its own call.
    let rules = [
        Params::new()
            .set("GroupId", &group_id)
            .set("IpPermissions.1.IpProtocol", "tcp")
            .set("IpPermissions.1.FromPort", SSH_PORT.to_string())
            .set("IpPermissions.1.ToPort", SSH_PORT.to_string())
            .set("IpPermissions.1.IpRanges.1.CidrIp", &settings.ssh_cidr),
        Params::new()
            .set("GroupId", &group_id)
            .set("IpPermissions.1.IpProtocol", "-1")
            .set("IpPermissions.1.Groups.1.GroupId", &group_id),
    ];
    for rule in rules {
        match client
            .call("AuthorizeSecurityGroupIngress", rule.as_slice())
            .await
        {
            Ok(_) => {}
            Err(error) if error.is("InvalidPermission.Duplicate") => {}
            Err(error) => return Err(ec2_error(node, provider, "open the security group")(error)),
        }
    }
    Ok(group_id)
}

/// The ids of security groups named for the cluster.
pub(super) async fn cluster_groups(
    client: &QueryClient,
    node: &str,
    provider: &str,
    cluster: &str,
) -> Result<Vec<String>, ProviderError> {
    let groups: api::DescribeSecurityGroups = client
        .call_as(
            "DescribeSecurityGroups",
            Params::new()
                .filter("group-name", &[&group_name(cluster)])
                .as_slice(),
        )
        .await
        .map_err(ec2_error(node, provider, "look up the security group"))?;
    Ok(groups
        .security_group_info
        .items
        .into_iter()
        .filter(|group| group.group_name.is_empty() || group.group_name == group_name(cluster))
        .map(|group| group.group_id)
        .collect())
}

/// Deletes `groups`, waiting a while for EC2 to let go of those the cluster's just
/// terminated instances still hold; one already gone is fine.
pub(super) async fn delete(
    client: &QueryClient,
    node: &str,
    provider: &str,
    groups: &[String],
) -> Result<(), ProviderError> {
    for group in groups {
        let mut pause = Duration::from_secs(1);
        for attempt in 1..=GROUP_DELETE_ATTEMPTS {
            match client
                .call(
                    "DeleteSecurityGroup",
                    Params::new().set("GroupId", group.as_str()).as_slice(),
                )
                .await
            {
                Ok(_) => break,
                Err(error) if error.is("InvalidGroup") => break,
                // Instances just terminated still hold it for a moment.
                Err(error)
                    if error.is("DependencyViolation") && attempt < GROUP_DELETE_ATTEMPTS =>
                {
                    tokio::time::sleep(pause).await;
                    pause *= 2;
                }
                Err(error) => {
                    return Err(ec2_error(node, provider, "delete the security group")(
                        error,
                    ))
                }
            }
        }
    }
    Ok(())
}
