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
