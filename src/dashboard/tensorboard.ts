/**
 * `rrl export tensorboard RUN --out DIR`: a run's scalars as TensorBoard event files, one
 * TensorBoard run per directory:
 *
 * - `DIR/run/`: per iteration, all tasks: `outer/reward`, `outer/score_normalized` (mean),
 *   `outer/score_normalized_best`, `outer/invalid_share`, `outer/failed_share`,
 *   `compute/env_steps`, `compute/examples`, `compute/cpu_seconds`, and the agent's update
 *   statistics (`agent/entropy`, `agent/loss`, …);
 * - `DIR/tasks/TASK/`: per iteration, one task: the same outer figures, and `baseline/score_normalized`;
 * - `DIR/jobs/jNNNNN/`: one job's training curve under its own names (`charts/episodic_return`,
 *   `losses/value_loss`, …) and `job/score_normalized`, `job/score_stderr`, `job/reward`.
 *
 * Steps are 1-based iteration numbers (as `rrl train` prints them) and the jobs' own steps.
 * The files are TFRecords (length, masked CRC-32C of the length, an `Event` protobuf, masked
 * CRC-32C of the data) with `Event`/`Summary` encoded by protobufjs from TensorBoard's own field numbers.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { openReadOnly } from './catalog.js';
import { type IterationFigures, runDetail } from './queries.js';

// The parts of tensorboard/compat/proto/{event,summary}.proto an event file of scalars uses.
const PROTO = `
syntax = "proto3";
package tensorboard;
message Summary {
  message Value {
    string node_name = 7;
    string tag = 1;
    oneof value { float simple_value = 2; }
  }
  repeated Value value = 1;
}
message Event {
  double wall_time = 1;
  int64 step = 2;
  oneof what { string file_version = 3; Summary summary = 5; }
}
`;
const EventType = protobuf.parse(PROTO, { keepCase: true }).root.lookupType('tensorboard.Event');

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32C (Castagnoli), as TFRecord framing uses it. */
export function crc32c(data: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < data.length; i++) c = CRC_TABLE[(c ^ data[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** The masked CRC a TFRecord stores. */
export function maskedCrc32c(data: Uint8Array): number {
  const c = crc32c(data);
  return ((((c >>> 15) | (c << 17)) >>> 0) + 0xa282ead8) >>> 0;
}

/** One TFRecord: length, its masked CRC, the data, the data's masked CRC. */
function record(data: Uint8Array): Buffer {
  const head = Buffer.alloc(12);
  head.writeBigUInt64LE(BigInt(data.length), 0);
  head.writeUInt32LE(maskedCrc32c(head.subarray(0, 8)), 8);
  const tail = Buffer.alloc(4);
  tail.writeUInt32LE(maskedCrc32c(data), 0);
  return Buffer.concat([head, data, tail]);
}

/** An event file being written: scalars collected, written on `close()`. */
export class EventFileWriter {
  private readonly records: Buffer[] = [];
  readonly path: string;
  private count = 0;

  /** A new event file in `dir` (created), starting with the file-version event. */
  constructor(dir: string, wallTime = Date.now() / 1000) {
    mkdirSync(dir, { recursive: true });
    this.path = join(dir, `events.out.tfevents.${Math.floor(wallTime)}.${hostname().replace(/[^A-Za-z0-9.-]/g, '_')}`);
    this.records.push(record(EventType.encode(EventType.fromObject({ wall_time: wallTime, file_version: 'brain.Event:2' })).finish()));
  }

  /** Adds one scalar; values that are not finite numbers are left out. */
  scalar(tag: string, step: number, value: number | null | undefined, wallTime: number): void {
    if (typeof value !== 'number' || !Number.isFinite(value)) return;
    const event = EventType.fromObject({ wall_time: wallTime, step, summary: { value: [{ tag, simple_value: value }] } });
    this.records.push(record(EventType.encode(event).finish()));
    this.count += 1;
  }

  /** Writes the file; returns how many scalars it holds. */
  close(): number {
    writeFileSync(this.path, Buffer.concat(this.records));
    return this.count;
  }
}

const seconds = (iso: string | null | undefined, fallback: number): number => {
  const t = iso ? Date.parse(iso) : NaN;
  return Number.isFinite(t) ? t / 1000 : fallback;
};

/** A directory name for a task id. */
const safe = (s: string): string => s.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^\.+/, '_') || '_';

/** The outer figures of one iteration, as scalars. */
function iterationScalars(w: EventFileWriter, f: IterationFigures, wall: number): void {
  const step = f.iteration + 1;
  w.scalar('outer/reward', step, f.meanReward, wall);
  w.scalar('outer/score_normalized', step, f.meanNormalized, wall);
  w.scalar('outer/score_normalized_best', step, f.bestNormalized, wall);
  w.scalar('outer/invalid_share', step, f.jobs ? f.invalid / f.jobs : null, wall);
  w.scalar('outer/failed_share', step, f.jobs ? f.failed / f.jobs : null, wall);
  w.scalar('compute/env_steps', step, f.envSteps, wall);
  w.scalar('compute/examples', step, f.examples, wall);
  w.scalar('compute/cpu_seconds', step, f.cpuSeconds, wall);
}

/** Writes the event files of the run in `runDir` under `out`; returns what was written. */
export function exportTensorboard(runDir: string, out: string): { files: number; scalars: number; out: string } {
  if (!existsSync(join(runDir, 'store.db'))) throw new Error(`no run in ${runDir}: store.db not found`);
  const db = openReadOnly(runDir);
  try {
    const d = runDetail(db);
    if (!d) throw new Error(`no run in ${runDir}: the store has no run`);
    const start = seconds(d.summary.createdAt, Date.now() / 1000);
    let files = 0;
    let scalars = 0;
    const finish = (w: EventFileWriter): void => {
      scalars += w.close();
      files += 1;
    };

    const run = new EventFileWriter(join(out, 'run'), start);
    for (const it of d.iterations) {
      const wall = seconds(it.lastFinishedAt, start);
      iterationScalars(run, it, wall);
      for (const [name, value] of Object.entries(it.updateStats ?? {})) run.scalar(name.includes('/') ? name : `agent/${name}`, it.iteration + 1, value, wall);
    }
    finish(run);

    for (const task of [...new Set(d.perTask.map((r) => r.task ?? ''))]) {
      const w = new EventFileWriter(join(out, 'tasks', safe(task)), start);
      // The task's reference: the mean of its baseline seeds that scored.
      const seeds = d.baselines.filter((b) => b.task === task && b.normalized !== null).map((b) => b.normalized as number);
      const base = seeds.length ? { normalized: seeds.reduce((a, v) => a + v, 0) / seeds.length } : undefined;
      for (const f of d.perTask.filter((r) => r.task === task)) {
        const wall = seconds(f.lastFinishedAt, start);
        iterationScalars(w, f, wall);
        w.scalar('baseline/score_normalized', f.iteration + 1, base?.normalized, wall);
      }
      finish(w);
    }

    const jobs = db
      .prepare(
        `SELECT j.id, j.finished_at AS finishedAt, j.wall_seconds AS wallSeconds, s.normalized, s.stderr, r.reward
           FROM jobs j LEFT JOIN scores s ON s.job_id = j.id LEFT JOIN rewards r ON r.job_id = j.id WHERE j.status != 'pending' ORDER BY j.id`,
      )
      .all() as {
      id: number;
      finishedAt: string | null;
      wallSeconds: number | null;
      normalized: number | null;
      stderr: number | null;
      reward: number | null;
    }[];
    const curve = db.prepare('SELECT name, step, wall_time AS wallTime, value FROM curves WHERE job_id = ? ORDER BY name, step');
    for (const j of jobs) {
      const end = seconds(j.finishedAt, start);
      const jobStart = end - (j.wallSeconds ?? 0);
      const w = new EventFileWriter(join(out, 'jobs', `j${String(j.id).padStart(5, '0')}`), jobStart);
      let lastStep = 0;
      for (const p of curve.iterate(j.id) as Iterable<{ name: string; step: number; wallTime: number; value: number }>) {
        w.scalar(p.name, p.step, p.value, jobStart + p.wallTime);
        lastStep = Math.max(lastStep, p.step);
      }
      w.scalar('job/score_normalized', lastStep, j.normalized, end);
      w.scalar('job/score_stderr', lastStep, j.stderr, end);
      w.scalar('job/reward', lastStep, j.reward, end);
      finish(w);
    }
    return { files, scalars, out };
  } finally {
    db.close();
  }
}
