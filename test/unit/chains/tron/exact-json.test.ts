/**
 * java-tron prints int64 fields (a TransferContract's amount, an account's balance) as bare JSON
 * numbers: above 2^53 JSON.parse rounds them. The Tron transport reads them exactly.
 */
import test from 'ava';
import { exactInteger, parseExactJson } from '../../../../src/chains/tron/exact-json';

test('an integer above 2^53 is read exactly, as a bigint; safe integers stay numbers', (t) => {
  const got = parseExactJson('{"amount":9007199254740993,"fee":1100000,"list":[18446744073709551615,-9223372036854775808,3]}') as Record<string, unknown>;
  t.is(got.amount, 9007199254740993n);
  t.is(got.fee, 1_100_000);
  t.deepEqual(got.list, [18446744073709551615n, -9223372036854775808n, 3]);
  t.is(exactInteger(got.amount), 9007199254740993n);
  t.is(exactInteger(got.fee), 1_100_000n);
  t.is(exactInteger(-1), null);
  t.is(exactInteger(1.5), null);
});

test('digits inside strings, fractions and exponents are left as JSON.parse reads them', (t) => {
  const text =
    '{"blockID":"00000000039387001234567890123456","data":"12345678901234567890","f":12345678901234567.5,"e":12345678901234567e2,"g":1.12345678901234567,"s":"a\\"12345678901234567890"}';
  t.deepEqual(parseExactJson(text), JSON.parse(text));
});

test('a string that looks like a marker stays a string', (t) => {
  const text = '{"a":"\\u0000big:00:123","b":90071992547409930}';
  const got = parseExactJson(text) as Record<string, unknown>;
  t.is(got.a, '\u0000big:00:123');
  t.is(got.b, 90071992547409930n);
});

test('not JSON still throws', (t) => {
  t.throws(() => parseExactJson('this API is closed because this node is a lite fullnode'));
});
