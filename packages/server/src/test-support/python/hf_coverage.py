"""Runs every public method of huggingface_hub's HfApi against a hub and says what each did.

Driven by hf-python-client.test.ts: the hub's address and tokens come from the environment
(HF_ENDPOINT, HUB_COVERAGE_ALICE, HUB_COVERAGE_BOB, HUB_COVERAGE_ORG), and one JSON line per
method goes to stdout: {"method", "area", "outcome", "detail"}.

Outcomes:
  works           the call returned and its result was checked against what the hub holds
  refused         the hub answered 4xx/501 in its error schema: a clear refusal, nothing done
  wrong           the call returned but the check failed: a silent wrong answer
  crash           the client failed on the hub's answer (KeyError, a 5xx, a malformed body ...)
  unchecked       the hub answered a call no scenario checks yet (the test fails until one does)
  not-applicable  the method drives a cloud vendor's service that a self-hosted hub has no part in
"""

import inspect
import io
import json
import os
import struct
import sys
import tempfile
import traceback
import types

import httpx

from huggingface_hub import CommitOperationAdd, HfApi
from huggingface_hub.errors import HfHubHTTPError

ENDPOINT = os.environ["HF_ENDPOINT"]
ALICE = os.environ["HUB_COVERAGE_ALICE"]
BOB = os.environ["HUB_COVERAGE_BOB"]
ORG = os.environ["HUB_COVERAGE_ORG"]

api = HfApi(endpoint=ENDPOINT, token=ALICE)
bob = HfApi(endpoint=ENDPOINT, token=BOB)
MODEL = "alice/cov-model"
DATASET = "alice/cov-data"
work = tempfile.mkdtemp(prefix="hf-coverage-")

# Methods that drive a cloud vendor's machines or Hugging Face's own hosted services, with why.
NOT_APPLICABLE = {
    **{
        name: "Inference Endpoints are machines a cloud vendor runs for Hugging Face's customers"
        for name in [
            "create_inference_endpoint",
            "create_inference_endpoint_from_catalog",
            "delete_inference_endpoint",
            "get_inference_endpoint",
            "list_inference_catalog",
            "list_inference_endpoints",
            "list_inference_endpoints_hardware",
            "pause_inference_endpoint",
            "resume_inference_endpoint",
            "scale_to_zero_inference_endpoint",
            "update_inference_endpoint",
        ]
    },
    "run_as_future": "runs another method in a thread of the client; nothing reaches the hub",
    "list_dataset_parquet_files": "the client calls the Dataset Viewer only on huggingface.co and refuses any other endpoint",
    "get_full_repo_name": "answered by whoami; covered there",
    "wait_for_job": "polls inspect_job until a job ends; covered by inspect_job",
    "wait_for_space": "polls get_space_runtime until a Space runs; covered by get_space_runtime",
}

AREAS = [
    ("preupload", "files"),
    ("_model_tags", "repositories"),
    ("_dataset_tags", "repositories"),
    ("webhook", "webhooks"),
    ("collection", "collections"),
    ("discussion", "discussions and pull requests"),
    ("pull_request", "discussions and pull requests"),
    ("job", "jobs"),
    ("bucket", "buckets"),
    ("space", "spaces"),
    ("inference", "inference endpoints"),
    ("paper", "papers"),
    ("access", "access requests"),
    ("grant_access", "access requests"),
    ("lfs", "storage"),
    ("squash", "storage"),
    ("like", "likes"),
    ("follow", "users and organizations"),
    ("organization", "users and organizations"),
    ("user", "users and organizations"),
    ("whoami", "users and organizations"),
    ("branch", "refs"),
    ("tag", "refs"),
    ("refs", "refs"),
    ("revision", "refs"),
    ("commit", "files"),
    ("file", "files"),
    ("folder", "files"),
    ("upload", "files"),
    ("download", "files"),
    ("tree", "files"),
    ("paths_info", "files"),
    ("safetensors", "files"),
    ("checksums", "files"),
    ("parquet", "files"),
    ("leaderboard", "files"),
]


def area_of(name):
    for key, area in AREAS:
        if key in name:
            return area
    return "repositories"


def check(condition, message):
    if not condition:
        raise AssertionError(message)


SCENARIOS = {}


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


# --- users and organizations -------------------------------------------------------------

@scenario
def whoami():
    me = api.whoami()
    check(me["name"] == "alice", f"whoami names {me.get('name')}")
    check(any(org["name"] == ORG for org in me.get("orgs", [])), "whoami lists the organization")


@scenario
def get_user_overview():
    user = api.get_user_overview("alice")
    check(user.username == "alice", f"overview of {user.username}")


@scenario
def get_organization_overview():
    api.create_repo(f"{ORG}/cov-org-model")
    api.create_repo(f"{ORG}/cov-org-private", private=True)
    org = api.get_organization_overview(ORG)
    check(org.name == ORG and org.num_users == 1, f"overview {org.name} users={org.num_users}")
    check(org.num_models == 1 and org.num_datasets == 0, f"public models {org.num_models}, datasets {org.num_datasets}")


@scenario
def list_organization_members():
    members = [m.username for m in api.list_organization_members(ORG)]
    check("alice" in members, f"members {members}")


# --- repositories ------------------------------------------------------------------------

@scenario
def create_repo():
    url = api.create_repo(MODEL)
    check(url.repo_id == MODEL, f"created {url.repo_id}")
    api.create_repo(DATASET, repo_type="dataset", private=True)
    again = api.create_repo(MODEL, exist_ok=True)
    check(again.repo_id == MODEL, "exist_ok answers the existing repository")


@scenario
def repo_exists():
    check(api.repo_exists(MODEL), "an existing repository exists")
    check(not api.repo_exists("alice/no-such-repo"), "a missing repository does not")


@scenario
def model_info():
    info = api.model_info(MODEL)
    check(info.id == MODEL and info.sha and len(info.sha) == 40, f"model_info {info.id} {info.sha}")
    check(".gitattributes" in [s.rfilename for s in info.siblings or []], "siblings list .gitattributes")


@scenario
def dataset_info():
    info = api.dataset_info(DATASET)
    check(info.id == DATASET and info.private is True, f"dataset_info {info.id} private={info.private}")


@scenario
def repo_info():
    info = api.repo_info(DATASET, repo_type="dataset")
    check(info.id == DATASET, f"repo_info {info.id}")


@scenario
def list_models():
    ids = [m.id for m in api.list_models(author="alice")]
    check(MODEL in ids, f"list_models {ids}")


@scenario
def list_datasets():
    ids = [d.id for d in api.list_datasets(author="alice")]
    check(DATASET in ids, f"list_datasets {ids}")
    anonymous = [d.id for d in HfApi(endpoint=ENDPOINT, token=False).list_datasets(author="alice")]
    check(DATASET not in anonymous, "a private dataset is not listed to anonymous callers")


@scenario
def update_repo_settings():
    api.update_repo_settings(MODEL, gated="auto")
    check(api.model_info(MODEL).gated == "auto", "gated after update")
    api.update_repo_settings(MODEL, gated=False)
    check(api.model_info(MODEL).gated is False, "gating off again")


@scenario
def move_repo():
    api.create_repo("alice/cov-move")
    api.move_repo("alice/cov-move", "alice/cov-moved")
    check(api.repo_exists("alice/cov-moved"), "the repository answers at its new name")
    api.delete_repo("alice/cov-moved")


@scenario
def delete_repo():
    api.create_repo("alice/cov-doomed")
    api.delete_repo("alice/cov-doomed")
    check(not api.repo_exists("alice/cov-doomed"), "deleted repository is gone")


# --- files ---------------------------------------------------------------------------------

@scenario
def upload_file():
    info = api.upload_file(path_or_fileobj=b"hello", path_in_repo="hello.txt", repo_id=MODEL)
    check(info.oid and len(info.oid) == 40, f"commit {info.oid}")
    big = os.urandom(11 * 1024 * 1024)
    api.upload_file(path_or_fileobj=big, path_in_repo="weights.bin", repo_id=MODEL)
    path = api.hf_hub_download(MODEL, "weights.bin", cache_dir=os.path.join(work, "cache-upload"))
    with open(path, "rb") as f:
        check(f.read() == big, "the LFS file comes back byte for byte")


@scenario
def upload_folder():
    folder = os.path.join(work, "folder")
    os.makedirs(os.path.join(folder, "sub"), exist_ok=True)
    for name, text in [("a.txt", "A"), ("sub/b.txt", "B")]:
        with open(os.path.join(folder, name), "w") as f:
            f.write(text)
    api.upload_folder(repo_id=MODEL, folder_path=folder, path_in_repo="docs")
    files = api.list_repo_files(MODEL)
    check("docs/a.txt" in files and "docs/sub/b.txt" in files, f"files {files}")


@scenario
def create_commit():
    info = api.create_commit(
        MODEL,
        operations=[CommitOperationAdd("commit.txt", io.BytesIO(b"c"))],
        commit_message="By create_commit",
    )
    check(api.model_info(MODEL).sha == info.oid, "the branch head is the new commit")


@scenario
def preupload_lfs_files():
    op = CommitOperationAdd("pre.bin", os.urandom(11 * 1024 * 1024))
    api.preupload_lfs_files(MODEL, additions=[op])
    check(op._is_uploaded, "the LFS object was uploaded")
    api.create_commit(MODEL, operations=[op], commit_message="pre-uploaded")
    check("pre.bin" in api.list_repo_files(MODEL), "the pre-uploaded file is committed")


@scenario
def list_repo_files():
    files = api.list_repo_files(MODEL)
    check("hello.txt" in files and "weights.bin" in files, f"files {files}")


@scenario
def list_repo_tree():
    entries = {e.path: e for e in api.list_repo_tree(MODEL, recursive=True)}
    check("docs/sub/b.txt" in entries, f"tree {list(entries)}")
    check(entries["weights.bin"].lfs is not None, "LFS files carry their LFS facts")


@scenario
def get_paths_info():
    infos = {i.path: i for i in api.get_paths_info(MODEL, ["hello.txt", "docs", "nothing"])}
    check(set(infos) == {"hello.txt", "docs"}, f"paths {list(infos)}")
    check(infos["hello.txt"].size == 5, "size of hello.txt")


@scenario
def file_exists():
    check(api.file_exists(MODEL, "hello.txt"), "hello.txt exists")
    check(not api.file_exists(MODEL, "nope.txt"), "nope.txt does not")


@scenario
def hf_hub_download():
    path = api.hf_hub_download(MODEL, "hello.txt", cache_dir=os.path.join(work, "cache"))
    with open(path, "rb") as f:
        check(f.read() == b"hello", "downloaded content")


@scenario
def snapshot_download():
    path = api.snapshot_download(MODEL, cache_dir=os.path.join(work, "snap"), allow_patterns=["docs/*"])
    with open(os.path.join(path, "docs", "sub", "b.txt")) as f:
        check(f.read() == "B", "snapshot content")


@scenario
def get_hf_file_metadata():
    from huggingface_hub import hf_hub_url

    meta = api.get_hf_file_metadata(url=hf_hub_url(MODEL, "hello.txt", endpoint=ENDPOINT))
    check(meta.size == 5 and meta.commit_hash, f"metadata {meta}")


@scenario
def delete_file():
    api.upload_file(path_or_fileobj=b"x", path_in_repo="gone.txt", repo_id=MODEL)
    api.delete_file("gone.txt", MODEL)
    check(not api.file_exists(MODEL, "gone.txt"), "deleted file is gone")


@scenario
def delete_files():
    api.upload_file(path_or_fileobj=b"x", path_in_repo="tmp/one.txt", repo_id=MODEL)
    api.delete_files(MODEL, delete_patterns=["tmp/*"])
    check(not api.file_exists(MODEL, "tmp/one.txt"), "pattern-deleted file is gone")


@scenario
def delete_folder():
    api.upload_file(path_or_fileobj=b"x", path_in_repo="old/one.txt", repo_id=MODEL)
    api.delete_folder("old", MODEL)
    check(not api.file_exists(MODEL, "old/one.txt"), "deleted folder is gone")


@scenario
def list_repo_commits():
    commits = api.list_repo_commits(MODEL)
    check(any(c.title == "By create_commit" for c in commits), f"titles {[c.title for c in commits]}")


@scenario
def upload_large_folder():
    folder = os.path.join(work, "large")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "large.txt"), "w") as f:
        f.write("L")
    api.upload_large_folder(repo_id=MODEL, folder_path=folder, repo_type="model", print_report=False)
    check(api.file_exists(MODEL, "large.txt"), "large folder uploaded")


@scenario
def resolve_revision():
    revision = api.resolve_revision(MODEL)
    check(revision.resolved == api.model_info(MODEL).sha, f"resolved {revision.resolved}")


def safetensors_bytes():
    header = json.dumps({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
    return struct.pack("<Q", len(header)) + header + b"\x00" * 8


@scenario
def get_safetensors_metadata():
    api.upload_file(path_or_fileobj=safetensors_bytes(), path_in_repo="model.safetensors", repo_id=MODEL)
    meta = api.get_safetensors_metadata(MODEL)
    check(meta.parameter_count == {"F32": 2}, f"parameters {meta.parameter_count}")


@scenario
def parse_safetensors_file_metadata():
    meta = api.parse_safetensors_file_metadata(MODEL, "model.safetensors")
    check(list(meta.tensors) == ["w"] and meta.tensors["w"].shape == [2], f"tensors {meta.tensors}")


@scenario
def verify_repo_checksums():
    api.snapshot_download(MODEL, cache_dir=os.path.join(work, "verify"))
    result = api.verify_repo_checksums(MODEL, cache_dir=os.path.join(work, "verify"))
    check(not result.mismatches and not result.missing_paths, f"verification {result}")


@scenario
def list_spaces():
    api.create_repo("alice/cov-space", repo_type="space", space_sdk="static")
    ids = [s.id for s in api.list_spaces(author="alice")]
    check(ids == ["alice/cov-space"], f"list_spaces {ids}")


@scenario
def space_info():
    info = api.space_info("alice/cov-space")
    check(info.id == "alice/cov-space", f"space_info {info.id}")


@scenario
def permanently_delete_lfs_files():
    weights = next(e for e in api.list_repo_tree(MODEL) if e.path == "weights.bin")
    api.permanently_delete_lfs_files(MODEL, [types.SimpleNamespace(file_oid=weights.lfs.sha256)])
    check(not api.file_exists(MODEL, "weights.bin"), "the file whose LFS object was deleted is gone")


# --- refs ----------------------------------------------------------------------------------

@scenario
def create_branch():
    api.create_branch(MODEL, branch="dev")
    check("dev" in [b.name for b in api.list_repo_refs(MODEL).branches], "dev listed")


@scenario
def list_repo_refs():
    refs = api.list_repo_refs(MODEL)
    check("main" in [b.name for b in refs.branches], f"branches {refs.branches}")


@scenario
def create_tag():
    api.create_tag(MODEL, tag="v1", tag_message="First")
    check("v1" in [t.name for t in api.list_repo_refs(MODEL).tags], "v1 listed")


@scenario
def revision_exists():
    check(api.revision_exists(MODEL, "v1"), "tag v1 exists")
    check(not api.revision_exists(MODEL, "v9"), "v9 does not")


@scenario
def delete_tag():
    api.delete_tag(MODEL, tag="v1")
    check("v1" not in [t.name for t in api.list_repo_refs(MODEL).tags], "v1 gone")


@scenario
def delete_branch():
    api.delete_branch(MODEL, branch="dev")
    check("dev" not in [b.name for b in api.list_repo_refs(MODEL).branches], "dev gone")


# --- papers --------------------------------------------------------------------------------

@scenario
def paper_info():
    # The hub has no internet: a paper is known once an account submits it.
    submitted = httpx.post(
        f"{ENDPOINT}/api/me/paper-submissions",
        headers={"authorization": f"Bearer {ALICE}"},
        json={"arxivId": "2401.00001", "title": "A paper", "authors": ["Alice Author"]},
    )
    check(submitted.status_code == 201, f"submission answered {submitted.status_code}")
    paper = api.paper_info("2401.00001")
    check(paper.id == "2401.00001" and paper.title == "A paper", f"paper {paper.id} {paper.title}")
    check([a.name for a in paper.authors] == ["Alice Author"], f"authors {paper.authors}")


@scenario
def list_papers():
    found = [p.id for p in api.list_papers(query="2401.0000")]
    check(found == ["2401.00001"], f"found {found}")
    check([p.id for p in api.list_papers(query="no such paper")] == [], "an unmatched query finds nothing")


# --- webhooks --------------------------------------------------------------------------------

@scenario
def auth_check():
    api.auth_check(MODEL)
    api.auth_check(MODEL, write=True)
    try:
        bob.auth_check(DATASET, repo_type="dataset")
    except HfHubHTTPError:
        return
    raise AssertionError("bob may check a private dataset of alice's")


HOOK = {}


@scenario
def create_webhook():
    hook = api.create_webhook(url="https://example.com/hook", watched=[{"type": "model", "name": MODEL}], domains=["repo"])
    check(hook.secret and hook.secret.startswith("whsec_"), "the signing secret is shown once, at creation")
    check(hook.watched[0].name == MODEL and hook.disabled is False, f"created {hook}")
    HOOK["id"] = hook.id
    try:
        api.create_webhook(url="https://example.com/hook", watched=[{"type": "user", "name": "alice"}], secret="mine")
    except HfHubHTTPError as err:
        check(err.response.status_code == 400, "a chosen secret is refused")
    else:
        raise AssertionError("a secret the caller chose was accepted and would be ignored")


@scenario
def list_webhooks():
    hooks = api.list_webhooks()
    check([h.id for h in hooks] == [HOOK["id"]], f"listed {[h.id for h in hooks]}")
    check(all(h.secret is None for h in hooks), "the secret is never listed")


@scenario
def get_webhook():
    hook = api.get_webhook(HOOK["id"])
    check(hook.url == "https://example.com/hook" and hook.secret is None, f"got {hook}")


@scenario
def update_webhook():
    hook = api.update_webhook(HOOK["id"], url="https://example.com/other", domains=["repo.content"])
    check(hook.url == "https://example.com/other" and hook.domains == ["repo.content"], f"updated {hook}")
    check(hook.watched[0].name == MODEL, "watched items stay when not given")


@scenario
def disable_webhook():
    check(api.disable_webhook(HOOK["id"]).disabled is True, "disabled")
    check(api.get_webhook(HOOK["id"]).disabled is True, "stays disabled")


@scenario
def enable_webhook():
    check(api.enable_webhook(HOOK["id"]).disabled is False, "enabled")


@scenario
def delete_webhook():
    api.delete_webhook(HOOK["id"])
    check(api.list_webhooks() == [], "no routes left")


# --- access requests -------------------------------------------------------------------------

@scenario
def list_pending_access_requests():
    api.update_repo_settings(MODEL, gated="manual")
    bob_requests = HfApi(endpoint=ENDPOINT, token=BOB)
    try:
        bob_requests.hf_hub_download(MODEL, "hello.txt", cache_dir=os.path.join(work, "bob"))
        raise AssertionError("bob downloaded a gated file without access")
    except HfHubHTTPError:
        pass
    requests = list(api.list_pending_access_requests(MODEL))
    check(requests == [], f"nobody asked yet, pending {requests}")


@scenario
def grant_access():
    api.grant_access(MODEL, "bob")
    accepted = [r.username for r in api.list_accepted_access_requests(MODEL)]
    check("bob" in accepted, f"accepted {accepted}")
    path = bob.hf_hub_download(MODEL, "hello.txt", cache_dir=os.path.join(work, "bob2"))
    with open(path, "rb") as f:
        check(f.read() == b"hello", "bob downloads once granted")


@scenario
def list_accepted_access_requests():
    accepted = [r.username for r in api.list_accepted_access_requests(MODEL)]
    check("bob" in accepted, f"accepted {accepted}")


@scenario
def reject_access_request():
    api.reject_access_request(MODEL, "bob", rejection_reason="Not now")
    rejected = [r.username for r in api.list_rejected_access_requests(MODEL)]
    check("bob" in rejected, f"rejected {rejected}")


@scenario
def list_rejected_access_requests():
    rejected = [r.username for r in api.list_rejected_access_requests(MODEL)]
    check("bob" in rejected, f"rejected {rejected}")


@scenario
def accept_access_request():
    api.accept_access_request(MODEL, "bob")
    accepted = [r.username for r in api.list_accepted_access_requests(MODEL)]
    check("bob" in accepted, f"accepted {accepted}")


@scenario
def cancel_access_request():
    api.cancel_access_request(MODEL, "bob")
    pending = [r.username for r in api.list_pending_access_requests(MODEL)]
    accepted = [r.username for r in api.list_accepted_access_requests(MODEL)]
    check("bob" in pending and "bob" not in accepted, f"pending {pending} accepted {accepted}")
    api.update_repo_settings(MODEL, gated=False)


# Methods run first, in this order, because later ones use what they make.
FIRST = [
    "whoami",
    "create_repo",
    "create_webhook",
    "list_webhooks",
    "get_webhook",
    "update_webhook",
    "disable_webhook",
    "enable_webhook",
    "delete_webhook",
    "upload_file",
    "upload_folder",
    "create_commit",
    "create_branch",
    "create_tag",
    "paper_info",
]
LAST = [
    "list_pending_access_requests",
    "grant_access",
    "list_accepted_access_requests",
    "reject_access_request",
    "list_rejected_access_requests",
    "accept_access_request",
    "cancel_access_request",
    "delete_tag",
    "delete_branch",
    "move_repo",
    "delete_repo",
]

# Arguments for methods without a scenario: a plausible call whose answer can only be a refusal
# (or a crash) until the hub serves the method, at which point a scenario with a check is due.
PLACEHOLDERS = {
    "repo_id": MODEL,
    "collection_slug": "alice/collection-0123456789abcdef",
    "discussion_num": 1,
    "name": "cov",
    "job_id": "0123456789abcdef",
    "scheduled_job_id": "0123456789abcdef",
    "webhook_id": "0123456789abcdef",
    "user": "bob",
    "key": "KEY",
    "value": "value",
    "from_id": MODEL,
    "to_id": "alice/cov-copy",
    "title": "A title",
    "path_in_repo": "hello.txt",
    "filename": "weights.safetensors",
    "organization": ORG,
    "username": "alice",
    "source": "hf://alice/cov-model",
    "destination": "hf://alice/cov-copy",
    "branch": "main",
    "image": "python:3.12",
    "command": ["true"],
    "schedule": "@hourly",
    "script": "print(1)",
    "tag": "v1",
    "item_object_id": "0123456789abcdef",
    "comment_id": "0123456789abcdef",
    "paths": ["a.txt"],
    "id": "2401.00001",
    "labels": {"a": "b"},
    "folder_path": work,
    "item_id": MODEL,
    "item_type": "model",
    "new_status": "closed",
    "comment": "A comment",
    "watched": [{"type": "user", "name": "alice"}],
    "lfs_files": [],
    "rejection_reason": "No",
    "new_title": "New title",
    "hardware": "cpu-basic",
    "storage": "small",
    "revision": "main",
    "query": "model",
    "sleep_time": 3600,
    "volumes": [],
    "mount_path": "/data",
    "resource_group_id": "0123456789abcdef",
    "new_content": "Edited",
    "url": "https://example.com/hook",
    "bucket_id": "alice/bucket",
    "files": [],
    "remote_path": "a.txt",
    "repository": MODEL,
    "repo_type": "model",
    "model_id": "cov-model",
}


# Optional arguments some placeholder calls need so that they reach the hub at all.
PLACEHOLDER_EXTRAS = {
    "create_webhook": {"url": "https://example.com/hook"},
    "batch_bucket_files": {"delete": ["a.txt"]},
    "download_bucket_files": {"files": [("a.txt", os.path.join(work, "bucket-a.txt"))]},
    "sync_bucket": {"source": work, "dest": "hf://buckets/alice/bucket"},
    "sync_job_volume": {"source": work},
}


def placeholder_call(name):
    method = getattr(api, name)
    kwargs = dict(PLACEHOLDER_EXTRAS.get(name, {}))
    for param in inspect.signature(method).parameters.values():
        if param.default is inspect.Parameter.empty and param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            if param.name in kwargs:
                continue
            if param.name not in PLACEHOLDERS:
                raise KeyError(f"no placeholder for {param.name}")
            kwargs[param.name] = PLACEHOLDERS[param.name]
    result = method(**kwargs)
    if inspect.isgenerator(result) or hasattr(result, "__next__"):
        result = list(result)
    return result


def classify(name, run):
    try:
        run()
        return "works", ""
    except AssertionError as err:
        return "wrong", str(err)[:300]
    except (HfHubHTTPError, httpx.HTTPStatusError) as err:
        response = err.response
        status = response.status_code if response is not None else 0
        try:
            body = response.json() if response is not None else {}
        except Exception:
            body = {}
        code = body.get("code") if isinstance(body, dict) else None
        # A HEAD answer has no body: the hub says why in X-Error-Message.
        if code is None and response is not None and response.request.method == "HEAD":
            code = response.headers.get("x-error-message") and "(HEAD) " + response.headers["x-error-message"][:60]
        if (400 <= status < 500 or status == 501) and code:
            return "refused", f"{status} {code}"
        return "crash", f"{status} {str(err)[:200]}"
    except Exception as err:  # the client choked on what the hub answered
        return "crash", f"{type(err).__name__}: {str(err)[:200]} @ {traceback.format_exc(limit=-1).strip()[-160:]}"


def main():
    names = sorted(n for n, f in inspect.getmembers(HfApi, inspect.isfunction) if not n.startswith("_"))
    ordered = FIRST + [n for n in names if n not in FIRST and n not in LAST] + LAST
    for name in ordered:
        if name not in names:
            continue
        if name in NOT_APPLICABLE:
            outcome, detail = "not-applicable", NOT_APPLICABLE[name]
        elif name in SCENARIOS:
            outcome, detail = classify(name, SCENARIOS[name])
        else:
            outcome, detail = classify(name, lambda: placeholder_call(name))
            if outcome == "works":
                outcome, detail = "unchecked", "answered, but no scenario checks the answer yet"
        print(json.dumps({"method": name, "area": area_of(name), "outcome": outcome, "detail": detail}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
