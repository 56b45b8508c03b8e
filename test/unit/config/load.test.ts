import test from 'ava';
import { configFromText } from '../../../src/config/load';
import { ConfigError } from '../../../src/config/schema';

/** Issue 2 §2: a bad file stops with one line naming where and why. */

test('a YAML syntax error names its line and column and the reason, in one line, without quoting the file', (t) => {
  const text = 'network: testnet\nlisten: { host: 127.0.0.1, port: 8420\nsecret_looking_value: hunter2\n';
  const err = t.throws(() => configFromText(text), { instanceOf: ConfigError });
  t.regex(err.message, /^\(file\): invalid YAML at line \d+, column \d+: \S.*$/);
  t.false(err.message.includes('\n'));
  t.false(err.message.includes('hunter2'));
});

test('a key given twice is refused', (t) => {
  const err = t.throws(() => configFromText('network: testnet\nnetwork: mainnet\n'), { instanceOf: ConfigError });
  t.regex(err.message, /^\(file\): invalid YAML at line 2, column 1: /);
});

test('a valid file parses; an unknown key and a bad value name the key', (t) => {
  t.is(configFromText('network: mainnet\n').network, 'mainnet');
  t.is(t.throws(() => configFromText('network: testnet\nbogus: 1\n'), { instanceOf: ConfigError }).message, 'bogus: unknown key');
  t.regex(t.throws(() => configFromText('network: moonnet\n'), { instanceOf: ConfigError }).message, /^network: /);
});

test('static_addresses.archive_after_days: 180 by default, fractions accepted, zero or negative refused naming the key', (t) => {
  t.is(configFromText('network: testnet\n').static_addresses.archive_after_days, 180);
  t.is(configFromText('static_addresses: { archive_after_days: 0.5 }\n').static_addresses.archive_after_days, 0.5);
  for (const bad of ['0', '-1', '"x"']) {
    t.regex(
      t.throws(() => configFromText(`static_addresses: { archive_after_days: ${bad} }\n`), { instanceOf: ConfigError }).message,
      /^static_addresses\.archive_after_days: /,
    );
  }
  t.is(t.throws(() => configFromText('static_addresses: { scan: 1 }\n'), { instanceOf: ConfigError }).message, 'static_addresses.scan: unknown key');
});

test('static_addresses.archived_scan_hours: 24 by default, fractions accepted, zero, negative or over 500 refused naming the key', (t) => {
  t.is(configFromText('network: testnet\n').static_addresses.archived_scan_hours, 24);
  t.is(configFromText('static_addresses: { archived_scan_hours: 0.001 }\n').static_addresses.archived_scan_hours, 0.001);
  for (const bad of ['0', '-1', '501', '"x"']) {
    t.regex(
      t.throws(() => configFromText(`static_addresses: { archived_scan_hours: ${bad} }\n`), { instanceOf: ConfigError }).message,
      /^static_addresses\.archived_scan_hours: /,
    );
  }
});
