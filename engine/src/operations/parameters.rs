//! Template parameters at create and reconfigure time: the values a user gives (in
//! the request config's `parameters` key, where the API, the CLI's `--param`,
//! environment files and the portal all put them) are checked against the template's
//! declarations by [`domain::catalog::parameters`], and the checked values replace
//! what was given. A refusal names every bad field and nothing is stored.

use domain::catalog::parameters::{self, FieldError, CONFIG_KEY};
use domain::catalog::ClusterTemplate;
use serde_json::{Map, Value};

use super::OperationError;
use crate::store::clusters::Cluster;

/// The parameter values `given` as an object; anything else is refused.
fn given_object(given: Option<&Value>) -> Result<Map<String, Value>, OperationError> {
    match given {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(values)) => Ok(values.clone()),
        Some(_) => Err(OperationError::BadParameters(vec![FieldError {
            parameter: CONFIG_KEY.to_owned(),
            problem: "parameters must be an object of values by parameter name".to_owned(),
        }])),
    }
}

/// Puts the checked parameter values of a new cluster into `config` (the template's
/// defaults merged with the request's config). A template without parameters and a
/// request giving none leave the config as it is, so Coopr templates are untouched.
pub(crate) fn settle_create(
    template: &ClusterTemplate,
    requested: &Map<String, Value>,
    config: &mut Map<String, Value>,
) -> Result<(), OperationError> {
    let given = given_object(requested.get(CONFIG_KEY))?;
    if template.parameters.is_empty() && given.is_empty() {
        return Ok(());
    }
    let values = parameters::validate(&template.parameters, &given)
        .map_err(OperationError::BadParameters)?;
    config.insert(CONFIG_KEY.to_owned(), Value::Object(values));
    Ok(())
}

/// A reconfigure's config changes with their `parameters` (if any) checked against
/// the template the cluster was made from: only changeable parameters may change,
/// and the result holds every parameter's value, so merging it key by key keeps the
/// ones not named.
pub(crate) fn checked_changes(
    cluster: &Cluster,
    config: &Map<String, Value>,
    changes: Option<&Map<String, Value>>,
) -> Result<Option<Map<String, Value>>, OperationError> {
    let Some(changes) = changes else {
        return Ok(None);
    };
    if !changes.contains_key(CONFIG_KEY) {
        return Ok(Some(changes.clone()));
    }
    let given = given_object(changes.get(CONFIG_KEY))?;
    let template: ClusterTemplate = domain::catalog::coopr::entity_from_str(&cluster.template_json)
        .map_err(|error| {
            OperationError::Invalid(format!(
                "the template cluster {} was made from is unreadable: {error}",
                cluster.name
            ))
        })?;
    let current = parameters::values_in_config(config);
    let values = parameters::revalue(&template.parameters, &current, &given)
        .map_err(OperationError::BadParameters)?;
    let mut checked = changes.clone();
    checked.insert(CONFIG_KEY.to_owned(), Value::Object(values));
    Ok(Some(checked))
}
