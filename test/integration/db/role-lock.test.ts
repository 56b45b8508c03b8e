import test from 'ava';
import { Client } from 'pg';
import { PostgresRoleLock } from '../../../src/db/role-lock';
import { until } from '../../helpers/cli';
import { tempPostgres } from '../../helpers/pg-database';

test("on PostgreSQL a role is held by one daemon at a time; when the holder's session ends another daemon takes it and the old holder no longer has it", async (t) => {
  const url = await tempPostgres(t);
  const [a, b] = [new PostgresRoleLock(url), new PostgresRoleLock(url)];
  const admin = new Client({ connectionString: url });
  await admin.connect();
  t.teardown(async () => {
    await Promise.all([a.close(), b.close(), admin.end()]);
  });

  t.true(await a.hold('scanner:ethereum'));
  t.false(await b.hold('scanner:ethereum'));
  t.true(await a.hold('scanner:ethereum'), 'held on asking again');
  t.true(await a.hold('payouts:ethereum'), 'roles are independent');

  // The holder's session ends (its daemon killed, its connection cut).
  const ended = await admin.query(
    `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  t.true(ended.rowCount! > 0);
  await until(() => b.hold('scanner:ethereum'), 5000, 'the role taken over');
  t.false(await a.hold('scanner:ethereum').catch(() => false));
  t.false(await a.hold('scanner:ethereum'));
  t.true(await a.hold('payouts:ethereum'), 'a role nobody took is taken again');

  await b.close();
  await until(() => a.hold('scanner:ethereum'), 5000, 'the role taken after the holder closed');
});
