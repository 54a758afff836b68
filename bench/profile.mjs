// `--profile` on any benchmark's command line: each hub the benchmark serves from runs with V8's CPU profiler,
// and when it stops, a summary of where its time went is printed: the functions with the most self time and
// the hub's own functions with the most inclusive time. The raw .cpuprofile files stay in the printed
// directory for Chrome DevTools or speedscope.
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/** Whether this run profiles its hubs. */
export const profiling = process.argv.includes("--profile");

/** Node flags that profile one hub process into a fresh directory, and that directory. */
export function profileArgs() {
  const dir = mkdtempSync(path.join(os.tmpdir(), "hub-bench-profile-"));
  return { dir, nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${dir}`, "--cpu-prof-interval=250"] };
}

/** A function's name and where it is: from `node_modules/` or `packages/` on, so the hub's own code stands out. */
function where({ functionName, url, lineNumber }) {
  const modules = url.lastIndexOf("/node_modules/");
  const packages = url.indexOf("/packages/");
  const file = modules >= 0 ? url.slice(modules + 1) : packages >= 0 ? url.slice(packages + 1) : url;
  return `${functionName || "(anonymous)"} ${file}:${lineNumber + 1}`;
}

/** Self and inclusive time per function of one .cpuprofile, as shares of the samples. */
function summarize(profile) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const selfTime = new Map();
  const inclusive = new Map();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    total += dt;
    const own = where(byId.get(id).callFrame);
    selfTime.set(own, (selfTime.get(own) ?? 0) + dt);
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const name = where(byId.get(at).callFrame);
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + dt);
    }
  });
  return { selfTime, inclusive, total };
}

const top = (map, total, count, keep = () => true) =>
  [...map]
    .filter(([name]) => keep(name))
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, time]) => `  ${((100 * time) / total).toFixed(1).padStart(5)}%  ${name}`)
    .join("\n");

/**
 * Prints the summary of every profile in `dir` (one per process that wrote one). Native calls are charged
 * with the wall time the process spent in them, so a busy machine inflates system calls like `writev`.
 */
export function printProfile(dir, label) {
  for (const file of readdirSync(dir).filter((name) => name.endsWith(".cpuprofile"))) {
    const { selfTime, inclusive, total } = summarize(JSON.parse(readFileSync(path.join(dir, file), "utf8")));
    console.log(`\nCPU profile of ${label} (${path.join(dir, file)}):`);
    console.log(`self time, top 25:\n${top(selfTime, total, 25)}`);
    console.log(
      `the hub's own functions, inclusive, top 25:\n${top(inclusive, total, 25, (name) => name.includes(" packages/"))}`,
    );
  }
}
