import path from "node:path";
import { downloadFiles } from "../../download.js";
import { collectFiles, uploadFiles } from "../../upload.js";
import { stringOption, type Command } from "../command.js";
import { formatBytes } from "../progress.js";
import { repoArgument } from "./repo.js";

export const upload: Command = {
  name: "upload",
  summary: "Upload a file or a folder in one commit; large files go through Git LFS, and a rerun resumes.",
  args: "REPO PATH [PATH_IN_REPO]",
  positionals: { min: 2, max: 3 },
  options: {
    type: { type: "string" },
    revision: { type: "string" },
    message: { type: "string" },
    description: { type: "string" },
  },
  async run(ctx, values, [name, localPath = "", pathInRepo]) {
    const repo = repoArgument(name, values);
    const files = await collectFiles(path.resolve(localPath), pathInRepo);
    const bars = ctx.progress();
    const revision = stringOption(values, "revision");
    const message = stringOption(values, "message");
    const description = stringOption(values, "description");
    const result = await uploadFiles({
      connection: ctx.connection(),
      repo,
      files,
      stateDir: path.join(ctx.config.home, "uploads"),
      onProgress: bars.update,
      ...(revision ? { revision } : {}),
      ...(message ? { message } : {}),
      ...(description ? { description } : {}),
    }).finally(() => bars.done());
    if (ctx.json) return ctx.printJson(result);
    const lfs = result.lfsUploaded.length + result.lfsSkipped.length;
    ctx.note(
      `${files.length} file${files.length === 1 ? "" : "s"}: ${result.regular.length} in the commit, ${lfs} through LFS` +
        ` (${result.lfsUploaded.length} sent, ${result.lfsSkipped.length} already on the hub` +
        `${result.partsResumed > 0 ? `, ${result.partsResumed} parts resumed` : ""}).`,
    );
    for (const commit of result.commits) ctx.out(commit.commitUrl);
  },
};

export const download: Command = {
  name: "download",
  summary:
    "Download files (all by default) into the cache under SERVICE_HOME, or --local-dir; a rerun resumes.",
  args: "REPO [FILES...]",
  positionals: { min: 1 },
  options: { type: { type: "string" }, revision: { type: "string" }, "local-dir": { type: "string" } },
  async run(ctx, values, [name, ...files]) {
    const repo = repoArgument(name, values);
    const bars = ctx.progress();
    const revision = stringOption(values, "revision");
    const localDir = stringOption(values, "local-dir");
    const result = await downloadFiles({
      connection: ctx.connection({ requireToken: false }),
      repo,
      files,
      cacheDir: ctx.config.cacheDir,
      onProgress: bars.update,
      onFileStart: ({ path: file, size, resumeFrom }) => {
        if (resumeFrom > 0) {
          bars.done();
          ctx.note(`Resuming ${file} from ${formatBytes(resumeFrom)} of ${formatBytes(size)}.`);
        }
      },
      ...(revision ? { revision } : {}),
      ...(localDir ? { localDir } : {}),
    }).finally(() => bars.done());
    if (ctx.json) return ctx.printJson(result);
    const fetched = result.files.filter((file) => !file.cached).length;
    ctx.note(
      `${result.files.length} file${result.files.length === 1 ? "" : "s"} at ${result.commit.slice(0, 12)}: ${fetched} fetched, ${result.files.length - fetched} already here.`,
    );
    ctx.out(files.length === 1 && result.files[0] ? result.files[0].localPath : result.root);
  },
};
