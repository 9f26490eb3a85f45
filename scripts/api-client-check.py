"""Drives a live Corral server through a Python client generated from its own OpenAPI
document (openapi-python-client): a dry run, a create, a change and a delete of one
cluster, each job waited for, then the deleted cluster and an unknown one read back. It proves the document describes the API well enough
for a generated client to use it; every step is bounded in time.

Usage: api-client-check.py BASE_URL TOKEN (the generated package on PYTHONPATH).
"""

import sys
import time

from corral_api_client import AuthenticatedClient
from corral_api_client.api.clusters import change, create, delete_cluster, show_cluster
from corral_api_client.api.jobs import show_job
from corral_api_client.models import (
    ClusterCreateRequest,
    ClusterDetail,
    ClusterState,
    ErrorBody,
    ErrorCode,
    JobState,
    JobView,
    PlanView,
    RestartChange,
    RestartChangeOperation,
    SubmittedJob,
)

JOB_TIMEOUT_S = 120


def fail(message):
    print(f"api-client-check: {message}", file=sys.stderr)
    sys.exit(1)


def expect(answer, kind, what):
    if not isinstance(answer, kind):
        fail(f"{what}: expected {kind.__name__}, got {answer!r}")
    return answer


def wait(client, job_id, what):
    deadline = time.monotonic() + JOB_TIMEOUT_S
    while time.monotonic() < deadline:
        job = expect(show_job.sync(job_id, client=client), JobView, f"{what} job")
        if job.state == JobState.SUCCEEDED:
            print(f"api-client-check: {what}: {job.tasks_succeeded}/{job.tasks_total} tasks")
            return
        if job.state in (JobState.FAILED, JobState.CANCELLED):
            fail(f"{what} job {job_id} {job.state.value}: {job.error}")
        time.sleep(0.25)
    fail(f"{what} job {job_id} did not finish in {JOB_TIMEOUT_S} s")


def main():
    base, token = sys.argv[1], sys.argv[2]
    client = AuthenticatedClient(base_url=base, token=token, raise_on_unexpected_status=True)
    # Services that need no plugin resource (the lifecycle template's `web` runs a script
    # the tests upload elsewhere).
    request = ClusterCreateRequest(
        name="generated-client", template="lifecycle", size=2, services=["base", "worker"]
    )
    plan = expect(create.sync(client=client, body=request, dry_run=True), PlanView, "dry run")
    if plan.tasks == 0:
        fail("the dry run plans no tasks")
    submitted = expect(create.sync(client=client, body=request), SubmittedJob, "create")
    cluster_id = submitted.cluster.id
    wait(client, submitted.job_id, "create")
    restart = RestartChange(operation=RestartChangeOperation.RESTART)
    submitted = expect(change.sync(cluster_id, client=client, body=restart), SubmittedJob, "restart")
    wait(client, submitted.job_id, "restart")
    submitted = expect(delete_cluster.sync(cluster_id, client=client), SubmittedJob, "delete")
    wait(client, submitted.job_id, "delete")
    # A deleted cluster stays readable by id (its history), with no nodes left.
    deleted = expect(show_cluster.sync(cluster_id, client=client), ClusterDetail, "the deleted cluster")
    if deleted.state != ClusterState.DELETED or deleted.nodes:
        fail(f"the deleted cluster is {deleted.state.value} with {len(deleted.nodes)} node(s)")
    unknown = "00000000-0000-4000-8000-000000000000"
    missing = expect(show_cluster.sync(unknown, client=client), ErrorBody, "an unknown cluster")
    if missing.error != ErrorCode.NOT_FOUND:
        fail(f"an unknown cluster answers {missing.error.value}, not not_found")
    print("api-client-check: a generated client created, changed and deleted a cluster")


if __name__ == "__main__":
    main()
