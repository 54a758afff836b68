// The floor for snapshot_download: a trivial server that answers only what the Python client asks while
// downloading a snapshot (repository info, the recursive tree, HEAD and GET of each file), from memory,
// with the headers the client needs. It checks nothing and resolves nothing: no hub can be faster.
// Usage: node static-hub.mjs <dir> <repo id> <commit>; prints {"msg":"listening","url":…}.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import http from "node:http";
import path from "node:path";

const [root, repoId, commit] = process.argv.slice(2);
const files = new Map();
(function walk(dir) {
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) walk(full);
    else {
      const content = readFileSync(full);
      const oid = createHash("sha1").update(`blob ${content.length}\0`).update(content).digest("hex");
      files.set(path.relative(root, full), { content, oid });
    }
  }
})(root);
const info = JSON.stringify({
  _id: "0",
  id: repoId,
  sha: commit,
  siblings: [...files.keys()].map((rfilename) => ({ rfilename })),
});
const tree = JSON.stringify(
  [...files].map(([p, f]) => ({ type: "file", path: p, oid: f.oid, size: f.content.length })),
);
const resolvePrefix = `/${repoId}/resolve/`;

http
  .createServer((request, response) => {
    const url = decodeURIComponent(new URL(request.url, "http://x").pathname);
    if (url.startsWith(`/api/models/${repoId}/revision/`) || url === `/api/models/${repoId}`) {
      response.writeHead(200, { "content-type": "application/json" }).end(info);
    } else if (url.startsWith(`/api/models/${repoId}/tree/`)) {
      response.writeHead(200, { "content-type": "application/json" }).end(tree);
    } else if (url.startsWith(resolvePrefix)) {
      const file = files.get(url.slice(resolvePrefix.length).split("/").slice(1).join("/"));
      if (!file) return response.writeHead(404, { "x-error-code": "EntryNotFound" }).end();
      response.writeHead(200, {
        "content-length": file.content.length,
        etag: `"${file.oid}"`,
        "x-repo-commit": commit,
        "accept-ranges": "bytes",
      });
      response.end(request.method === "HEAD" ? undefined : file.content);
    } else response.writeHead(404).end();
  })
  .listen(0, "127.0.0.1", function () {
    console.log(JSON.stringify({ msg: "listening", url: `http://127.0.0.1:${this.address().port}` }));
  });
