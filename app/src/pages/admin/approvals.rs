//! `/admin/approvals`: the creates and grows waiting for a decision (pending first,
//! each with its plan preview: size, tasks and steps), approved and denied with a
//! reason the requester sees; the tenant's approval rules (add, remove) and its
//! groups. Every form is a plain post, so the page works without JavaScript.

use api_types::{ApprovalState, ApprovalView};
use leptos::prelude::*;
use leptos_meta::Title;

use crate::components::errors::action_error;
use crate::components::form::{AdminForm, IdButton, SelectField, TextField};
use crate::components::session::CsrfField;
use crate::components::table::DataTable;
use crate::components::time::timestamp;
use crate::pages::admin::loaded::{Loaded, OnceLoaded};
use crate::server_fns::admin::approvals::{
    approvals_page, AddApprovalRule, ApprovalsPageData, ApproveRequest, DenyRequest,
    RemoveApprovalRule,
};

fn state_class(state: ApprovalState) -> &'static str {
    match state {
        ApprovalState::Pending => "state state-busy",
        ApprovalState::Approved => "state state-ok",
        ApprovalState::Denied => "state state-bad",
        ApprovalState::Expired => "state state-idle",
    }
}

/// One request: what it would do, why it waits, and (while pending) the decision.
fn request_card(
    request: ApprovalView,
    approve: ServerAction<ApproveRequest>,
    deny: ServerAction<DenyRequest>,
) -> impl IntoView {
    let pending = request.state == ApprovalState::Pending;
    let what = match request.operation {
        api_types::ApprovalOperation::Create => format!("create with {} node(s)", request.size),
        api_types::ApprovalOperation::Grow => {
            format!("add {} node(s), to {}", request.growth, request.size)
        }
    };
    let steps = request
        .steps
        .iter()
        .map(|step| format!("{} ×{}", step.step, step.tasks))
        .collect::<Vec<_>>()
        .join(", ");
    let cluster_href = format!("/clusters/{}", request.cluster_id);
    let approve_id = request.id.clone();
    let deny_id = request.id.clone();
    let reason_id = format!("reason-{}", request.id);
    view! {
        <section class="card" data-approval=request.id.clone() data-state=request.state.as_str()>
            <h2>
                <a href=cluster_href>{request.cluster.clone()}</a>
                " · " {what} " "
                <span class=state_class(request.state)>{request.state.as_str()}</span>
            </h2>
            <dl class="facts">
                <dt>"Asked by"</dt><dd>{request.requested_by.clone().unwrap_or_default()} " at " {timestamp(request.created_at_ms)}</dd>
                <dt>"Template"</dt><dd>{request.template.clone()} " on " {request.provider.clone()}</dd>
                <dt>"Rule"</dt><dd>{request.rule.clone()}{request.approvers.clone().map(|group| format!(" (approvers: admins, group {group})"))}</dd>
                <dt>"Plan"</dt><dd data-testid="approval-plan">{format!("{} task(s): {steps}", request.tasks)}</dd>
                {pending.then(|| view! { <dt>"Expires"</dt><dd>{timestamp(request.expires_at_ms)}</dd> })}
                {request.decided_by.clone().map(|by| view! { <dt>"Decided by"</dt><dd>{by}</dd> })}
                {request.reason.clone().map(|reason| view! { <dt>"Reason"</dt><dd class="approval-reason">{reason}</dd> })}
            </dl>
            {pending.then(move || view! {
                <div class="row">
                    <ActionForm action=approve attr:class="inline">
                        <CsrfField/>
                        <input type="hidden" name="id" value=approve_id.clone()/>
                        <button class="button" type="submit">"Approve"</button>
                    </ActionForm>
                    <ActionForm action=deny attr:class="inline">
                        <CsrfField/>
                        <input type="hidden" name="id" value=deny_id.clone()/>
                        <label for=reason_id.clone()>"Reason"</label>
                        " "
                        <input id=reason_id.clone() name="reason" type="text" required=true placeholder="the requester sees it"/>
                        " "
                        <button class="button button-danger" type="submit">"Deny"</button>
                    </ActionForm>
                </div>
            })}
        </section>
    }
}

#[component]
pub fn ApprovalsPage() -> impl IntoView {
    let approve = ServerAction::<ApproveRequest>::new();
    let deny = ServerAction::<DenyRequest>::new();
    let add_rule = ServerAction::<AddApprovalRule>::new();
    let remove_rule = ServerAction::<RemoveApprovalRule>::new();
    let data = Resource::new(
        move || {
            (
                approve.version().get(),
                deny.version().get(),
                add_rule.version().get(),
                remove_rule.version().get(),
            )
        },
        |_| approvals_page(),
    );
    let approve_error = action_error(approve);
    let deny_error = action_error(deny);
    let rule_error = action_error(add_rule);
    view! {
        <Title text="Approvals · Admin · Corral"/>
        <div class="page-head"><h1>"Approvals"</h1></div>
        {move || approve_error.get().map(|error| view! { <p class="banner banner-bad" role="alert">{error.to_string()}</p> })}
        {move || deny_error.get().map(|error| view! { <p class="banner banner-bad" role="alert">{error.to_string()}</p> })}
        <Loaded data render={move |page: ApprovalsPageData| {
            let requests = if page.requests.is_empty() {
                view! { <p class="muted">"No requests: nothing waits for a decision."</p> }.into_any()
            } else {
                page.requests
                    .into_iter()
                    .map(|request| request_card(request, approve, deny))
                    .collect_view()
                    .into_any()
            };
            let rules = page.rules.into_iter().map(|rule| view! {
                <tr>
                    <th scope="row">{rule.description}</th>
                    <td>{rule.approvers.unwrap_or_else(|| "tenant admins".to_owned())}</td>
                    <td>{format!("{} h", rule.window_secs / 3600)}</td>
                    <td>
                        <ActionForm action=remove_rule attr:class="inline">
                            <IdButton id=rule.id label="Remove" class="button button-small button-danger"/>
                        </ActionForm>
                    </td>
                </tr>
            }).collect_view();
            let groups = page.groups.into_iter().map(|group| view! {
                <tr><th scope="row">{group.name}</th><td>{group.members.join(", ")}</td></tr>
            }).collect_view();
            view! {
                <div data-testid="approval-requests">{requests}</div>
                <h2>"Rules"</h2>
                <p class="muted">"A create or a grow by a user (not an admin) waits for approval when the first of these matches it."</p>
                <DataTable card=true columns=&["Needs approval when", "Approvers", "Expires after", ""]>{rules}</DataTable>
                <h2>"Groups"</h2>
                <DataTable card=true columns=&["Group", "Members"]>{groups}</DataTable>
            }.into_any()
        }}/>
        <OnceLoaded data>
            <section class="card">
                <h2>"New rule"</h2>
                <AdminForm action=add_rule error=rule_error submit="Add rule">
                    <SelectField label="Needs approval when" id="rule-kind" name="kind" options=&[
                        ("size-above", "size is above"),
                        ("template", "template is"),
                        ("provider", "provider is"),
                    ]/>
                    <TextField label="Value" id="rule-value" name="value" error=rule_error required=true placeholder="e.g. 3"/>
                    <TextField label="Approver group (optional)" id="rule-approvers" name="approvers" error=rule_error/>
                    <TextField label="Expires after (hours)" id="rule-window" name="window_hours" error=rule_error inputmode="numeric" placeholder="24"/>
                </AdminForm>
            </section>
        </OnceLoaded>
    }
}
