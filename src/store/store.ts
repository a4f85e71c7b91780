import { JobStore, now } from './job-store.js';
import type { EpisodeRow, RequestMatch, RequestRow, RewardEntry, SubmissionRow } from './rows.js';

export type {
  CacheOrigin,
  EpisodeRow,
  IterationRow,
  JobKind,
  JobOutcome,
  JobRow,
  JobStatus,
  NewJob,
  RequestMatch,
  RequestRow,
  RewardEntry,
  SubmissionRow,
} from './rows.js';

/**
 * The run's record in SQLite (WAL mode, every write in a transaction): the run, its iterations,
 * jobs and checkpoints (store/job-store.ts), and the requests and episodes of `rrl serve`.
 */
export class Store extends JobStore {
  /**
   * Records a request of `rrl serve` (a group of completions for one task) with its jobs, all or
   * none: job `i` of request `r` is stored with round `r` and slot `i`. A request that is a
   * submission of an episode (`episode`) is recorded as its next submission in the same
   * transaction. Returns the request id.
   */
  addRequest(
    runId: string,
    task: string,
    jobs: { spec: unknown; trace: unknown; rejected?: { kind: string; error: string }; patch?: unknown }[],
    match: { key: string | null; digest: string | null } = { key: null, digest: null },
    episode?: { id: number; key: string | null },
  ): number {
    return this.db.transaction(() => {
      const id = Number(
        this.db
          .prepare("INSERT INTO requests (run_id, task, completions, status, created_at, idem_key, digest) VALUES (?, ?, ?, 'pending', ?, ?, ?)")
          .run(runId, task, jobs.length, now(), match.key, match.digest).lastInsertRowid,
      );
      this.addJobs(
        runId,
        jobs.map((j, slot) => ({ ...j, round: id, slot, task, kind: 'proposal' as const, agent: 'external' })),
      );
      if (episode) {
        this.db
          .prepare(
            `INSERT INTO episode_submissions (episode_id, idx, request_id, idem_key)
             SELECT ?, COUNT(*) + 1, ?, ? FROM episode_submissions WHERE episode_id = ?`,
          )
          .run(episode.id, id, episode.key, episode.id);
      }
      return id;
    })();
  }

  /** Records an open episode of `rrl serve` (up to `maxSubmissions` jobs of one task); returns its id. */
  addEpisode(runId: string, task: string, maxSubmissions: number, key: string | null): number {
    return Number(
      this.db
        .prepare("INSERT INTO episodes (run_id, task, max_submissions, status, idem_key, created_at) VALUES (?, ?, ?, 'open', ?, ?)")
        .run(runId, task, maxSubmissions, key, now()).lastInsertRowid,
    );
  }

  /** One episode of a run by id, if any. */
  episode(runId: string, id: number): EpisodeRow | undefined {
    return this.episodeWhere('run_id = ? AND id = ?', runId, id);
  }

  /** The episode made with an idempotency key, if any. */
  episodeByKey(runId: string, key: string): EpisodeRow | undefined {
    return this.episodeWhere('run_id = ? AND idem_key = ? ORDER BY id LIMIT 1', runId, key);
  }

  /** The first episode that matches `where`. */
  private episodeWhere(where: string, ...args: unknown[]): EpisodeRow | undefined {
    const r = this.db
      .prepare(
        `SELECT id, task, max_submissions AS maxSubmissions, status, idem_key AS key, reward, reason, answer,
                created_at AS createdAt, closed_at AS closedAt
           FROM episodes WHERE ${where}`,
      )
      .get(...args) as (Omit<EpisodeRow, 'answer'> & { answer: string | null }) | undefined;
    return r && { ...r, answer: r.answer === null ? null : JSON.parse(r.answer) };
  }

  /** The submissions of an episode, in order, each with its request and (once settled) its stored feedback. */
  episodeSubmissions(episodeId: number): SubmissionRow[] {
    const rows = this.db
      .prepare(
        `SELECT e.idx, e.request_id AS request, e.idem_key AS key, e.feedback, r.digest
           FROM episode_submissions e JOIN requests r ON r.id = e.request_id WHERE e.episode_id = ? ORDER BY e.idx`,
      )
      .all(episodeId) as (Omit<SubmissionRow, 'feedback'> & { feedback: string | null })[];
    return rows.map((r) => ({ ...r, feedback: r.feedback === null ? null : JSON.parse(r.feedback) }));
  }

  /** Keeps the feedback of a settled submission (what its reply showed), so later reads need neither its request nor its artifact. */
  setSubmissionFeedback(episodeId: number, idx: number, feedback: unknown): void {
    this.db.prepare('UPDATE episode_submissions SET feedback = ? WHERE episode_id = ? AND idx = ?').run(JSON.stringify(feedback), episodeId, idx);
  }

  /** Closes an open episode with its reward and the answer its close gave; false when it was closed already (nothing changes). */
  closeEpisode(id: number, reward: number | null, reason: string | null, answer: unknown): boolean {
    const r = this.db
      .prepare("UPDATE episodes SET status = 'closed', reward = ?, reason = ?, answer = ?, closed_at = ? WHERE id = ? AND status = 'open'")
      .run(reward, reason, JSON.stringify(answer), now(), id);
    return r.changes === 1;
  }

  /** Closes a request: its rewards and the response it answered land together. */
  finishRequest(id: number, rewards: RewardEntry[], response: unknown): void {
    this.db.transaction(() => {
      this.insertRewards(rewards);
      this.db.prepare("UPDATE requests SET status = 'done', response = ?, finished_at = ? WHERE id = ?").run(JSON.stringify(response), now(), id);
    })();
  }

  /** The request made with an idempotency key, if any. */
  requestByKey(runId: string, key: string): RequestMatch | undefined {
    return this.db.prepare('SELECT id, task, completions, digest FROM requests WHERE run_id = ? AND idem_key = ? ORDER BY id LIMIT 1').get(runId, key) as
      | RequestMatch
      | undefined;
  }

  /** The latest request with this digest made within the last `withinSeconds`, if any. */
  requestByDigest(runId: string, digest: string, withinSeconds: number): RequestMatch | undefined {
    const since = new Date(Date.now() - withinSeconds * 1000).toISOString();
    return this.db
      .prepare('SELECT id, task, completions, digest FROM requests WHERE run_id = ? AND digest = ? AND created_at >= ? ORDER BY id DESC LIMIT 1')
      .get(runId, digest, since) as RequestMatch | undefined;
  }

  /** One request of a run by id (as `requests` lists it), if any. */
  request(runId: string, id: number): RequestRow | undefined {
    return this.requests(runId, undefined, id)[0];
  }

  /** Requests of a run, optionally only those with a status (`pending` / `done`), in order. */
  requests(runId: string, status?: string, id?: number): RequestRow[] {
    const args: unknown[] = [runId, ...(status ? [status] : []), ...(id !== undefined ? [id] : [])];
    const rows = this.db
      .prepare(
        `SELECT id, task, completions, status, response, created_at AS createdAt, finished_at AS finishedAt
           FROM requests WHERE run_id = ?${status ? ' AND status = ?' : ''}${id !== undefined ? ' AND id = ?' : ''} ORDER BY id`,
      )
      .all(...args) as (Omit<RequestRow, 'response'> & { response: string | null })[];
    return rows.map((r) => ({ ...r, response: r.response === null ? null : JSON.parse(r.response) }));
  }
}
