//! A client of AWS's Query APIs (EC2's, and IAM's for tests): form-encoded POSTs signed
//! with SigV4 by AWS's own signer, XML answers read through serde.
//!
//! Only what the provider needs is here: one `call` that signs, sends, retries throttling
//! with exponential backoff and jitter, and turns an error document into its code and
//! message. Credentials are held as `aws_credential_types::Credentials`, whose `Debug`
//! redacts the secret, and nothing here logs a request body or a header. Every error a
//! call returns has the credentials blotted out ([`Scrubber`]): a service may quote the
//! access key id it was given (an `AuthFailure` naming the key, an `UnauthorizedOperation`
//! quoting the request), and these errors end in task logs and provider test reports.

use std::time::{Duration, SystemTime};

use aws_sigv4::http_request::{sign, SignableBody, SignableRequest, SigningSettings};
use aws_sigv4::sign::v4;
use quick_xml::events::Event;
use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::provider::Scrubber;

/// The EC2 API version every request names (the current one; EC2 keeps old versions).
pub const EC2_VERSION: &str = "2016-11-15";
/// The IAM API version.
pub const IAM_VERSION: &str = "2010-05-08";

/// Error codes that mean "slow down": retried, never shown unless they last.
const THROTTLING: &[&str] = &[
    "RequestLimitExceeded",
    "Throttling",
    "ThrottlingException",
    "RequestThrottled",
    "TooManyRequestsException",
];
/// How often one call is tried before throttling is reported.
const MAX_ATTEMPTS: u32 = 6;
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
const MAX_BACKOFF: Duration = Duration::from_secs(8);

/// Why a call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiError {
    /// The service answered with an error document.
    Service {
        status: u16,
        code: String,
        message: String,
    },
    /// No answer (connection, TLS, timeout) or one that could not be read.
    Transport(String),
}

impl ApiError {
    /// The service's error code, where it gave one.
    pub fn code(&self) -> Option<&str> {
        match self {
            Self::Service { code, .. } => Some(code),
            Self::Transport(_) => None,
        }
    }

    /// Whether the code is `code` or, for a family such as `InvalidAMIID.*`, starts with
    /// `code` and a dot.
    pub fn is(&self, code: &str) -> bool {
        self.code().is_some_and(|own| {
            own == code
                || own
                    .strip_prefix(code)
                    .is_some_and(|rest| rest.starts_with('.'))
        })
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Service {
                status,
                code,
                message,
            } => write!(f, "{code} (HTTP {status}): {message}"),
            Self::Transport(detail) => f.write_str(detail),
        }
    }
}

/// One service of one endpoint, signing as one identity.
pub struct QueryClient {
    http: reqwest::Client,
    endpoint: String,
    region: String,
    service: &'static str,
    version: &'static str,
    credentials: aws_credential_types::Credentials,
    /// Blots the credentials out of what the service says back.
    scrubber: Scrubber,
}

impl std::fmt::Debug for QueryClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueryClient")
            .field("endpoint", &self.endpoint)
            .field("region", &self.region)
            .field("service", &self.service)
            .finish_non_exhaustive()
    }
}

impl QueryClient {
    /// A client of `service` (`ec2`, `iam`) at `endpoint` (`https://ec2.us-east-1.amazonaws.com`)
    /// speaking API `version`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        http: reqwest::Client,
        endpoint: &str,
        region: &str,
        service: &'static str,
        version: &'static str,
        access_key_id: &str,
        secret_access_key: &str,
        session_token: Option<&str>,
    ) -> Self {
        Self {
            http,
            endpoint: endpoint.trim_end_matches('/').to_owned() + "/",
            region: region.to_owned(),
            service,
            version,
            scrubber: Scrubber::new(
                [access_key_id, secret_access_key]
                    .into_iter()
                    .chain(session_token),
            ),
            credentials: aws_credential_types::Credentials::new(
                access_key_id,
                secret_access_key,
                session_token.map(str::to_owned),
                None,
                "corral",
            ),
        }
    }

    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Calls `action` with `params`, retrying throttling; the answer's XML text.
    pub async fn call(
        &self,
        action: &str,
        params: &[(String, String)],
    ) -> Result<String, ApiError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self.call_once(action, params).await {
                Err(error)
                    if attempt < MAX_ATTEMPTS
                        && THROTTLING.iter().any(|code| error.code() == Some(*code)) =>
                {
                    let pause = backoff(attempt);
                    tracing::debug!(
                        action,
                        attempt,
                        ?pause,
                        "EC2 throttled the request; waiting"
                    );
                    tokio::time::sleep(pause).await;
                }
                other => return other.map_err(|error| scrubbed(error, &self.scrubber)),
            }
        }
    }

    /// Calls `action` and reads its answer as `T`.
    pub async fn call_as<T: DeserializeOwned>(
        &self,
        action: &str,
        params: &[(String, String)],
    ) -> Result<T, ApiError> {
        let text = self.call(action, params).await?;
        quick_xml::de::from_str(&text).map_err(|error| {
            scrubbed(
                ApiError::Transport(format!("the answer to {action} could not be read: {error}")),
                &self.scrubber,
            )
        })
    }

    async fn call_once(
        &self,
        action: &str,
        params: &[(String, String)],
    ) -> Result<String, ApiError> {
        // In a block of its own: the serializer is not `Send`, the request's future must be.
        let body = {
            let mut form = url::form_urlencoded::Serializer::new(String::new());
            form.append_pair("Action", action);
            form.append_pair("Version", self.version);
            for (name, value) in params {
                form.append_pair(name, value);
            }
            form.finish()
        };
        let content_type = "application/x-www-form-urlencoded; charset=utf-8";

        let identity = self.credentials.clone().into();
        let signing_params = v4::SigningParams::builder()
            .identity(&identity)
            .region(&self.region)
            .name(self.service)
            .time(SystemTime::now())
            .settings(SigningSettings::default())
            .build()
            .map_err(|error| ApiError::Transport(format!("cannot sign the request: {error}")))?
            .into();
        let signable = SignableRequest::new(
            "POST",
            self.endpoint.as_str(),
            [("content-type", content_type)].into_iter(),
            SignableBody::Bytes(body.as_bytes()),
        )
        .map_err(|error| ApiError::Transport(format!("cannot sign the request: {error}")))?;
        let (instructions, _signature) = sign(signable, &signing_params)
            .map_err(|error| ApiError::Transport(format!("cannot sign the request: {error}")))?
            .into_parts();

        let mut request = self
            .http
            .post(&self.endpoint)
            .header("content-type", content_type)
            .body(body);
        for (name, value) in instructions.headers() {
            request = request.header(name, value);
        }
        let response = request.send().await.map_err(|error| {
            ApiError::Transport(format!(
                "{} at {} did not answer {action}: {}",
                self.service,
                self.endpoint,
                error_chain(&error)
            ))
        })?;
        let status = response.status();
        let text = response.text().await.map_err(|error| {
            ApiError::Transport(format!("the answer to {action} was cut off: {error}"))
        })?;
        if status.is_success() {
            return Ok(text);
        }
        Err(service_error(status.as_u16(), &text))
    }
}

/// The error an answer of HTTP `status` with body `text` (an error document) stands for:
/// its code and message, or the start of the body when it is no error document.
fn service_error(status: u16, text: &str) -> ApiError {
    let code = first_text(text, "Code").unwrap_or_else(|| format!("HTTP{status}"));
    let message =
        first_text(text, "Message").unwrap_or_else(|| text.chars().take(200).collect::<String>());
    ApiError::Service {
        status,
        code,
        message,
    }
}

/// `error` with every form of the credentials `scrubber` knows blotted out of its text.
fn scrubbed(error: ApiError, scrubber: &Scrubber) -> ApiError {
    match error {
        ApiError::Service {
            status,
            code,
            message,
        } => ApiError::Service {
            status,
            code: scrubber.scrub(&code),
            message: scrubber.scrub(&message),
        },
        ApiError::Transport(detail) => ApiError::Transport(scrubber.scrub(&detail)),
    }
}

/// The `attempt`th pause: doubling from [`FIRST_BACKOFF`] up to [`MAX_BACKOFF`], each
/// drawn at random from its upper half so that workers throttled together spread out.
fn backoff(attempt: u32) -> Duration {
    use rand_core::RngCore;
    let ceiling = FIRST_BACKOFF
        .saturating_mul(1 << attempt.saturating_sub(1).min(10))
        .min(MAX_BACKOFF);
    let millis = u64::try_from(ceiling.as_millis())
        .unwrap_or(u64::MAX)
        .max(2);
    let jitter = rand_core::OsRng.next_u64() % (millis / 2);
    Duration::from_millis(millis / 2 + jitter)
}

/// The text of the first `<tag>` element of `xml` (error documents of EC2 and IAM nest
/// their `Code` and `Message` differently; both have one of each).
pub fn first_text(xml: &str, tag: &str) -> Option<String> {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut inside = false;
    loop {
        match reader.read_event() {
            Ok(Event::Start(start)) => inside = start.local_name().as_ref() == tag.as_bytes(),
            Ok(Event::Text(text)) if inside => {
                return text.decode().ok().map(|text| text.trim().to_owned());
            }
            Ok(Event::End(_)) => inside = false,
            Ok(Event::Eof) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

/// `error` and its sources, so "error sending request" says why.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Parameters in the Query API's flattened form (`Filter.1.Name`), built in order.
#[derive(Debug, Default)]
pub struct Params(Vec<(String, String)>);

impl Params {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn set(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.0.push((name.into(), value.into()));
        self
    }

    /// `Filter.n.Name` = `name`, `Filter.n.Value.m` = each of `values`.
    pub fn filter(mut self, name: &str, values: &[&str]) -> Self {
        let n = self
            .0
            .iter()
            .filter(|(key, _)| key.ends_with(".Name") && key.starts_with("Filter."))
            .count()
            + 1;
        self.0.push((format!("Filter.{n}.Name"), name.to_owned()));
        for (m, value) in values.iter().enumerate() {
            self.0
                .push((format!("Filter.{n}.Value.{}", m + 1), (*value).to_owned()));
        }
        self
    }

    /// `TagSpecification.1` for `resource_type` with `tags`.
    pub fn tags(mut self, resource_type: &str, tags: &[(&str, &str)]) -> Self {
        self.0.push((
            "TagSpecification.1.ResourceType".to_owned(),
            resource_type.to_owned(),
        ));
        for (n, (key, value)) in tags.iter().enumerate() {
            self.0.push((
                format!("TagSpecification.1.Tag.{}.Key", n + 1),
                (*key).to_owned(),
            ));
            self.0.push((
                format!("TagSpecification.1.Tag.{}.Value", n + 1),
                (*value).to_owned(),
            ));
        }
        self
    }

    pub fn as_slice(&self) -> &[(String, String)] {
        &self.0
    }
}

/// A list of `<item>`s, as EC2 nests every set (`<instancesSet><item>…`).
#[derive(Debug, Deserialize)]
pub struct Items<T> {
    #[serde(rename = "item", default = "Vec::new")]
    pub items: Vec<T>,
}

impl<T> Default for Items<T> {
    fn default() -> Self {
        Self { items: Vec::new() }
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DescribeInstances {
    #[serde(default)]
    pub reservation_set: Items<Reservation>,
    #[serde(default)]
    pub next_token: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reservation {
    #[serde(default)]
    pub instances_set: Items<Instance>,
}

/// What the provider reads of an instance.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Instance {
    pub instance_id: String,
    pub instance_state: InstanceStateXml,
    #[serde(default)]
    pub private_ip_address: Option<String>,
    /// The public address (EC2 calls it `ipAddress`).
    #[serde(default)]
    pub ip_address: Option<String>,
}

impl Instance {
    pub fn state(&self) -> InstanceState {
        InstanceState::parse(&self.instance_state.name)
    }
}

#[derive(Debug, Deserialize)]
pub struct InstanceStateXml {
    pub name: String,
}

/// An instance's lifecycle state, as EC2 names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InstanceState {
    Pending,
    Running,
    ShuttingDown,
    Terminated,
    Stopping,
    Stopped,
    Other(String),
}

impl InstanceState {
    pub fn parse(name: &str) -> Self {
        match name {
            "pending" => Self::Pending,
            "running" => Self::Running,
            "shutting-down" => Self::ShuttingDown,
            "terminated" => Self::Terminated,
            "stopping" => Self::Stopping,
            "stopped" => Self::Stopped,
            other => Self::Other(other.to_owned()),
        }
    }

    /// Gone or going: nothing can be done with it but forget it.
    pub fn is_gone(&self) -> bool {
        matches!(self, Self::ShuttingDown | Self::Terminated)
    }
}

/// The states of instances that still count (everything but `terminated`).
pub const LIVE_STATES: &[&str] = &["pending", "running", "shutting-down", "stopping", "stopped"];

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunInstances {
    #[serde(default)]
    pub instances_set: Items<Instance>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DescribeSecurityGroups {
    #[serde(default)]
    pub security_group_info: Items<SecurityGroupItem>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecurityGroupItem {
    pub group_id: String,
    #[serde(default)]
    pub group_name: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateSecurityGroup {
    pub group_id: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DescribeRegions {
    #[serde(default)]
    pub region_info: Items<RegionItem>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegionItem {
    pub region_name: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConsoleOutput {
    #[serde(default)]
    pub output: Option<String>,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn error_documents_of_ec2_and_iam_give_their_code_and_message() {
        let ec2 = "<?xml version=\"1.0\"?><Response><Errors><Error><Code>AuthFailure</Code>\
                   <Message>AWS was not able to validate the provided access credentials</Message>\
                   </Error></Errors><RequestID>x</RequestID></Response>";
        assert_eq!(first_text(ec2, "Code").as_deref(), Some("AuthFailure"));
        let iam = "<ErrorResponse><Error><Type>Sender</Type><Code>NoSuchEntity</Code>\
                   <Message>no</Message></Error></ErrorResponse>";
        assert_eq!(first_text(iam, "Code").as_deref(), Some("NoSuchEntity"));
        assert_eq!(first_text(iam, "Message").as_deref(), Some("no"));
    }

    const KEY_ID: &str = "AKIAECHOEDKEY0000001";
    const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";

    /// An endpoint that answers one request with HTTP `status` and `body`, then closes.
    async fn answering(status: &str, body: String) -> String {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let status = status.to_owned();
        tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            // The whole request (headers, then as many body bytes as they announce).
            let mut request = Vec::new();
            let mut buffer = [0u8; 4096];
            loop {
                let read = stream.read(&mut buffer).await.unwrap();
                if read == 0 {
                    break;
                }
                request.extend_from_slice(&buffer[..read]);
                let text = String::from_utf8_lossy(&request).to_lowercase();
                if let Some(end) = text.find("\r\n\r\n") {
                    let length: usize = text
                        .lines()
                        .find_map(|line| line.strip_prefix("content-length:"))
                        .map_or(0, |value| value.trim().parse().unwrap());
                    if request.len() >= end + 4 + length {
                        break;
                    }
                }
            }
            let answer = format!(
                "HTTP/1.1 {status}\r\ncontent-type: text/xml\r\ncontent-length: {}\r\n\
                 connection: close\r\n\r\n{body}",
                body.len()
            );
            stream.write_all(answer.as_bytes()).await.unwrap();
        });
        format!("http://{address}")
    }

    /// A service quoting the access key id it was given (and the secret, URL-encoded):
    /// neither is in the error a call returns, nor in the provider's message made of it.
    #[tokio::test]
    async fn what_the_service_echoes_of_the_credentials_is_blotted_out() {
        let echoed = format!(
            "<Response><Errors><Error><Code>UnauthorizedOperation</Code><Message>You are not \
             authorized to perform this operation with access key {KEY_ID} (signed with \
             {}); request Action=RunInstances</Message></Error></Errors></Response>",
            SECRET.replace('/', "%2F").replace('+', "%2B")
        );
        let not_xml = format!("denied for {KEY_ID}");
        for (status, body) in [("403 Forbidden", echoed), ("401 Unauthorized", not_xml)] {
            let endpoint = answering(status, body.clone()).await;
            let client = QueryClient::new(
                reqwest::Client::new(),
                &endpoint,
                "us-east-1",
                "ec2",
                EC2_VERSION,
                KEY_ID,
                SECRET,
                None,
            );
            let error = client
                .call("RunInstances", Params::new().as_slice())
                .await
                .unwrap_err();
            let provider_error =
                super::super::errors::ec2_error("c-1", "aws1", "run the instance")(error.clone())
                    .to_string();
            for text in [error.to_string(), provider_error] {
                assert!(text.contains(crate::provider::BLOT), "{body}: {text}");
                assert!(
                    !text.contains(KEY_ID) && !text.contains("K7MDENG"),
                    "{body}: {text}"
                );
            }
        }
    }

    #[test]
    fn an_error_document_or_the_start_of_a_body_is_the_message() {
        let document = "<Response><Errors><Error><Code>InvalidAMIID.NotFound</Code>\
                        <Message>no such image</Message></Error></Errors></Response>";
        assert_eq!(
            service_error(400, document),
            ApiError::Service {
                status: 400,
                code: "InvalidAMIID.NotFound".into(),
                message: "no such image".into(),
            }
        );
        let body = "x".repeat(300);
        let ApiError::Service { code, message, .. } = service_error(502, &body) else {
            panic!("a service error");
        };
        assert_eq!((code.as_str(), message.len()), ("HTTP502", 200));
    }

    #[test]
    fn code_families_match_by_prefix() {
        let error = ApiError::Service {
            status: 400,
            code: "InvalidAMIID.NotFound".into(),
            message: String::new(),
        };
        assert!(error.is("InvalidAMIID"));
        assert!(error.is("InvalidAMIID.NotFound"));
        assert!(!error.is("InvalidAMI"));
    }

    #[test]
    fn instances_are_read_from_nested_sets() {
        let xml = r#"<DescribeInstancesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">
          <requestId>r</requestId>
          <reservationSet><item><reservationId>r-1</reservationId><instancesSet><item>
            <instanceId>i-1</instanceId><instanceState><code>16</code><name>running</name></instanceState>
            <privateIpAddress>10.0.0.5</privateIpAddress><ipAddress>54.1.2.3</ipAddress>
            <tagSet><item><key>corral.node</key><value>c-1</value></item></tagSet>
          </item></instancesSet></item></reservationSet></DescribeInstancesResponse>"#;
        let parsed: DescribeInstances = quick_xml::de::from_str(xml).unwrap();
        let instance = &parsed.reservation_set.items[0].instances_set.items[0];
        assert_eq!(instance.instance_id, "i-1");
        assert_eq!(instance.state(), InstanceState::Running);
        assert_eq!(instance.ip_address.as_deref(), Some("54.1.2.3"));
        let empty: DescribeInstances = quick_xml::de::from_str(
            "<DescribeInstancesResponse><reservationSet/></DescribeInstancesResponse>",
        )
        .unwrap();
        assert!(empty.reservation_set.items.is_empty());
    }

    #[test]
    fn backoff_grows_and_stays_bounded() {
        for attempt in 1..20 {
            let pause = backoff(attempt);
            assert!(pause <= MAX_BACKOFF, "{pause:?}");
            assert!(pause >= Duration::from_millis(1));
        }
    }
}
