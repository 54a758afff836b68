import { randomBytes } from "node:crypto";
import { mkdir, open, readFile, rename, rm } from "node:fs/promises";
import path from "node:path";

/** A token saved on this machine, under a name. */
export interface SavedToken {
  token: string;
  /** The hub it was saved for; used when `SERVICE_ENDPOINT` is not set. */
  endpoint: string;
  savedAt: string;
}

/** `tokens.json`: several named tokens and the one selected. */
export interface TokenFile {
  selected: string | null;
  tokens: Record<string, SavedToken>;
}

const EMPTY: TokenFile = { selected: null, tokens: {} };

/**
 * The saved tokens under the configuration root (`$SERVICE_HOME/tokens.json`).
 * The file holds secrets: it is written whole to a temporary file created with
 * mode 0600 before any content, then renamed over the old one, so it is never
 * readable by others nor half-written.
 */
export class TokenStore {
  readonly file: string;

  constructor(home: string) {
    this.file = path.join(home, "tokens.json");
  }

  async read(): Promise<TokenFile> {
    let text: string;
    try {
      text = await readFile(this.file, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return structuredClone(EMPTY);
      throw err;
    }
    const parsed = JSON.parse(text) as Partial<TokenFile>;
    return { selected: parsed.selected ?? null, tokens: parsed.tokens ?? {} };
  }

  /** The selected token and its name, if any. */
  async selected(): Promise<{ name: string; saved: SavedToken } | null> {
    const file = await this.read();
    const saved = file.selected === null ? undefined : file.tokens[file.selected];
    return file.selected !== null && saved ? { name: file.selected, saved } : null;
  }

  /** Saves a token under a name and selects it. */
  async save(name: string, token: string, endpoint: string): Promise<void> {
    const file = await this.read();
    file.tokens[name] = { token, endpoint, savedAt: new Date().toISOString() };
    file.selected = name;
    await this.write(file);
  }

  /** Selects a saved token; false when there is none of that name. */
  async use(name: string): Promise<boolean> {
    const file = await this.read();
    if (!file.tokens[name]) return false;
    file.selected = name;
    await this.write(file);
    return true;
  }

  /** Forgets a saved token (the selected one when no name is given); returns its name, or null if none. */
  async remove(name?: string): Promise<string | null> {
    const file = await this.read();
    const target = name ?? file.selected;
    if (target === null || !file.tokens[target]) return null;
    delete file.tokens[target];
    if (file.selected === target) file.selected = null;
    await this.write(file);
    return target;
  }

  private async write(file: TokenFile): Promise<void> {
    await mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const temporary = `${this.file}.${randomBytes(6).toString("hex")}.tmp`;
    const handle = await open(temporary, "wx", 0o600);
    try {
      await handle.chmod(0o600);
      await handle.writeFile(`${JSON.stringify(file, null, 2)}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await rename(temporary, this.file);
    } catch (err) {
      await rm(temporary, { force: true });
      throw err;
    }
  }
}
