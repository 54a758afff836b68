// The reference for the Hub API benchmark: a bare Fastify handler that returns a constant. With `--log`, the
// same app with Fastify's own request logging (`logger: true`: a line when each request arrives and one when
// it is answered, to stdout), the price any Fastify app pays to record every request, which the hub does too.
import Fastify from "fastify";

const app = Fastify({ logger: process.argv.includes("--log") });
app.get("/", async () => ({ type: "user", name: "constant" }));
const url = await app.listen({ host: "127.0.0.1", port: 0 });
console.log(JSON.stringify({ msg: "listening", url }));
process.once("SIGTERM", () => app.close().then(() => process.exit(0)));
