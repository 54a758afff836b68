"""Runs every public method of huggingface_hub's HfApi against a hub and says what each did.

Driven by hf-python-client.test.ts: the hub's address and tokens come from the environment
(HF_ENDPOINT, HUB_COVERAGE_ALICE, HUB_COVERAGE_BOB, HUB_COVERAGE_ORG; alice owns the organization,
bob is a second account), and one JSON line per method goes to stdout:
{"method", "variant", "area", "outcome", "detail"}.

HfApi's public methods are found by introspection, so a new client version's methods show up. Each
runs through a scenario below (its setup, the call, and a check of the answer against what the hub
holds), in the order the scenarios are written. A method without a scenario is called with
placeholder arguments: a refusal is all it may answer, since nothing checks a success. A few methods
also run as variants: the same method with a parameter the hub must honour or refuse by name
(create_pr, listing filters, expand ...), each its own line.

Outcomes:
  works           the call returned and its result was checked against what the hub holds
  refused         the hub answered 4xx/501 in its error schema and did nothing
  wrong           the call returned but the check failed (a silent wrong answer), or a refused call
                  changed something anyway
  crash           the client failed on the hub's answer (KeyError, a 5xx, a malformed body ...)
  unchecked       the hub answered a call no scenario checks yet (the test fails until one does)
  not-applicable  the method cannot apply to a self-hosted hub; NOT_APPLICABLE says why
"""

import hashlib
import inspect
import io
import json
import os
import struct
import sys
import tempfile
import time
import traceback

import httpx2

from huggingface_hub import CommitOperationAdd, HfApi, hf_hub_url
from huggingface_hub.errors import (
    GatedRepoError,
    HfHubHTTPError,
    RemoteEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from huggingface_hub.utils import hf_raise_for_status

ENDPOINT = os.environ["HF_ENDPOINT"]
ALICE = os.environ["HUB_COVERAGE_ALICE"]
BOB = os.environ["HUB_COVERAGE_BOB"]
ORG = os.environ["HUB_COVERAGE_ORG"]

api = HfApi(endpoint=ENDPOINT, token=ALICE)
bob = HfApi(endpoint=ENDPOINT, token=BOB)
anonymous = HfApi(endpoint=ENDPOINT, token=False)
MODEL = "alice/cov-model"
DATASET = "alice/cov-data"
SPACE = "alice/cov-space"
work = tempfile.mkdtemp(prefix="hf-coverage-")
# What earlier scenarios made and later ones read.
state = {}

# Methods that cannot apply to a self-hosted hub by nature, with why. Keep this short.
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
    "list_dataset_parquet_files": "the client asks huggingface.co's Dataset Viewer and raises ValueError for any other endpoint",
}

AREAS = [
    ("preupload", "files"),
    ("attachment", "discussions and pull requests"),
    ("zero_gpu", "spaces"),
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
    ("leaderboard", "others"),
    ("run_as_future", "others"),
    ("get_full_repo_name", "others"),
]


def area_of(name):
    for key, area in AREAS:
        if key in name:
            return area
    return "repositories"


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def refused(call, *statuses, kind=HfHubHTTPError):
    """The call must be refused (one of statuses), raising kind in the client; a success is a wrong answer."""
    try:
        call()
    except HfHubHTTPError as err:
        status = err.response.status_code if err.response is not None else 0
        check(status in statuses, f"refused with {status}, not {statuses}")
        check(isinstance(err, kind), f"the client raised {type(err).__name__}, not {kind.__name__}")
        return
    raise AssertionError(f"accepted a call that must be refused with {statuses}")


class unchanged:
    """A refused call did nothing: the branch still points where it did."""

    def __init__(self, repo_id, repo_type="model", revision="main"):
        self.args = (repo_id, repo_type, revision)

    def head(self):
        repo_id, repo_type, revision = self.args
        return api.repo_info(repo_id, repo_type=repo_type, revision=revision).sha

    def __enter__(self):
        self.before = self.head()
        return self

    def __exit__(self, kind, err, _tb):
        if kind is not None and issubclass(kind, HfHubHTTPError):
            after = self.head()
            if after != self.before:
                raise AssertionError(f"refused, but {self.args[0]}@{self.args[2]} moved to {after}") from err
        return False


def call_hub(method, path, token=ALICE, **kwargs):
    """A request the client has no method for (setup only), raising as the client would."""
    headers = {"authorization": f"Bearer {token}"} if token else {}
    response = httpx2.request(method, f"{ENDPOINT}{path}", headers=headers, **kwargs)
    hf_raise_for_status(response)
    return response


def read(path):
    with open(path, "rb") as f:
        return f.read()


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def made(key, make):
    """What an earlier scenario made, or made now: where making it is refused, the dependent is refused too."""
    if key not in state:
        state[key] = make()
    return state[key]


SCENARIOS = {}


def scenario(method, variant=""):
    def register(fn):
        SCENARIOS[(method, variant)] = fn
        return fn

    return register


# --- users and organizations -------------------------------------------------------------


@scenario("whoami")
def _():
    me = api.whoami()
    check(me["name"] == "alice" and me["type"] == "user", f"whoami names {me.get('name')}")
    check(any(org["name"] == ORG for org in me.get("orgs", [])), "whoami lists the organization")
    check(bob.whoami()["name"] == "bob", "bob's token is bob's")


@scenario("get_full_repo_name")
def _():
    check(api.get_full_repo_name("x") == "alice/x", "a name in the caller's namespace")
    check(api.get_full_repo_name("x", organization=ORG) == f"{ORG}/x", "a name in the organization")


@scenario("create_repo")
def _():
    url = api.create_repo(MODEL)
    check(url.repo_id == MODEL and url.repo_type == "model", f"created {url.repo_id}")
    check(url.startswith(f"{ENDPOINT}/{MODEL}"), f"the URL is on this hub: {url}")
    dataset = api.create_repo(DATASET, repo_type="dataset", private=True)
    check(dataset.repo_type == "dataset", f"created a {dataset.repo_type}")
    again = api.create_repo(MODEL, exist_ok=True)
    check(again.repo_id == MODEL, "exist_ok answers the existing repository")
    refused(lambda: api.create_repo(MODEL), 409)


@scenario("get_user_overview")
def _():
    user = api.get_user_overview("alice")
    check(user.username == "alice", f"overview of {user.username}")
    check(user.num_models == 1 and user.num_datasets == 0, f"public models {user.num_models}, datasets {user.num_datasets}")


@scenario("get_organization_overview")
def _():
    api.create_repo(f"{ORG}/cov-org-model")
    api.create_repo(f"{ORG}/cov-org-private", private=True)
    org = api.get_organization_overview(ORG)
    check(org.name == ORG and org.num_users == 1, f"overview {org.name} users={org.num_users}")
    check(org.num_models == 1 and org.num_datasets == 0, f"public models {org.num_models}, datasets {org.num_datasets}")


@scenario("list_organization_members")
def _():
    members = [m.username for m in api.list_organization_members(ORG)]
    check(members == ["alice"], f"members {members}")


def follow(path):
    """bob follows path (a user or an organization). Where the hub has no such route, nobody follows anyone."""
    try:
        call_hub("POST", f"{path}/follow", token=BOB)
        return True
    except HfHubHTTPError as err:
        if err.response is not None and err.response.status_code in (404, 405):
            return False
        raise


@scenario("list_user_followers")
def _():
    followed = follow("/api/users/alice")
    state["followed"] = followed
    followers = [u.username for u in api.list_user_followers("alice")]
    check(followers == (["bob"] if followed else []), f"followers of alice {followers} (bob follows: {followed})")
    check(list(api.list_user_followers("bob")) == [], "nobody follows bob")


@scenario("list_user_following")
def _():
    following = [u.username for u in api.list_user_following("bob")]
    check(following == (["alice"] if state.get("followed") else []), f"bob follows {following}")
    check(list(api.list_user_following("alice")) == [], "alice follows nobody")


@scenario("list_organization_followers")
def _():
    followed = follow(f"/api/organizations/{ORG}")
    followers = [u.username for u in api.list_organization_followers(ORG)]
    check(followers == (["bob"] if followed else []), f"followers of {ORG} {followers} (bob follows: {followed})")


@scenario("list_user_repos")
def _():
    mine = {r.id: r for r in api.list_user_repos()}
    check(MODEL in mine and DATASET in mine, f"alice's repositories {list(mine)}")
    check(mine[DATASET].type == "dataset" and mine[DATASET].visibility == "private", f"dataset {mine[DATASET]}")
    org = [r.id for r in api.list_user_repos(namespace=ORG)]
    check(sorted(org) == [f"{ORG}/cov-org-model", f"{ORG}/cov-org-private"], f"organization repositories {org}")


# --- repositories ------------------------------------------------------------------------


@scenario("repo_exists")
def _():
    check(api.repo_exists(MODEL), "an existing repository exists")
    check(not api.repo_exists("alice/no-such-repo"), "a missing repository does not")
    check(not bob.repo_exists(DATASET, repo_type="dataset"), "bob does not see alice's private dataset")


@scenario("model_info")
def _():
    info = api.model_info(MODEL)
    check(info.id == MODEL and info.sha and len(info.sha) == 40, f"model_info {info.id} {info.sha}")
    check(".gitattributes" in [s.rfilename for s in info.siblings or []], "siblings list .gitattributes")
    check(info.private is False and info.author == "alice", f"private {info.private}, author {info.author}")
    refused(lambda: api.model_info("alice/no-such-repo"), 404, kind=RepositoryNotFoundError)
    refused(lambda: api.model_info(MODEL, revision="no-such-branch"), 404, kind=RevisionNotFoundError)


@scenario("dataset_info")
def _():
    info = api.dataset_info(DATASET)
    check(info.id == DATASET and info.private is True, f"dataset_info {info.id} private={info.private}")
    refused(lambda: bob.dataset_info(DATASET), 404, kind=RepositoryNotFoundError)
    refused(lambda: anonymous.dataset_info(DATASET), 401, kind=RepositoryNotFoundError)


@scenario("repo_info")
def _():
    info = api.repo_info(DATASET, repo_type="dataset")
    check(info.id == DATASET, f"repo_info {info.id}")


@scenario("list_models")
def _():
    ids = [m.id for m in api.list_models(author="alice")]
    check(ids == [MODEL], f"list_models {ids}")
    found = sorted(m.id for m in api.list_models(search="cov-org"))
    check(found == [f"{ORG}/cov-org-model", f"{ORG}/cov-org-private"], f"search finds {found}")
    public = [m.id for m in anonymous.list_models(search="cov-org")]
    check(public == [f"{ORG}/cov-org-model"], f"anonymous search finds {public}")


@scenario("list_datasets")
def _():
    ids = [d.id for d in api.list_datasets(author="alice")]
    check(ids == [DATASET], f"list_datasets {ids}")
    hidden = [d.id for d in anonymous.list_datasets(author="alice")]
    check(hidden == [], "a private dataset is not listed to anonymous callers")


@scenario("update_repo_settings")
def _():
    api.update_repo_settings(MODEL, gated="auto")
    check(api.model_info(MODEL).gated == "auto", "gated after update")
    api.update_repo_settings(MODEL, gated=False)
    check(api.model_info(MODEL).gated is False, "gating off again")
    api.update_repo_settings(DATASET, repo_type="dataset", private=False)
    check(anonymous.dataset_info(DATASET).private is False, "made public")
    api.update_repo_settings(DATASET, repo_type="dataset", private=True)
    check(not anonymous.repo_exists(DATASET, repo_type="dataset"), "private again")


@scenario("get_model_tags")
def _():
    tags = api.get_model_tags()
    check(isinstance(tags, dict) and tags, f"tags by type {str(tags)[:100]}")
    for kind, items in tags.items():
        check(all(item["type"] == kind and item["id"] and item["label"] for item in items), f"{kind} tags {items[:2]}")


@scenario("get_dataset_tags")
def _():
    tags = api.get_dataset_tags()
    check(isinstance(tags, dict) and tags, f"tags by type {str(tags)[:100]}")
    for kind, items in tags.items():
        check(all(item["type"] == kind and item["id"] and item["label"] for item in items), f"{kind} tags {items[:2]}")


@scenario("run_as_future")
def _():
    future = api.run_as_future(api.model_info, MODEL)
    check(future.result(timeout=30).id == MODEL, "the future answers the call it ran")


@scenario("auth_check")
def _():
    api.auth_check(MODEL)
    api.auth_check(MODEL, write=True)
    bob.auth_check(MODEL)
    refused(lambda: bob.auth_check(MODEL, write=True), 403, 404)
    refused(lambda: bob.auth_check(DATASET, repo_type="dataset"), 403, 404)


# --- files ---------------------------------------------------------------------------------


@scenario("upload_file")
def _():
    info = api.upload_file(path_or_fileobj=b"hello", path_in_repo="hello.txt", repo_id=MODEL)
    check(info.oid and len(info.oid) == 40 and info.pr_url is None, f"commit {info.oid}")
    check(api.model_info(MODEL).sha == info.oid, "main is the new commit")
    state["hello_commit"] = info.oid
    big = os.urandom(11 * 1024 * 1024)
    state["weights"] = big
    api.upload_file(path_or_fileobj=big, path_in_repo="weights.bin", repo_id=MODEL)
    path = api.hf_hub_download(MODEL, "weights.bin", cache_dir=os.path.join(work, "cache-upload"))
    check(read(path) == big, "the LFS file comes back byte for byte")


@scenario("upload_file", "create_pr=True")
def _():
    with unchanged(MODEL):
        info = api.upload_file(path_or_fileobj=b"proposed", path_in_repo="proposal.txt", repo_id=MODEL, create_pr=True)
    check(api.model_info(MODEL).sha != info.oid, "the commit went to main, not to a pull request")
    check(info.pr_url and info.pr_num and info.pr_revision == f"refs/pr/{info.pr_num}", f"pull request {info.pr_url}")
    check(not api.file_exists(MODEL, "proposal.txt"), "main holds the proposed file")
    check(api.file_exists(MODEL, "proposal.txt", revision=info.pr_revision), "the pull request holds the file")


@scenario("upload_folder")
def _():
    folder = os.path.join(work, "folder")
    os.makedirs(os.path.join(folder, "sub"), exist_ok=True)
    for name, text in [("a.txt", "A"), ("sub/b.txt", "B")]:
        with open(os.path.join(folder, name), "w") as f:
            f.write(text)
    api.upload_folder(repo_id=MODEL, folder_path=folder, path_in_repo="docs")
    files = api.list_repo_files(MODEL)
    check("docs/a.txt" in files and "docs/sub/b.txt" in files, f"files {files}")


@scenario("create_commit")
def _():
    info = api.create_commit(
        MODEL,
        operations=[CommitOperationAdd("commit.txt", io.BytesIO(b"c"))],
        commit_message="By create_commit",
        commit_description="A description",
    )
    check(api.model_info(MODEL).sha == info.oid, "the branch head is the new commit")
    check(info.commit_url == f"{ENDPOINT}/{MODEL}/commit/{info.oid}", f"commit URL {info.commit_url}")
    state["commit"] = info.oid


@scenario("create_commit", "parent_commit=stale")
def _():
    with unchanged(MODEL):
        refused(
            lambda: api.create_commit(
                MODEL,
                operations=[CommitOperationAdd("stale.txt", io.BytesIO(b"s"))],
                commit_message="On a stale parent",
                parent_commit=state["hello_commit"],
            ),
            409,
            412,
        )


@scenario("preupload_lfs_files")
def _():
    op = CommitOperationAdd("pre.bin", os.urandom(11 * 1024 * 1024))
    api.preupload_lfs_files(MODEL, additions=[op])
    check(op._is_uploaded, "the LFS object was uploaded")
    api.create_commit(MODEL, operations=[op], commit_message="pre-uploaded")
    check("pre.bin" in api.list_repo_files(MODEL), "the pre-uploaded file is committed")


@scenario("list_repo_files")
def _():
    files = api.list_repo_files(MODEL)
    check("hello.txt" in files and "weights.bin" in files and "docs/sub/b.txt" in files, f"files {files}")


@scenario("list_repo_tree")
def _():
    entries = {e.path: e for e in api.list_repo_tree(MODEL, recursive=True)}
    check("docs/sub/b.txt" in entries and "docs/sub" in entries, f"tree {list(entries)}")
    check(entries["weights.bin"].lfs is not None and entries["weights.bin"].lfs.sha256 == sha256(state["weights"]), "LFS facts")
    check(entries["hello.txt"].size == 5 and entries["hello.txt"].lfs is None, "a regular file's size")
    top = [e.path for e in api.list_repo_tree(MODEL)]
    check("docs" in top and "docs/a.txt" not in top, f"without recursive, one level: {top}")


@scenario("list_repo_tree", "expand=True")
def _():
    entries = {e.path: e for e in api.list_repo_tree(MODEL, expand=True)}
    hello = entries["hello.txt"]
    check(hello.last_commit is not None and hello.last_commit.oid == state["hello_commit"], f"last commit {hello.last_commit}")
    check(hello.last_commit.title and hello.last_commit.date, f"last commit {hello.last_commit}")


@scenario("get_paths_info")
def _():
    infos = {i.path: i for i in api.get_paths_info(MODEL, ["hello.txt", "docs", "nothing"])}
    check(set(infos) == {"hello.txt", "docs"}, f"paths {list(infos)}")
    check(infos["hello.txt"].size == 5, "size of hello.txt")


@scenario("get_paths_info", "expand=True")
def _():
    infos = {i.path: i for i in api.get_paths_info(MODEL, ["hello.txt"], expand=True)}
    last = infos["hello.txt"].last_commit
    check(last is not None and last.oid == state["hello_commit"], f"last commit {last}")


@scenario("model_info", "files_metadata=True")
def _():
    siblings = {s.rfilename: s for s in api.model_info(MODEL, files_metadata=True).siblings}
    weights = siblings["weights.bin"]
    check(weights.size == len(state["weights"]), f"size {weights.size}")
    check(weights.lfs is not None and weights.lfs.sha256 == sha256(state["weights"]), f"lfs {weights.lfs}")
    check(weights.blob_id and len(weights.blob_id) == 40, f"blob id {weights.blob_id}")
    check(siblings["hello.txt"].size == 5 and siblings["hello.txt"].lfs is None, f"hello.txt {siblings['hello.txt']}")


@scenario("file_exists")
def _():
    check(api.file_exists(MODEL, "hello.txt"), "hello.txt exists")
    check(not api.file_exists(MODEL, "nope.txt"), "nope.txt does not")
    cache = os.path.join(work, "cache-missing")
    refused(lambda: api.hf_hub_download(MODEL, "nope.txt", cache_dir=cache), 404, kind=RemoteEntryNotFoundError)


@scenario("hf_hub_download")
def _():
    path = api.hf_hub_download(MODEL, "hello.txt", cache_dir=os.path.join(work, "cache"))
    check(read(path) == b"hello", "downloaded content")
    at = api.hf_hub_download(MODEL, "hello.txt", revision=state["hello_commit"], cache_dir=os.path.join(work, "cache"))
    check(state["hello_commit"] in at, f"a revision's download lands in its snapshot: {at}")


@scenario("snapshot_download")
def _():
    path = api.snapshot_download(MODEL, cache_dir=os.path.join(work, "snap"), allow_patterns=["docs/*"])
    check(read(os.path.join(path, "docs", "sub", "b.txt")) == b"B", "snapshot content")
    check(not os.path.exists(os.path.join(path, "hello.txt")), "allow_patterns limits the snapshot")


@scenario("get_hf_file_metadata")
def _():
    meta = api.get_hf_file_metadata(url=hf_hub_url(MODEL, "hello.txt", endpoint=ENDPOINT))
    check(meta.size == 5 and meta.commit_hash == api.model_info(MODEL).sha, f"metadata {meta}")
    lfs = api.get_hf_file_metadata(url=hf_hub_url(MODEL, "weights.bin", endpoint=ENDPOINT))
    check(lfs.etag == sha256(state["weights"]) and lfs.size == len(state["weights"]), f"LFS metadata {lfs}")


@scenario("delete_file")
def _():
    api.upload_file(path_or_fileobj=b"x", path_in_repo="gone.txt", repo_id=MODEL)
    api.delete_file("gone.txt", MODEL)
    check(not api.file_exists(MODEL, "gone.txt"), "deleted file is gone")
    with unchanged(MODEL):
        refused(lambda: api.delete_file("never-was.txt", MODEL), 404)


@scenario("delete_files")
def _():
    api.upload_file(path_or_fileobj=b"x", path_in_repo="tmp/one.txt", repo_id=MODEL)
    api.delete_files(MODEL, delete_patterns=["tmp/*"])
    check(not api.file_exists(MODEL, "tmp/one.txt"), "pattern-deleted file is gone")


@scenario("delete_folder")
def _():
    api.upload_file(path_or_fileobj=b"x", path_in_repo="old/one.txt", repo_id=MODEL)
    api.delete_folder("old", MODEL)
    check(not api.file_exists(MODEL, "old/one.txt"), "deleted folder is gone")


@scenario("list_repo_commits")
def _():
    commits = api.list_repo_commits(MODEL)
    check(commits[0].commit_id == api.model_info(MODEL).sha, "newest first")
    mine = next(c for c in commits if c.commit_id == state["commit"])
    check(mine.title == "By create_commit" and "A description" in mine.message, f"commit {mine.title} {mine.message}")
    check(mine.authors == ["alice"], f"authors {mine.authors}")


@scenario("list_repo_commits", "formatted=True")
def _():
    commits = api.list_repo_commits(MODEL, formatted=True)
    mine = next(c for c in commits if c.commit_id == state["commit"])
    check(mine.formatted_title and "By create_commit" in mine.formatted_title, f"formatted title {mine.formatted_title}")
    check(mine.formatted_message is not None and "A description" in mine.formatted_message, "formatted message")


@scenario("copy_files")
def _():
    api.create_repo("alice/cov-copy")
    api.copy_files(f"hf://{MODEL}/hello.txt", "hf://alice/cov-copy/copied.txt")
    path = api.hf_hub_download("alice/cov-copy", "copied.txt", cache_dir=os.path.join(work, "copy"))
    check(read(path) == b"hello", "the copy has the source's bytes")
    api.copy_files(f"hf://{MODEL}/docs/", "hf://alice/cov-copy/docs/")
    files = api.list_repo_files("alice/cov-copy")
    check("docs/a.txt" in files and "docs/sub/b.txt" in files, f"copied folder {files}")


def safetensors_bytes():
    header = json.dumps({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
    return struct.pack("<Q", len(header)) + header + b"\x00" * 8


@scenario("get_safetensors_metadata")
def _():
    api.upload_file(path_or_fileobj=safetensors_bytes(), path_in_repo="model.safetensors", repo_id=MODEL)
    meta = api.get_safetensors_metadata(MODEL)
    check(meta.parameter_count == {"F32": 2}, f"parameters {meta.parameter_count}")


@scenario("parse_safetensors_file_metadata")
def _():
    meta = api.parse_safetensors_file_metadata(MODEL, "model.safetensors")
    check(list(meta.tensors) == ["w"] and meta.tensors["w"].shape == [2], f"tensors {meta.tensors}")


@scenario("get_sharded_safetensors_metadata")
def _():
    shard = lambda name: json.dumps({name: {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
    index = {"metadata": {"total_size": 16}, "weight_map": {"a": "model-1.safetensors", "b": "model-2.safetensors"}}
    for name, tensor in [("model-1.safetensors", "a"), ("model-2.safetensors", "b")]:
        header = shard(tensor)
        data = struct.pack("<Q", len(header)) + header + b"\x00" * 8
        api.upload_file(path_or_fileobj=data, path_in_repo=f"sharded/{name}", repo_id=MODEL)
    api.upload_file(
        path_or_fileobj=json.dumps(index).encode(), path_in_repo="sharded/model.safetensors.index.json", repo_id=MODEL
    )
    meta = api.get_sharded_safetensors_metadata(MODEL, filename="sharded/model.safetensors.index.json")
    check(meta.sharded and meta.metadata == {"total_size": 16}, f"metadata {meta.metadata}")
    check(meta.weight_map == {"a": "model-1.safetensors", "b": "model-2.safetensors"}, f"weight map {meta.weight_map}")
    check(meta.parameter_count == {"F32": 4}, f"parameters {meta.parameter_count}")


@scenario("verify_repo_checksums")
def _():
    api.snapshot_download(MODEL, cache_dir=os.path.join(work, "verify"))
    result = api.verify_repo_checksums(MODEL, cache_dir=os.path.join(work, "verify"))
    check(not result.mismatches and not result.missing_paths, f"verification {result}")


@scenario("list_models", "filter=tag")
def _():
    card = b"---\ntags:\n- cov-tag\n---\n# A model\n"
    api.upload_file(path_or_fileobj=card, path_in_repo="README.md", repo_id=MODEL)
    api.create_repo("alice/cov-untagged")
    found = [m.id for m in api.list_models(filter="cov-tag")]
    check(found == [MODEL], f"filter=cov-tag lists {found}")
    check([m.id for m in api.list_models(filter="no-such-tag")] == [], "an unknown tag lists nothing")


@scenario("list_models", "search,pipeline_tag,sort,full,cardData")
def _():
    card = (
        b"---\nlicense: mit\npipeline_tag: text-classification\nlibrary_name: transformers\n"
        b"tags: [cov-full]\n---\n# A model that sorts pangolins\n"
    )
    api.upload_file(path_or_fileobj=card, path_in_repo="README.md", repo_id=MODEL)
    [model] = list(api.list_models(pipeline_tag="text-classification", full=True, cardData=True))
    check(model.id == MODEL and model.card_data.license == "mit", f"card data {model.card_data}")
    check(any(s.rfilename == "README.md" for s in model.siblings or []), f"siblings {model.siblings}")
    check("license:mit" in model.tags and model.library_name == "transformers", f"tags {model.tags}")
    check([m.id for m in api.list_models(search="pangolins")] == [MODEL], "the card's text is searched")
    check([m.id for m in anonymous.list_models(search="pangolins", sort="downloads", limit=5)] == [MODEL], "sorted")
    check(list(api.list_models(filter="cov-full", num_parameters="min:1B")) == [], "no billion parameters")


@scenario("model_info", "expand")
def _():
    info = api.model_info(MODEL, expand=["downloads", "likes", "cardData", "tags", "safetensors", "trendingScore"])
    counts = (info.downloads, info.likes, info.trending_score)
    check(all(isinstance(n, int) and n >= 0 for n in counts), f"counts {counts}")
    check(info.card_data.license == "mit" and info.sha is None and info.siblings is None, "only the fields asked for")
    weights = info.safetensors
    check("license:mit" in info.tags, f"tags {info.tags}")
    check(weights is None or weights.total == sum(weights.parameters.values()), f"safetensors {weights}")
    refused(lambda: api.model_info(MODEL, expand=["no-such-field"]), 400)


# --- refs ----------------------------------------------------------------------------------


@scenario("create_branch")
def _():
    api.create_branch(MODEL, branch="dev")
    refs = api.list_repo_refs(MODEL)
    dev = next(b for b in refs.branches if b.name == "dev")
    check(dev.target_commit == api.model_info(MODEL).sha, "dev starts at main")
    refused(lambda: api.create_branch(MODEL, branch="dev"), 409)
    api.create_branch(MODEL, branch="dev", exist_ok=True)


@scenario("list_repo_refs")
def _():
    refs = api.list_repo_refs(MODEL)
    check(sorted(b.name for b in refs.branches) == ["dev", "main"], f"branches {refs.branches}")
    check(refs.converts == [], f"converts {refs.converts}")


@scenario("create_tag")
def _():
    api.create_tag(MODEL, tag="v1", tag_message="First")
    tag = next(t for t in api.list_repo_refs(MODEL).tags if t.name == "v1")
    check(tag.target_commit == api.model_info(MODEL).sha and tag.ref == "refs/tags/v1", f"tag {tag}")


@scenario("revision_exists")
def _():
    check(api.revision_exists(MODEL, "v1"), "tag v1 exists")
    check(api.revision_exists(MODEL, "dev"), "branch dev exists")
    check(not api.revision_exists(MODEL, "v9"), "v9 does not")


@scenario("resolve_revision")
def _():
    revision = api.resolve_revision(MODEL, revision="v1")
    check(revision.resolved == api.model_info(MODEL).sha, f"resolved {revision.resolved}")


@scenario("delete_tag")
def _():
    api.delete_tag(MODEL, tag="v1")
    check("v1" not in [t.name for t in api.list_repo_refs(MODEL).tags], "v1 gone")


@scenario("delete_branch")
def _():
    api.delete_branch(MODEL, branch="dev")
    check("dev" not in [b.name for b in api.list_repo_refs(MODEL).branches], "dev gone")


# --- storage -------------------------------------------------------------------------------


def lfs_repo():
    def make():
        api.create_repo("alice/cov-lfs")
        old = os.urandom(2 * 1024 * 1024)
        api.upload_file(path_or_fileobj=old, path_in_repo="big.bin", repo_id="alice/cov-lfs")
        return old

    return made("lfs_old", make)


@scenario("list_lfs_files")
def _():
    old = lfs_repo()
    files = {f.file_oid: f for f in api.list_lfs_files("alice/cov-lfs")}
    check(list(files) == [sha256(old)], f"LFS objects {list(files)}")
    entry = files[sha256(old)]
    check(entry.size == len(old) and entry.filename == "big.bin", f"entry {entry}")


@scenario("permanently_delete_lfs_files")
def _():
    old_bytes = lfs_repo()
    new = os.urandom(2 * 1024 * 1024)
    api.upload_file(path_or_fileobj=new, path_in_repo="big.bin", repo_id="alice/cov-lfs")
    old = next(f for f in api.list_lfs_files("alice/cov-lfs") if f.file_oid == sha256(old_bytes))
    api.permanently_delete_lfs_files("alice/cov-lfs", [old])
    left = [f.file_oid for f in api.list_lfs_files("alice/cov-lfs")]
    check(left == [sha256(new)], f"LFS objects after the deletion {left}")
    path = api.hf_hub_download("alice/cov-lfs", "big.bin", cache_dir=os.path.join(work, "lfs"))
    check(read(path) == new, "the current file still downloads")


@scenario("super_squash_history")
def _():
    repo = "alice/cov-squash"
    api.create_repo(repo)
    for n in range(3):
        api.upload_file(path_or_fileobj=str(n).encode(), path_in_repo=f"f{n}.txt", repo_id=repo)
    files = sorted(api.list_repo_files(repo))
    api.super_squash_history(repo, commit_message="Squashed")
    commits = api.list_repo_commits(repo)
    check([c.title for c in commits] == ["Squashed"], f"history after squashing {[c.title for c in commits]}")
    check(sorted(api.list_repo_files(repo)) == files, "the files stay")


# --- papers --------------------------------------------------------------------------------


@scenario("paper_info")
def _():
    # The hub has no internet: a paper is known once an account submits it.
    call_hub("POST", "/api/me/paper-submissions", json={"arxivId": "2401.00001", "title": "A paper", "authors": ["Alice Author"]})
    paper = api.paper_info("2401.00001")
    check(paper.id == "2401.00001" and paper.title == "A paper", f"paper {paper.id} {paper.title}")
    check([a.name for a in paper.authors] == ["Alice Author"], f"authors {paper.authors}")
    refused(lambda: api.paper_info("2401.99999"), 404)


@scenario("list_papers")
def _():
    found = [p.id for p in api.list_papers(query="2401.0000")]
    check(found == ["2401.00001"], f"found {found}")
    check([p.id for p in api.list_papers(query="no such paper")] == [], "an unmatched query finds nothing")


@scenario("list_daily_papers")
def _():
    papers = list(api.list_daily_papers())
    check([p.id for p in papers] == ["2401.00001"], f"daily papers {[p.id for p in papers]}")
    check(papers[0].submitted_by and papers[0].submitted_by.username == "alice", f"submitted by {papers[0].submitted_by}")
    check([p.id for p in api.list_daily_papers(submitter="bob")] == [], "bob submitted nothing")


@scenario("read_paper")
def _():
    text = api.read_paper("2401.00001")
    check("A paper" in text, f"the paper as Markdown: {text[:100]!r}")


# --- webhooks --------------------------------------------------------------------------------


def new_webhook():
    return api.create_webhook(url="https://example.com/hook", watched=[{"type": "model", "name": MODEL}], domains=["repo"]).id


@scenario("create_webhook")
def _():
    hook = api.create_webhook(url="https://example.com/hook", watched=[{"type": "model", "name": MODEL}], domains=["repo"])
    state["hook"] = hook.id
    check(hook.secret and hook.secret.startswith("whsec_"), "the signing secret is shown once, at creation")
    check(hook.watched[0].name == MODEL and hook.disabled is False, f"created {hook}")
    refused(lambda: api.create_webhook(url="https://example.com/hook", watched=[{"type": "user", "name": "alice"}], secret="mine"), 400)


@scenario("list_webhooks")
def _():
    hooks = api.list_webhooks()
    check([h.id for h in hooks] == [made("hook", new_webhook)], f"listed {[h.id for h in hooks]}")
    check(all(h.secret is None for h in hooks), "the secret is never listed")
    check(bob.list_webhooks() == [], "bob sees none of alice's webhooks")


@scenario("get_webhook")
def _():
    hook = api.get_webhook(made("hook", new_webhook))
    check(hook.url == "https://example.com/hook" and hook.secret is None, f"got {hook}")


@scenario("update_webhook")
def _():
    hook = api.update_webhook(made("hook", new_webhook), url="https://example.com/other", domains=["repo.content"])
    check(hook.url == "https://example.com/other" and hook.domains == ["repo.content"], f"updated {hook}")
    check(hook.watched[0].name == MODEL, "watched items stay when not given")


@scenario("disable_webhook")
def _():
    check(api.disable_webhook(made("hook", new_webhook)).disabled is True, "disabled")
    check(api.get_webhook(made("hook", new_webhook)).disabled is True, "stays disabled")


@scenario("enable_webhook")
def _():
    check(api.enable_webhook(made("hook", new_webhook)).disabled is False, "enabled")


@scenario("delete_webhook")
def _():
    api.delete_webhook(made("hook", new_webhook))
    check(api.list_webhooks() == [], "no webhooks left")


# --- discussions and pull requests -----------------------------------------------------------

TALK = "alice/cov-talk"


def talk():
    def make():
        api.create_repo(TALK)
        api.upload_file(path_or_fileobj=b"base", path_in_repo="base.txt", repo_id=TALK)
        return TALK

    return made("talk", make)


def new_discussion():
    d = bob.create_discussion(talk(), title="A question", description="Why?")
    state["first_comment"] = d.events[0].id
    return d.num


@scenario("create_discussion")
def _():
    d = bob.create_discussion(talk(), title="A question", description="Why?")
    state["discussion"] = d.num
    check(d.num >= 1 and d.title == "A question" and d.status == "open", f"discussion {d.num} {d.title} {d.status}")
    check(d.author == "bob" and d.is_pull_request is False and d.repo_id == TALK, f"discussion {d}")
    check(d.events and d.events[0].content == "Why?", f"the description is the first comment: {d.events}")
    state["first_comment"] = d.events[0].id
    refused(lambda: anonymous.create_discussion(TALK, title="Anonymous"), 401)


@scenario("upload_attachment")
def _():
    image = os.path.join(work, "attachment.png")
    png = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000") + b"\x1f\x15\xc4\x89"
    with open(image, "wb") as f:
        f.write(png)
    url = api.upload_attachment(image)
    check(url.startswith("http"), f"attachment URL {url}")
    response = httpx2.get(url, headers={"authorization": f"Bearer {ALICE}"}, follow_redirects=True)
    check(response.status_code == 200 and response.content == png, f"the attachment serves its bytes: {response.status_code}")


@scenario("get_repo_discussions")
def _():
    num = made("discussion", new_discussion)
    found = [(d.num, d.title) for d in api.get_repo_discussions(TALK)]
    check(found == [(num, "A question")], f"discussions {found}")
    check(list(api.get_repo_discussions(TALK, discussion_type="pull_request")) == [], "no pull requests yet")


@scenario("comment_discussion")
def _():
    comment = api.comment_discussion(TALK, made("discussion", new_discussion), "Because.")
    state["comment"] = comment.id
    check(comment.content == "Because." and comment.author == "alice", f"comment {comment}")


@scenario("edit_discussion_comment")
def _():
    num = made("discussion", new_discussion)
    comment = made("comment", lambda: api.comment_discussion(TALK, num, "Because.").id)
    edited = api.edit_discussion_comment(TALK, num, comment, "Because, edited.")
    check(edited.content == "Because, edited." and edited.edited is True, f"edited {edited}")


@scenario("hide_discussion_comment")
def _():
    num = made("discussion", new_discussion)
    hidden = api.hide_discussion_comment(TALK, num, state["first_comment"])
    check(hidden.hidden is True, f"hidden {hidden}")


@scenario("rename_discussion")
def _():
    change = api.rename_discussion(TALK, made("discussion", new_discussion), "A better question")
    check(change.old_title == "A question" and change.new_title == "A better question", f"renamed {change}")


@scenario("change_discussion_status")
def _():
    change = api.change_discussion_status(TALK, made("discussion", new_discussion), "closed", comment="Answered")
    check(change.new_status == "closed", f"status {change.new_status}")


@scenario("get_discussion_details")
def _():
    d = api.get_discussion_details(TALK, made("discussion", new_discussion))
    check(d.title == "A better question" and d.status == "closed", f"details {d.title} {d.status}")
    kinds = [e.type for e in d.events]
    check(kinds.count("comment") >= 2 and "title-change" in kinds and "status-change" in kinds, f"events {kinds}")


@scenario("create_pull_request")
def _():
    pr = bob.create_pull_request(talk(), title="Add a file", description="Please")
    state["pr"] = pr.num
    check(pr.is_pull_request and pr.status == "draft" and pr.git_reference == f"refs/pr/{pr.num}", f"PR {pr}")
    bob.upload_file(path_or_fileobj=b"from bob", path_in_repo="bob.txt", repo_id=TALK, revision=pr.git_reference)
    check(not api.file_exists(TALK, "bob.txt"), "main does not hold the pull request's file yet")


@scenario("merge_pull_request")
def _():
    def new_pull_request():
        pr = bob.create_pull_request(talk(), title="Add a file")
        bob.upload_file(path_or_fileobj=b"from bob", path_in_repo="bob.txt", repo_id=TALK, revision=pr.git_reference)
        return pr.num

    num = made("pr", new_pull_request)
    api.change_discussion_status(TALK, num, "open")
    api.merge_pull_request(TALK, num, comment="Thanks")
    check(api.file_exists(TALK, "bob.txt"), "main holds the merged file")
    pr = api.get_discussion_details(TALK, num)
    check(pr.status == "merged" and pr.merge_commit_oid == api.model_info(TALK).sha, f"merged {pr.status}")


# --- collections ---------------------------------------------------------------------------


def new_collection():
    return api.create_collection("Coverage", description="Things").slug


def new_item():
    collection = made("collection", new_collection)
    api.add_collection_item(collection, MODEL, "model", note="The model")
    return api.add_collection_item(collection, DATASET, "dataset").items[0].item_object_id


@scenario("create_collection")
def _():
    c = api.create_collection("Coverage", description="Things")
    state["collection"] = c.slug
    check(c.title == "Coverage" and c.description == "Things" and c.items == [], f"collection {c}")
    check(c.slug.startswith("alice/") and c.private is False, f"slug {c.slug}")


@scenario("add_collection_item")
def _():
    c = api.add_collection_item(made("collection", new_collection), MODEL, "model", note="The model")
    check([(i.item_id, i.item_type, i.note) for i in c.items] == [(MODEL, "model", "The model")], f"items {c.items}")
    c = api.add_collection_item(made("collection", new_collection), DATASET, "dataset")
    state["item"] = c.items[0].item_object_id


@scenario("get_collection")
def _():
    c = api.get_collection(made("collection", new_collection))
    check([i.item_id for i in c.items] == [MODEL, DATASET], f"items {[i.item_id for i in c.items]}")
    check([i.item_id for i in anonymous.get_collection(made("collection", new_collection)).items] == [MODEL], "a private item is hidden")


@scenario("update_collection_item")
def _():
    api.update_collection_item(made("collection", new_collection), made("item", new_item), note="Still the model", position=1)
    items = api.get_collection(made("collection", new_collection)).items
    check([(i.item_id, i.note) for i in items][1] == (MODEL, "Still the model"), f"items {items}")


@scenario("update_collection_metadata")
def _():
    old = made("collection", new_collection)
    c = api.update_collection_metadata(old, title="Coverage 2", private=True)
    check(c.title == "Coverage 2" and c.private is True, f"collection {c.title} private={c.private}")
    # As on the Hugging Face Hub, a new title changes the slug's middle and keeps its id.
    check(c.slug == old.replace("/coverage-", "/coverage-2-"), f"slug {c.slug} after {old}")
    state["collection"] = c.slug
    refused(lambda: anonymous.get_collection(c.slug), 401, 404)


@scenario("list_collections")
def _():
    slugs = [c.slug for c in api.list_collections(owner="alice")]
    check(slugs == [made("collection", new_collection)], f"collections {slugs}")
    check([c.slug for c in anonymous.list_collections(owner="alice")] == [], "a private collection is not listed")


@scenario("update_collection_resource_group")
def _():
    # The client has no way to make a resource group: moving a collection into one that does not exist
    # must be refused (a refusal is this row's best outcome), never accepted.
    slug = made("collection", new_collection)
    api.update_collection_resource_group(slug, "0123456789abcdef01234567")
    raise AssertionError("moved a collection into a resource group that does not exist")


@scenario("delete_collection_item")
def _():
    api.delete_collection_item(made("collection", new_collection), made("item", new_item))
    check([i.item_id for i in api.get_collection(made("collection", new_collection)).items] == [DATASET], "the item is gone")


@scenario("delete_collection")
def _():
    slug = made("collection", new_collection)
    api.delete_collection(slug)
    refused(lambda: api.get_collection(slug), 404)


# --- likes ---------------------------------------------------------------------------------


@scenario("list_repo_likers")
def _():
    # The client has no method to like a repository: bob likes it as the website does.
    call_hub("POST", f"/api/models/{MODEL}/like", token=BOB)
    likers = [u.username for u in api.list_repo_likers(MODEL)]
    check(likers == ["bob"], f"likers {likers}")
    check(api.model_info(MODEL).likes == 1, "the like is counted")


@scenario("list_liked_repos")
def _():
    likes = api.list_liked_repos("bob")
    check(likes.user == "bob" and likes.total == 1 and likes.models == [MODEL], f"likes {likes}")


@scenario("unlike")
def _():
    bob.unlike(MODEL)
    check(list(api.list_repo_likers(MODEL)) == [], "no likers left")
    check(api.list_liked_repos("bob").total == 0, "bob likes nothing")


# --- spaces --------------------------------------------------------------------------------


@scenario("list_spaces")
def _():
    api.create_repo(SPACE, repo_type="space", space_sdk="static")
    api.upload_file(path_or_fileobj=b"<h1>Hi</h1>", path_in_repo="index.html", repo_id=SPACE, repo_type="space")
    ids = [s.id for s in api.list_spaces(author="alice")]
    check(ids == [SPACE], f"list_spaces {ids}")


@scenario("space_info")
def _():
    info = api.space_info(SPACE)
    check(info.id == SPACE and info.sdk == "static", f"space_info {info.id} sdk={info.sdk}")


@scenario("get_space_runtime")
def _():
    runtime = api.get_space_runtime(SPACE)
    check(runtime.stage in ("RUNNING", "BUILDING", "RUNNING_BUILDING", "APP_STARTING"), f"stage {runtime.stage}")


@scenario("wait_for_space")
def _():
    check(api.wait_for_space(SPACE, timeout=30).stage == "RUNNING", "the static Space runs")


@scenario("add_space_secret")
def _():
    api.add_space_secret(SPACE, "TOKEN", "s3cret", description="A secret")
    secrets = api.get_space_secrets(SPACE)
    check(list(secrets) == ["TOKEN"], f"secrets {list(secrets)}")


@scenario("get_space_secrets")
def _():
    secrets = api.get_space_secrets(SPACE)
    check([(s.key, s.description) for s in secrets.values()] == [("TOKEN", "A secret")], f"secrets {secrets}")
    check("s3cret" not in json.dumps([vars(s) for s in secrets.values()], default=str), "a secret's value is never shown")


@scenario("delete_space_secret")
def _():
    api.delete_space_secret(SPACE, "TOKEN")
    check(api.get_space_secrets(SPACE) == {}, "no secrets left")


@scenario("add_space_variable")
def _():
    api.add_space_variable(SPACE, "MODE", "fast")
    check(api.get_space_variables(SPACE)["MODE"].value == "fast", "the variable is set")


@scenario("get_space_variables")
def _():
    variables = api.get_space_variables(SPACE)
    check({k: v.value for k, v in variables.items()} == {"MODE": "fast"}, f"variables {variables}")


@scenario("delete_space_variable")
def _():
    api.delete_space_variable(SPACE, "MODE")
    check(api.get_space_variables(SPACE) == {}, "no variables left")


@scenario("pause_space")
def _():
    check(api.pause_space(SPACE).stage == "PAUSED", "paused")
    check(api.get_space_runtime(SPACE).stage == "PAUSED", "stays paused")


@scenario("restart_space")
def _():
    check(api.restart_space(SPACE).stage != "PAUSED", "restarted")


@scenario("set_space_sleep_time")
def _():
    check(api.set_space_sleep_time(SPACE, 3600).sleep_time == 3600, "sleep time set")


@scenario("request_space_hardware")
def _():
    runtime = api.request_space_hardware(SPACE, "cpu-upgrade")
    check(runtime.requested_hardware == "cpu-upgrade", f"requested {runtime.requested_hardware}")


@scenario("enable_space_dev_mode")
def _():
    check(api.enable_space_dev_mode(SPACE).dev_mode is True, "dev mode on")


@scenario("disable_space_dev_mode")
def _():
    check(api.disable_space_dev_mode(SPACE).dev_mode is False, "dev mode off")


@scenario("set_space_volumes")
def _():
    from huggingface_hub import Volume

    api.set_space_volumes(SPACE, [Volume(type="model", source=MODEL, mount_path="/model")])
    volumes = api.get_space_runtime(SPACE).volumes
    check(volumes and volumes[0].source == MODEL and volumes[0].mount_path == "/model", f"volumes {volumes}")


@scenario("delete_space_volumes")
def _():
    api.delete_space_volumes(SPACE)
    check(not api.get_space_runtime(SPACE).volumes, "no volumes left")


@scenario("fetch_space_logs")
def _():
    lines = list(api.fetch_space_logs(SPACE, build=True))
    check(all(isinstance(line, str) for line in lines), f"log lines {lines[:3]}")


@scenario("duplicate_repo", "repo_type=space")
def _():
    url = api.duplicate_repo(SPACE, "alice/cov-space-copy", repo_type="space")
    check(url.repo_id == "alice/cov-space-copy", f"duplicated to {url.repo_id}")
    check(api.space_info(url.repo_id).sdk == "static", "the copy keeps the SDK")
    check(api.file_exists(url.repo_id, "index.html", repo_type="space"), "the copy holds the files")


@scenario("search_spaces")
def _():
    found = [s.id for s in api.search_spaces("cov-space", include_non_running=True)]
    check(SPACE in found, f"search finds {found}")


@scenario("list_space_templates")
def _():
    templates = api.list_space_templates()
    check(isinstance(templates, list) and all(t.id for t in templates), f"templates {templates[:2]}")


@scenario("list_spaces_hardware")
def _():
    hardware = api.list_spaces_hardware()
    check(hardware and all(h.name for h in hardware), f"hardware {hardware[:2]}")


# --- jobs ------------------------------------------------------------------------------------


@scenario("list_jobs_hardware")
def _():
    hardware = api.list_jobs_hardware()
    check(hardware and all(h.name for h in hardware), f"hardware {hardware[:2]}")


def new_job():
    return api.run_job(image="python:3.12", command=["python", "-c", "print('hi')"], labels={"cov": "yes"}).id


def new_scheduled_job():
    return api.create_scheduled_job(image="python:3.12", command=["true"], schedule="@hourly").id


@scenario("run_job")
def _():
    job = api.run_job(image="python:3.12", command=["python", "-c", "print('hi')"], labels={"cov": "yes"})
    state["job"] = job.id
    check(job.id and job.owner.name == "alice" and job.labels == {"cov": "yes"}, f"job {job}")


@scenario("inspect_job")
def _():
    check(api.inspect_job(job_id=made("job", new_job)).id == made("job", new_job), "the job is found")


@scenario("list_jobs")
def _():
    check(made("job", new_job) in [j.id for j in api.list_jobs()], "the job is listed")


@scenario("wait_for_job")
def _():
    job = api.wait_for_job(made("job", new_job), timeout=60)
    check(job.status.stage == "COMPLETED", f"stage {job.status.stage}")


@scenario("fetch_job_logs")
def _():
    check("hi" in list(api.fetch_job_logs(job_id=made("job", new_job))), "the job's output")


@scenario("fetch_job_metrics")
def _():
    metrics = list(api.fetch_job_metrics(job_id=made("job", new_job)))
    check(all(isinstance(m, dict) for m in metrics), f"metrics {metrics[:2]}")


@scenario("update_job_labels")
def _():
    check(api.update_job_labels(job_id=made("job", new_job), labels={"cov": "no"}).labels == {"cov": "no"}, "labels updated")


@scenario("update_job_expose")
def _():
    job = api.update_job_expose(job_id=made("job", new_job), expose=[8000, 9000], expose_public=[8000])
    check(job.expose == [8000, 9000] and job.expose_public == [8000], f"exposed {job.expose} {job.expose_public}")


@scenario("rerun_job")
def _():
    first = made("job", new_job)
    job = api.rerun_job(job_id=first)
    check(job.id != first and job.labels == api.inspect_job(job_id=first).labels, f"rerun {job}")


@scenario("cancel_job")
def _():
    job = api.run_job(image="python:3.12", command=["sleep", "600"])
    api.cancel_job(job_id=job.id)
    check(api.inspect_job(job_id=job.id).status.stage in ("CANCELED", "CANCELLED"), "the job is cancelled")


@scenario("run_uv_job")
def _():
    job = api.run_uv_job("print('uv')")
    check(api.wait_for_job(job.id, timeout=120).status.stage == "COMPLETED", "the script ran")


@scenario("sync_job_volume")
def _():
    folder = os.path.join(work, "volume")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "v.txt"), "w") as f:
        f.write("V")
    volume = api.sync_job_volume(folder, "/data")
    check(volume.mount_path == "/data" and volume.source, f"volume {volume}")


@scenario("create_scheduled_job")
def _():
    job = api.create_scheduled_job(image="python:3.12", command=["true"], schedule="@hourly")
    state["scheduled"] = job.id
    check(job.id and job.schedule == "@hourly" and job.suspend is False, f"scheduled job {job}")


@scenario("inspect_scheduled_job")
def _():
    check(api.inspect_scheduled_job(scheduled_job_id=made("scheduled", new_scheduled_job)).schedule == "@hourly", "found")


@scenario("list_scheduled_jobs")
def _():
    check([j.id for j in api.list_scheduled_jobs()] == [made("scheduled", new_scheduled_job)], "listed")


@scenario("suspend_scheduled_job")
def _():
    api.suspend_scheduled_job(scheduled_job_id=made("scheduled", new_scheduled_job))
    check(api.inspect_scheduled_job(scheduled_job_id=made("scheduled", new_scheduled_job)).suspend is True, "suspended")


@scenario("resume_scheduled_job")
def _():
    api.resume_scheduled_job(scheduled_job_id=made("scheduled", new_scheduled_job))
    check(api.inspect_scheduled_job(scheduled_job_id=made("scheduled", new_scheduled_job)).suspend is False, "resumed")


@scenario("trigger_scheduled_job")
def _():
    job = api.trigger_scheduled_job(scheduled_job_id=made("scheduled", new_scheduled_job))
    check(job.id and job.id in [j.id for j in api.list_jobs()], f"triggered {job}")


@scenario("update_scheduled_job_labels")
def _():
    job = api.update_scheduled_job_labels(scheduled_job_id=made("scheduled", new_scheduled_job), labels={"a": "b"})
    check(job.job_spec.labels == {"a": "b"}, f"labels {job.job_spec}")


@scenario("update_scheduled_job_schedule")
def _():
    job = api.update_scheduled_job_schedule(scheduled_job_id=made("scheduled", new_scheduled_job), schedule="@daily")
    check(job.schedule == "@daily", f"schedule {job.schedule}")


@scenario("delete_scheduled_job")
def _():
    scheduled = made("scheduled", new_scheduled_job)
    api.delete_scheduled_job(scheduled_job_id=scheduled)
    refused(lambda: api.inspect_scheduled_job(scheduled_job_id=scheduled), 404)


@scenario("create_scheduled_uv_job")
def _():
    job = api.create_scheduled_uv_job("print(1)", schedule="@daily")
    check(job.schedule == "@daily", f"scheduled {job}")
    api.delete_scheduled_job(scheduled_job_id=job.id)


# --- buckets ---------------------------------------------------------------------------------

BUCKET = "alice/cov-bucket"


def bucket():
    return made("bucket", lambda: api.create_bucket(BUCKET, private=True).bucket_id)


def bucket_file():
    return made("bucket_file", lambda: api.batch_bucket_files(bucket(), add=[(b"data", "a.txt")]) or "a.txt")


@scenario("create_bucket")
def _():
    url = api.create_bucket(BUCKET, private=True)
    state["bucket"] = url.bucket_id
    check(url.bucket_id == BUCKET, f"bucket {url}")
    refused(lambda: api.create_bucket(BUCKET), 409)


@scenario("bucket_info")
def _():
    info = api.bucket_info(bucket())
    check(info.id == BUCKET and info.private is True and info.total_files == 0, f"bucket {info}")
    refused(lambda: bob.bucket_info(BUCKET), 404)


@scenario("list_buckets")
def _():
    bucket()
    check([b.id for b in api.list_buckets("alice")] == [BUCKET], "listed")
    check(list(anonymous.list_buckets("alice")) == [], "a private bucket is not listed")


@scenario("batch_bucket_files")
def _():
    api.batch_bucket_files(bucket(), add=[(b"data", "a.txt")])
    state["bucket_file"] = "a.txt"
    check(api.bucket_info(BUCKET).total_files == 1, "one file")


@scenario("update_bucket_settings")
def _():
    api.update_bucket_settings(bucket(), private=False)
    check(anonymous.bucket_info(BUCKET).private is False, "made public")
    api.update_bucket_settings(bucket(), private=True)
    refused(lambda: anonymous.bucket_info(BUCKET), 401, 404)


@scenario("list_bucket_tree")
def _():
    bucket_file()
    entries = [(e.path, e.size) for e in api.list_bucket_tree(BUCKET, recursive=True)]
    check(entries == [("a.txt", 4)], f"tree {entries}")


@scenario("get_bucket_paths_info")
def _():
    bucket_file()
    entries = [(e.path, e.size) for e in api.get_bucket_paths_info(BUCKET, ["a.txt", "none.txt"])]
    check(entries == [("a.txt", 4)], f"paths {entries}")


@scenario("get_bucket_file_metadata")
def _():
    bucket_file()
    check(api.get_bucket_file_metadata(BUCKET, "a.txt").size == 4, "size")


@scenario("download_bucket_files")
def _():
    bucket_file()
    target = os.path.join(work, "bucket-a.txt")
    api.download_bucket_files(BUCKET, [("a.txt", target)], raise_on_missing_files=True)
    check(read(target) == b"data", "downloaded content")


@scenario("sync_bucket")
def _():
    bucket()
    folder = os.path.join(work, "sync")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "s.txt"), "w") as f:
        f.write("S")
    api.sync_bucket(folder, f"hf://buckets/{BUCKET}/synced", quiet=True)
    check("synced/s.txt" in [e.path for e in api.list_bucket_tree(BUCKET, recursive=True)], "synced")


@scenario("move_bucket")
def _():
    bucket()
    api.move_bucket(BUCKET, "alice/cov-bucket-moved")
    check(api.bucket_info("alice/cov-bucket-moved").id == "alice/cov-bucket-moved", "the bucket answers at its new name")
    refused(lambda: api.bucket_info(BUCKET), 404)


@scenario("delete_bucket")
def _():
    api.create_bucket("alice/cov-bucket-doomed")
    api.delete_bucket("alice/cov-bucket-doomed")
    refused(lambda: api.bucket_info("alice/cov-bucket-doomed"), 404)


# --- access requests (on their own gated repository) ----------------------------------------

GATED = "alice/cov-gated"


@scenario("list_pending_access_requests")
def _():
    api.create_repo(GATED)
    api.upload_file(path_or_fileobj=b"hello", path_in_repo="hello.txt", repo_id=GATED)
    api.update_repo_settings(GATED, gated="manual")
    refused(lambda: bob.hf_hub_download(GATED, "hello.txt", cache_dir=os.path.join(work, "bob")), 403, kind=GatedRepoError)
    check(list(api.list_pending_access_requests(GATED)) == [], "nobody asked yet")


@scenario("grant_access")
def _():
    api.grant_access(GATED, "bob")
    accepted = [r.username for r in api.list_accepted_access_requests(GATED)]
    check(accepted == ["bob"], f"accepted {accepted}")
    path = bob.hf_hub_download(GATED, "hello.txt", cache_dir=os.path.join(work, "bob2"))
    check(read(path) == b"hello", "bob downloads once granted")


@scenario("list_accepted_access_requests")
def _():
    accepted = list(api.list_accepted_access_requests(GATED))
    check([(r.username, r.status) for r in accepted] == [("bob", "accepted")], f"accepted {accepted}")


@scenario("reject_access_request")
def _():
    api.reject_access_request(GATED, "bob", rejection_reason="Not now")
    rejected = [r.username for r in api.list_rejected_access_requests(GATED)]
    check(rejected == ["bob"], f"rejected {rejected}")
    refused(lambda: bob.hf_hub_download(GATED, "hello.txt", cache_dir=os.path.join(work, "bob3")), 403, kind=GatedRepoError)


@scenario("list_rejected_access_requests")
def _():
    rejected = list(api.list_rejected_access_requests(GATED))
    check([(r.username, r.status) for r in rejected] == [("bob", "rejected")], f"rejected {rejected}")


@scenario("accept_access_request")
def _():
    api.accept_access_request(GATED, "bob")
    accepted = [r.username for r in api.list_accepted_access_requests(GATED)]
    check(accepted == ["bob"], f"accepted {accepted}")


@scenario("cancel_access_request")
def _():
    api.cancel_access_request(GATED, "bob")
    pending = [r.username for r in api.list_pending_access_requests(GATED)]
    accepted = [r.username for r in api.list_accepted_access_requests(GATED)]
    check(pending == ["bob"] and accepted == [], f"pending {pending} accepted {accepted}")


# --- repositories, last: they move and delete --------------------------------------------------


@scenario("duplicate_repo")
def _():
    url = api.duplicate_repo(MODEL, "alice/cov-dup")
    check(url.repo_id == "alice/cov-dup", f"duplicated to {url.repo_id}")
    check(sorted(api.list_repo_files("alice/cov-dup")) == sorted(api.list_repo_files(MODEL)), "the copy holds the files")
    path = api.hf_hub_download("alice/cov-dup", "weights.bin", cache_dir=os.path.join(work, "dup"))
    check(read(path) == state["weights"], "the copy's LFS files download")


@scenario("move_repo")
def _():
    api.create_repo("alice/cov-move")
    api.move_repo("alice/cov-move", "alice/cov-moved")
    check(api.repo_exists("alice/cov-moved"), "the repository answers at its new name")
    check(api.model_info("alice/cov-move").id == "alice/cov-moved", "the old name leads to the new one")


@scenario("delete_repo")
def _():
    api.create_repo("alice/cov-doomed")
    api.delete_repo("alice/cov-doomed")
    check(not api.repo_exists("alice/cov-doomed"), "deleted repository is gone")
    refused(lambda: api.delete_repo("alice/cov-doomed"), 404)
    api.delete_repo("alice/cov-doomed", missing_ok=True)


# Arguments for methods without a scenario: a plausible call whose answer can only be a refusal
# (or a crash) until the hub serves the method, at which point a scenario with a check is due.
PLACEHOLDERS = {
    "repo_id": MODEL,
    "filename": "weights.safetensors",
    "path_in_repo": "hello.txt",
    "revision": "main",
    "repo_type": "model",
    "name": "cov",
}


def placeholder_call(name):
    method = getattr(api, name)
    kwargs = {}
    for param in inspect.signature(method).parameters.values():
        if param.default is inspect.Parameter.empty and param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            if param.name not in PLACEHOLDERS:
                raise KeyError(f"no placeholder for {param.name}: write a scenario")
            kwargs[param.name] = PLACEHOLDERS[param.name]
    result = method(**kwargs)
    if inspect.isgenerator(result) or hasattr(result, "__next__"):
        result = list(result)
    return result


def classify(run):
    try:
        run()
        return "works", ""
    except AssertionError as err:
        return "wrong", str(err)[:300]
    except (HfHubHTTPError, httpx2.HTTPStatusError) as err:
        response = err.response
        status = response.status_code if response is not None else 0
        try:
            body = response.json() if response is not None else {}
        except Exception:
            body = {}
        code = body.get("code") if isinstance(body, dict) else None
        # A HEAD answer has no body: the hub says why in X-Error-Message.
        if code is None and response is not None and response.request.method == "HEAD":
            message = response.headers.get("x-error-message")
            code = message and "(HEAD) " + message[:60]
        if (400 <= status < 500 or status == 501) and code:
            where = response.request.method + " " + httpx2.URL(str(response.request.url)).path
            return "refused", f"{status} {code} ({where.replace(ENDPOINT, '')[:90]})"
        return "crash", f"{status} {str(err)[:200]}"
    except Exception as err:  # the client choked on what the hub answered
        where = traceback.format_exc(limit=-1).strip().splitlines()
        return "crash", f"{type(err).__name__}: {str(err)[:200]} @ {where[-3].strip()[-100:] if len(where) > 2 else ''}"


def main():
    import huggingface_hub

    pinned = os.environ.get("HUB_COVERAGE_CLIENT_VERSION")
    if pinned and huggingface_hub.__version__ != pinned:
        print(f"huggingface_hub {huggingface_hub.__version__} is installed, {pinned} is pinned: run .ci/run", file=sys.stderr)
        return 1
    names = sorted(n for n, f in inspect.getmembers(HfApi, inspect.isfunction) if not n.startswith("_"))
    stale = sorted({method for method, _ in SCENARIOS if method not in names} | (set(NOT_APPLICABLE) - set(names)))
    if stale:
        print(f"scenarios for methods this client does not have: {stale}", file=sys.stderr)
        return 1
    runs = [(method, variant, fn) for (method, variant), fn in SCENARIOS.items()]
    runs += [(name, "", None) for name in names if (name, "") not in SCENARIOS]
    for method, variant, fn in runs:
        started = time.monotonic()
        if method in NOT_APPLICABLE:
            outcome, detail = "not-applicable", NOT_APPLICABLE[method]
        elif fn is not None:
            outcome, detail = classify(fn)
        else:
            outcome, detail = classify(lambda: placeholder_call(method))
            if outcome == "works":
                outcome, detail = "unchecked", "answered, but no scenario checks the answer yet"
        row = {"method": method, "variant": variant, "area": area_of(method), "outcome": outcome, "detail": detail}
        print(json.dumps(row), flush=True)
        print(f"{method} {variant} {outcome} {time.monotonic() - started:.1f}s", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
