import test from 'ava';
import { Scheduler } from '../../../src/jobs/scheduler';
import { silentLogger } from '../../../src/shared/logger';

test('the shutdown signal reaches a running job, and no job starts once it is aborted', async (t) => {
  const shutdown = new AbortController();
  const scheduler = new Scheduler(silentLogger, shutdown.signal);
  let runs = 0;
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  let sawAbort!: () => void;
  const aborted = new Promise<void>((resolve) => (sawAbort = resolve));
  const job = {
    name: 'waits-for-shutdown',
    schedule: { everyMs: 1 },
    run: (signal: AbortSignal) => {
      runs += 1;
      started();
      return new Promise<void>((resolve) => signal.addEventListener('abort', () => (sawAbort(), resolve()), { once: true }));
    },
  };
  scheduler.add(job, { runAtStart: true });
  await running;

  shutdown.abort();
  await aborted;
  await scheduler.stop();
  await scheduler.runOnce(job);
  t.is(runs, 1, 'nothing ran after the signal');
});

test('a job whose pause is a function is asked for it after each run (a chain polled at the pace its request budget allows)', async (t) => {
  const shutdown = new AbortController();
  const scheduler = new Scheduler(silentLogger, shutdown.signal);
  const asked: number[] = [];
  let runs = 0;
  let thirdRun!: () => void;
  const third = new Promise<void>((resolve) => (thirdRun = resolve));
  scheduler.add(
    {
      name: 'paced',
      schedule: { everyMs: () => (asked.push(runs), 1) },
      run: async () => {
        if (++runs === 3) thirdRun();
      },
    },
    { runAtStart: true },
  );
  await third;
  shutdown.abort();
  await scheduler.stop();
  t.deepEqual(asked.slice(0, 2), [1, 2], 'asked after the first and the second run');
});

test('a job woken before its pause ends runs at once; woken while it runs, it runs once more right after', async (t) => {
  const shutdown = new AbortController();
  const scheduler = new Scheduler(silentLogger, shutdown.signal);
  let wake!: () => void;
  let runs = 0;
  let release: (() => void) | null = null;
  const job = {
    name: 'woken',
    schedule: { everyMs: 600_000 },
    run: () => {
      runs++;
      return new Promise<void>((resolve) => (release = resolve));
    },
    onWake: (w: () => void) => (wake = w),
  };
  scheduler.add(job);
  const until = async (ok: () => boolean) => {
    const deadline = Date.now() + 2000;
    while (!ok() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  };
  t.is(runs, 0, 'not before its pause');
  wake();
  t.is(runs, 1, 'woken: runs at once');
  // Woken twice during the run: one more run after it, not two.
  wake();
  wake();
  release!();
  await until(() => runs === 2);
  t.is(runs, 2);
  release!();
  await new Promise((r) => setTimeout(r, 50));
  t.is(runs, 2, 'then the pause again');
  shutdown.abort();
  await scheduler.stop();
});
