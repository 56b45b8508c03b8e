import test from 'ava';
import cron from 'node-cron';
import { everySeconds, refreshRatesJob } from '../../../src/jobs/refresh-rates.job';
import { StubFetcher, stubbedEngine } from '../rates/stub-fetcher';

const gapsOf = (schedule: string): number[] => {
  const task = cron.createTask(schedule, () => undefined, { timezone: 'UTC' });
  const runs = task.getNextRuns(6).map((d) => d.getTime());
  void task.destroy();
  return runs.slice(1).map((r, i) => (r - runs[i]!) / 1000);
};

for (const [seconds, schedule, gap] of [
  [30, '*/30 * * * * *', 30],
  [1, '*/1 * * * * *', 1],
  [15, '*/15 * * * * *', 15],
  [60, '0 * * * * *', 60],
  [300, '0 */5 * * * *', 300],
  [3600, '0 0 * * * *', 3600],
  [86400, '0 0 0 * * *', 86400],
] as const) {
  test(`a refresh every ${seconds} s is scheduled as ${schedule}`, (t) => {
    t.is(everySeconds(seconds), schedule);
    t.true(cron.validate(schedule));
    t.deepEqual(new Set(gapsOf(schedule)), new Set([gap]));
  });
}

for (const [seconds, gap] of [
  [45, 30],
  [7, 6],
  [90, 60],
  [100_000, 86400],
] as const) {
  test(`an interval cron cannot repeat evenly (${seconds} s) is shortened to ${gap} s`, (t) => {
    const schedule = everySeconds(seconds);
    t.true(cron.validate(schedule));
    t.deepEqual(new Set(gapsOf(schedule)), new Set([gap]));
  });
}

test('the job refreshes the engine', async (t) => {
  const stub = new StubFetcher().usd({ BTC: '5' });
  const { engine } = stubbedEngine([stub]);
  const job = refreshRatesJob(engine, 30);
  t.is(job.name, 'refresh-rates');
  t.is(job.schedule, '*/30 * * * * *');
  await job.run(new AbortController().signal);
  t.is(stub.calls, 1);
  t.is(engine.rate('BTC', 'USD').rate, '5');
});
