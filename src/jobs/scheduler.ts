import { createTask, type ScheduledTask } from 'node-cron';
import type { Logger } from '../shared/logger';

/** A scheduled job: never overlaps itself, logs and goes on after a failure, stops on shutdown. */
export interface Job {
  name: string;
  /**
   * node-cron expression (six fields give second-level schedules), or a pause between the end of
   * one run and the start of the next, for jobs that poll more often than once a second (a
   * function: asked after each run, for a pause that changes).
   */
  schedule: string | { everyMs: number | (() => number) };
  run(signal: AbortSignal): Promise<void>;
  /**
   * A job with a pause (`everyMs`) may be woken before its pause ends: it is handed `wake`, which
   * runs it now (or, while it runs, once more right after), the pause starting again from there.
   */
  onWake?(wake: () => void): void;
}

export class Scheduler {
  private readonly tasks: ScheduledTask[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly running = new Map<string, Promise<void>>();

  /** `signal`: the daemon's shutdown signal; once aborted no job starts and running ones see it. */
  constructor(
    private readonly logger: Logger,
    private readonly signal: AbortSignal,
  ) {}

  add(job: Job, opts: { runAtStart?: boolean } = {}): void {
    const tick = () => this.runOnce(job);
    if (typeof job.schedule !== 'string') {
      const { everyMs } = job.schedule;
      const pause = typeof everyMs === 'function' ? everyMs : () => everyMs;
      let timer: NodeJS.Timeout | null = null;
      let running = false;
      let again = false;
      const fire = (): void => {
        if (timer) this.timers.delete(timer);
        timer = null;
        running = true;
        void tick().then(() => {
          running = false;
          const woken = again;
          again = false;
          next(woken ? 0 : pause());
        });
      };
      const next = (delay: number): void => {
        if (this.signal.aborted) return;
        timer = setTimeout(fire, delay);
        this.timers.add(timer);
      };
      job.onWake?.(() => {
        if (this.signal.aborted) return;
        if (running) {
          again = true;
          return;
        }
        if (timer) clearTimeout(timer);
        fire();
      });
      next(opts.runAtStart ? 0 : pause());
      return;
    }
    const task = createTask(job.schedule, tick, { name: job.name });
    this.tasks.push(task);
    void task.start();
    if (opts.runAtStart) void tick();
  }

  /** Runs a job now unless it is already running (then returns the running one). */
  runOnce(job: Job): Promise<void> {
    const current = this.running.get(job.name);
    if (current) return current;
    if (this.signal.aborted) return Promise.resolve();
    const p = job
      .run(this.signal)
      .catch((err: unknown) => this.logger.error('job failed', { job: job.name, error: err instanceof Error ? err.message : String(err) }))
      .finally(() => this.running.delete(job.name));
    this.running.set(job.name, p);
    return p;
  }

  /** After the shutdown signal: ends the schedules and waits for the runs under way. */
  async stop(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const t of this.tasks) await t.destroy();
    await Promise.allSettled([...this.running.values()]);
  }
}
