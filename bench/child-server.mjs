// What every stand-alone server of the benchmarks does once built: listen on a free loopback port, announce
// its URL as the JSON `listening` line startServer() waits for, and exit at once on SIGTERM.

/** Listens on a free loopback port and stops on SIGTERM, dropping open connections. */
export function serveUntilTerminated(server) {
  server.keepAliveTimeout = 65_000;
  server.listen(0, "127.0.0.1", () => {
    console.log(JSON.stringify({ msg: "listening", url: `http://127.0.0.1:${server.address().port}` }));
  });
  process.once("SIGTERM", () => {
    server.close();
    server.closeAllConnections();
    process.exit(0);
  });
}
