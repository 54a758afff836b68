// The floor of the Router benchmark: the least a Node proxy can do. node:http in front, a keep-alive
// http.Agent behind; every request is piped to the upstream given as the first argument and its answer
// piped back, headers as they are but for the hop-by-hop ones. No auth, no parsing, no accounting.
import http from "node:http";
import { serveUntilTerminated } from "./child-server.mjs";

const upstream = new URL(process.argv[2]);
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade"]);

function endToEnd(headers) {
  const out = {};
  for (const [name, value] of Object.entries(headers)) if (!HOP_BY_HOP.has(name)) out[name] = value;
  return out;
}

const server = http.createServer((req, res) => {
  const forward = http.request(
    {
      host: upstream.hostname,
      port: upstream.port,
      method: req.method,
      path: req.url,
      headers: { ...endToEnd(req.headers), host: upstream.host },
      agent,
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
      answer.pipe(res);
    },
  );
  forward.on("error", () => {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  req.pipe(forward);
});
serveUntilTerminated(server);
