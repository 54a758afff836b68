"""Drives the official Python client (huggingface_hub with hf_xet) for xet-clients.test.ts.

One JSON request in argv[1], one JSON answer on stdout; {"op": "sequence", "steps": [...]} runs several requests in
one process and answers the list of their answers. The hub, token and cache come from the environment (HF_ENDPOINT,
HF_TOKEN, HF_HOME); whether the client may use Xet from HF_HUB_DISABLE_XET. Runs with every pinned release
(requirements.txt and requirements-1.19.txt).
"""

import hashlib
import json
import os
import sys

import huggingface_hub
from huggingface_hub import (
    CommitOperationAdd,
    CommitOperationCopy,
    CommitOperationDelete,
    HfApi,
    hf_hub_download,
    snapshot_download,
)
from huggingface_hub.utils._runtime import is_xet_available


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def run(api, request):
    op = request["op"]
    if op == "sequence":
        answer = {"steps": [run(api, {"repo_id": request["repo_id"], **step}) for step in request["steps"]]}
    elif op == "upload_file":
        info = api.upload_file(
            path_or_fileobj=request["path"],
            path_in_repo=request["path_in_repo"],
            repo_id=request["repo_id"],
            create_pr=request.get("create_pr", False),
        )
        answer = {"commit": info.oid, "pr_revision": info.pr_revision}
    elif op == "upload_folder":
        info = api.upload_folder(folder_path=request["folder"], repo_id=request["repo_id"])
        answer = {"commit": info.oid}
    elif op == "create_commit":
        operations = []
        for item in request["operations"]:
            if "add" in item:
                content = item["add"].get("path") or item["add"]["text"].encode()
                operations.append(CommitOperationAdd(path_in_repo=item["add"]["path_in_repo"], path_or_fileobj=content))
            elif "delete" in item:
                operations.append(CommitOperationDelete(path_in_repo=item["delete"]))
            else:
                operations.append(
                    CommitOperationCopy(src_path_in_repo=item["copy"]["src"], path_in_repo=item["copy"]["dest"])
                )
        info = api.create_commit(repo_id=request["repo_id"], operations=operations, commit_message="Mixed")
        answer = {"commit": info.oid}
    elif op == "download":
        answer = {
            name: sha256_of(hf_hub_download(repo_id=request["repo_id"], filename=name, revision=request.get("revision")))
            for name in request["files"]
        }
    elif op == "snapshot":
        folder = snapshot_download(repo_id=request["repo_id"], revision=request.get("revision"))
        answer = {
            os.path.relpath(os.path.join(root, name), folder).replace(os.sep, "/"): sha256_of(os.path.join(root, name))
            for root, _dirs, names in os.walk(folder)
            for name in names
        }
    else:
        raise SystemExit(f"unknown op {op}")
    answer["client"] = huggingface_hub.__version__
    answer["xet"] = is_xet_available()
    return answer


def main():
    print(json.dumps(run(HfApi(), json.loads(sys.argv[1]))))


if __name__ == "__main__":
    main()
