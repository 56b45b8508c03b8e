import test from 'ava';
import { LogTail } from '../../../src/shared/log-tail';
import { createLogger } from '../../../src/shared/logger';

test('the log tail keeps the newest lines oldest first, filters by level, and redacts secret fields as the log does', (t) => {
  const printed: string[] = [];
  const tail = new LogTail(3);
  const logger = tail.wrap(createLogger({ level: 'warn', write: (l) => printed.push(l) })).child({ component: 'test' });
  logger.debug('not kept');
  logger.info('one');
  logger.warn('two', { otp: '123456' });
  logger.error('three');
  logger.info('four');
  t.deepEqual(
    tail.tail('info', 10).map((l) => l.msg),
    ['two', 'three', 'four'],
  );
  t.deepEqual(
    tail.tail('warn', 10).map((l) => l.msg),
    ['two', 'three'],
  );
  t.deepEqual(
    tail.tail('info', 1).map((l) => l.msg),
    ['four'],
  );
  t.deepEqual(tail.tail('warn', 10)[0]!.fields, { component: 'test', otp: '[redacted]' });
  t.is(printed.length, 2, 'the wrapped logger still prints at its own level');
});
