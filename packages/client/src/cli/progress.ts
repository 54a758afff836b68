import type { Progress } from "../file-io.js";

/** Where progress bars are drawn: a terminal stream (stderr). */
export interface ProgressTarget {
  isTTY?: boolean;
  columns?: number;
  write(text: string): boolean;
}

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];

/** `1.5 GiB`: a byte count in binary units. */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${UNITS[unit]}`;
}

/**
 * Progress bars on a terminal: nothing is drawn unless the target is a TTY and
 * the operation has run longer than `delayMs`, so quick commands and scripts
 * (pipes, `--json`) never see one. Redraws at most every `intervalMs`.
 */
export class ProgressBars {
  private readonly started = Date.now();
  private lastDraw = 0;
  private drawn = false;
  private current: Progress | undefined;
  private speedFrom: { at: number; bytes: number; key: string } | undefined;

  constructor(
    private readonly target: ProgressTarget,
    private readonly options: {
      enabled: boolean;
      delayMs?: number;
      intervalMs?: number;
      now?: () => number;
    } = {
      enabled: true,
    },
  ) {}

  /** Takes a progress report; use as an SDK `onProgress`. */
  readonly update = (progress: Progress): void => {
    if (!this.options.enabled || !this.target.isTTY) return;
    const now = (this.options.now ?? Date.now)();
    const key = `${progress.phase}:${progress.path}`;
    if (this.current && `${this.current.phase}:${this.current.path}` !== key && this.drawn) {
      this.draw(this.current, now);
      this.target.write("\n");
    }
    if (this.speedFrom?.key !== key) this.speedFrom = { at: now, bytes: progress.bytes, key };
    this.current = progress;
    const finished = progress.bytes >= progress.total;
    if (now - this.started < (this.options.delayMs ?? 1000)) return;
    if (!finished && now - this.lastDraw < (this.options.intervalMs ?? 100)) return;
    this.draw(progress, now);
  };

  /** Ends the last bar's line, if one was drawn. */
  done(): void {
    if (this.drawn) this.target.write("\n");
    this.drawn = false;
    this.current = undefined;
  }

  private draw(progress: Progress, now: number): void {
    this.lastDraw = now;
    this.drawn = true;
    const fraction = progress.total > 0 ? Math.min(progress.bytes / progress.total, 1) : 1;
    const seconds = this.speedFrom ? (now - this.speedFrom.at) / 1000 : 0;
    const rate = seconds > 0 && this.speedFrom ? (progress.bytes - this.speedFrom.bytes) / seconds : 0;
    const label = { hash: "hashing", upload: "uploading", download: "downloading" }[progress.phase];
    const width = 24;
    const filled = Math.round(fraction * width);
    const bar = `${"#".repeat(filled)}${" ".repeat(width - filled)}`;
    const line = `${label} ${progress.path} [${bar}] ${(fraction * 100).toFixed(0).padStart(3)}% ${formatBytes(progress.bytes)}/${formatBytes(progress.total)}${rate > 0 ? ` ${formatBytes(rate)}/s` : ""}`;
    const columns = this.target.columns ?? 100;
    this.target.write(`\r${line.length > columns - 1 ? line.slice(0, columns - 1) : line}\u001b[K`);
  }
}
