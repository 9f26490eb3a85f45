//! Upload a file as the next version of a plugin resource (an archive, a binary,
//! any file): a multipart form post, so it works from a plain HTML form without
//! JavaScript. The name defaults to the file's own; the same service call as the
//! JSON API's upload stores it.

use leptos::prelude::*;
use leptos::server_fn::codec::{MultipartData, MultipartFormData};

use crate::error::UiError;

/// The longest a text field of the form may be (the CSRF token, kind and name).
#[cfg(feature = "ssr")]
const MAX_TEXT_BYTES: usize = 4096;

#[server(prefix = "/sfn", endpoint = "admin-upload-resource-file", input = MultipartFormData)]
pub async fn upload_resource_file(data: MultipartData) -> Result<(), UiError> {
    // Refuses visitors before reading a possibly large body.
    super::caller::caller().await?;
    let form = read_form(data).await?;
    let caller = super::caller::admin_checked(&form.csrf).await?;
    let name = match form.name.trim() {
        "" => form.file_name.trim().to_owned(),
        name => name.to_owned(),
    };
    if form.file_name.is_empty() && form.bytes.is_empty() {
        return Err(UiError::field("file", "choose a file to upload"));
    }
    if form.bytes.is_empty() {
        return Err(UiError::field("file", "the file is empty"));
    }
    if name.is_empty() {
        return Err(UiError::field("name", "give the resource a name"));
    }
    let service = crate::session::service()?;
    let uploaded = service
        .upload_resource(&caller, &form.kind, &name, &form.bytes)
        .await
        .map_err(|error| super::quota::on_field(error.into(), "name"))?;
    if form.stage {
        service
            .stage_resource(&caller, &form.kind, &name, uploaded.version)
            .await?;
    }
    leptos_axum::redirect(&format!(
        "/admin/resources?uploaded={}&version={}",
        crate::query::encode_value(&name),
        uploaded.version
    ));
    Ok(())
}

/// The form's fields; unknown ones are ignored.
#[cfg(feature = "ssr")]
#[derive(Default)]
struct UploadForm {
    csrf: String,
    kind: String,
    name: String,
    stage: bool,
    file_name: String,
    bytes: Vec<u8>,
}

#[cfg(feature = "ssr")]
async fn read_form(data: MultipartData) -> Result<UploadForm, UiError> {
    let unreadable = |error: &dyn std::fmt::Display| {
        UiError::invalid(format!("the upload could not be read: {error}"))
    };
    let mut multipart = data
        .into_inner()
        .ok_or_else(|| UiError::invalid("the upload could not be read"))?;
    let mut form = UploadForm::default();
    while let Some(mut field) = multipart
        .next_field()
        .await
        .map_err(|error| unreadable(&error))?
    {
        let field_name = field.name().unwrap_or_default().to_owned();
        let limit = if field_name == "file" {
            form.file_name = field.file_name().unwrap_or_default().to_owned();
            engine::resources::MAX_RESOURCE_BYTES
        } else {
            MAX_TEXT_BYTES
        };
        let mut bytes = Vec::new();
        while let Some(chunk) = field.chunk().await.map_err(|error| unreadable(&error))? {
            if bytes.len() + chunk.len() > limit {
                return Err(UiError::field(
                    if field_name == "file" { "file" } else { "name" },
                    format!("too large: the limit is {limit} bytes"),
                ));
            }
            bytes.extend_from_slice(&chunk);
        }
        let text = || String::from_utf8_lossy(&bytes).into_owned();
        match field_name.as_str() {
            "csrf" => form.csrf = text(),
            "kind" => form.kind = text(),
            "name" => form.name = text(),
            "stage" => form.stage = true,
            "file" => form.bytes = bytes,
            _ => {}
        }
    }
    Ok(form)
}
