//! `/api/v1/budget` and `/api/v1/showback`: a tenant's monthly budget and what its
//! clusters cost per user and per template in a month (tenant admins; docs/cost.md).

use api_types::{BudgetRequest, BudgetView, ShowbackView};
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiJson, ApiQuery, Authenticated};
use crate::http::AppState;

/// Your tenant's monthly budget and where this month stands (tenant admins).
#[utoipa::path(get, path = "/budget", operation_id = "show_budget", tag = "cost",
    responses((status = 200, body = BudgetView), (status = 403, body = ErrorBody)))]
pub async fn show_budget(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
) -> Result<Json<BudgetView>, ApiError> {
    Ok(Json(state.service.budget(&caller).await?))
}

/// Set your tenant's monthly budget (`monthly_budget: null` removes it) and what a
/// create or grow over it gets: `refuse` (default) or `approval` (tenant admins).
#[utoipa::path(put, path = "/budget", operation_id = "set_budget", tag = "cost",
    request_body = BudgetRequest,
    responses((status = 200, body = BudgetView), (status = 403, body = ErrorBody),
              (status = 422, body = ErrorBody)))]
pub async fn set_budget(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiJson(request): ApiJson<BudgetRequest>,
) -> Result<Json<BudgetView>, ApiError> {
    Ok(Json(state.service.set_budget(&caller, &request).await?))
}

/// Which month, and in which form.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ShowbackQuery {
    /// `YYYY-MM` (UTC); the current month when absent.
    #[serde(default)]
    pub month: Option<String>,
    /// `json` (default) or `csv` (a header row, then `month,by,name,cost` lines).
    #[serde(default)]
    pub format: Option<String>,
}

/// What your tenant's clusters cost in a month, per user and per template (tenant
/// admins).
#[utoipa::path(get, path = "/showback", operation_id = "showback", tag = "cost",
    params(ShowbackQuery),
    responses((status = 200, body = ShowbackView),
              (status = 200, description = "CSV", content_type = "text/csv", body = String),
              (status = 403, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn showback(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiQuery(query): ApiQuery<ShowbackQuery>,
) -> Result<Response, ApiError> {
    let csv = match query.format.as_deref() {
        None | Some("json") => false,
        Some("csv") => true,
        Some(other) => {
            return Err(engine::service::ServiceError::Invalid {
                message: format!("format: must be json or csv, not {other:?}"),
                details: vec![api_types::Problem {
                    path: "format".to_owned(),
                    message: format!("must be json or csv, not {other:?}"),
                }],
            }
            .into())
        }
    };
    let view = state
        .service
        .showback(&caller, query.month.as_deref())
        .await?;
    Ok(if csv {
        let filename = format!("attachment; filename=\"showback-{}.csv\"", view.month);
        (
            [
                (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()),
                (header::CONTENT_DISPOSITION, filename),
            ],
            view.to_csv(),
        )
            .into_response()
    } else {
        Json(view).into_response()
    })
}
