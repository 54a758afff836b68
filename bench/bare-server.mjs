// The reference for the Hub API benchmark: a bare Fastify handler that returns a constant.
import Fastify from "fastify";

const app = Fastify();
app.get("/", async () => ({ type: "user", name: "constant" }));
const url = await app.listen({ host: "127.0.0.1", port: 0 });
console.log(JSON.stringify({ msg: "listening", url }));
process.once("SIGTERM", () => app.close().then(() => process.exit(0)));
