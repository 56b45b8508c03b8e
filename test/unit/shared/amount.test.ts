import test, { type ExecutionContext } from 'ava';
import { Amount, isDecimalString, type RoundingMode } from '../../../src/shared/amount';
import { ApiError } from '../../../src/shared/errors';

const USD = { field: 'amount', decimals: 2 };
const JPY = { field: 'amount', decimals: 0 };
const ETH = { field: 'amount', decimals: 18 };
const BTC = { field: 'amount', decimals: 8 };

/** Asserts Amount.parse refuses input with a 400 validation_error naming the field. */
function refuses(
  t: ExecutionContext,
  input: unknown,
  opts: { field: string; decimals: number; allowZero?: boolean; allowNegative?: boolean },
  messagePart?: RegExp,
): void {
  const err = t.throws(() => Amount.parse(input, opts), { instanceOf: ApiError }, `accepted ${String(input)}`);
  t.is(err?.status, 400);
  t.is(err?.code, 'validation_error');
  t.is((err?.details as { field?: unknown } | undefined)?.field, opts.field);
  t.truthy(err?.message);
  if (messagePart) t.regex(err?.message ?? '', messagePart);
}

const parse = (s: string, opts = ETH): string => Amount.parse(s, opts).toString();

// ---- refusals ---------------------------------------------------------------------------------

test('exponent notation is refused', (t) => {
  for (const s of ['1e-8', '1E8', '1e+5', '1.5e3', '-2e2', 'e5']) refuses(t, s, ETH);
  refuses(t, '1e-8', { field: 'price', decimals: 18 }, /exponent/);
});

test('19 decimals are refused, 18 are fine', (t) => {
  refuses(t, '0.0000000000000000001', ETH, /18/);
  refuses(t, '1.1234567890123456789', { field: 'x', decimals: 30 }, /18/);
  t.is(parse('0.000000000000000001'), '0.000000000000000001');
  t.is(parse('1.123456789012345678'), '1.123456789012345678');
  // a currency claiming more than 18 decimals still gets at most 18
  t.is(parse('1.123456789012345678', { field: 'x', decimals: 24 }), '1.123456789012345678');
});

test('more decimals than the currency has are refused', (t) => {
  refuses(t, '1.5', JPY);
  refuses(t, '100.1', { field: 'amount_fiat', decimals: 0 }, /whole/);
  refuses(t, '1.001', USD, /\(2\)/);
  refuses(t, '0.123456789', BTC);
  refuses(t, '0.0000001', { field: 'amount', decimals: 6 });
  t.is(parse('100', JPY), '100');
  t.is(parse('1.01', USD), '1.01');
  t.is(parse('0.12345678', BTC), '0.12345678');
});

test('trailing zeros do not count as decimals: values, not bytes', (t) => {
  t.is(parse('1.500', USD), '1.5');
  t.is(parse('100.00', JPY), '100');
  t.is(parse('0.10000000000000000000', ETH), '0.1');
});

test('negative is refused unless allowNegative', (t) => {
  refuses(t, '-1', ETH, /negative/);
  refuses(t, '-0.5', { field: 'adjustment', decimals: 2 });
  t.is(parse('-1.25', { field: 'x', decimals: 2, allowNegative: true } as typeof ETH), '-1.25');
});

test('zero is refused unless allowZero', (t) => {
  for (const s of ['0', '0.0', '0.00', '-0', '-0.000']) refuses(t, s, ETH, /zero/);
  const opts = { field: 'min', decimals: 8, allowZero: true };
  for (const s of ['0', '0.0', '-0', '-0.00']) {
    const a = Amount.parse(s, opts);
    t.is(a.toString(), '0');
    t.true(a.isZero());
    t.false(a.isNegative());
  }
});

test('leading zeros, plus sign and malformed numbers are refused', (t) => {
  for (const s of ['007', '00', '01.5', '-01', '00.1']) refuses(t, s, ETH, /leading zero/);
  refuses(t, '+1', ETH, /\+/);
  for (const s of ['.5', '1.', '-', '--1', '1.2.3', '1,5', 'abc', '0x10', 'NaN', 'Infinity', '-Infinity', '١٢', '1_000']) {
    refuses(t, s, ETH);
  }
});

test('whitespace is refused anywhere', (t) => {
  for (const s of [' 1', '1 ', '1 000', '1. 5', '\t1', '1\n', '\u00a01', '1\u2003', ' ']) {
    refuses(t, s, ETH, /whitespace/);
  }
});

test('a number instead of a string is refused', (t) => {
  refuses(t, 1, ETH, /not a number/);
  refuses(t, 0.1, ETH);
  refuses(t, 1e-8, ETH);
  refuses(t, Number.NaN, ETH);
  refuses(t, 10n, ETH);
});

test('empty string is refused', (t) => {
  refuses(t, '', ETH, /empty/);
});

test('very long strings are refused; 100 characters is the limit', (t) => {
  refuses(t, '1'.repeat(101), ETH, /too long/);
  refuses(t, '1'.repeat(1_000_000), ETH);
  refuses(t, `0.${'0'.repeat(200)}`, ETH);
  const hundred = '9'.repeat(100);
  t.is(parse(hundred), hundred);
});

test('null, undefined, objects, arrays and booleans are refused', (t) => {
  for (const v of [null, undefined, {}, { value: '1' }, ['1'], true, new String('1'), Symbol('1')]) {
    refuses(t, v, ETH);
  }
});

test('details.field is the given field on each kind of refusal', (t) => {
  const cases: Array<[unknown, string]> = [
    ['1e5', 'amount'],
    ['0.0000000000000000001', 'fee'],
    ['1.234', 'amount_fiat'],
    ['-3', 'limit'],
    ['0', 'min_amount'],
    ['01', 'price'],
    [' 1', 'a'],
    [5, 'b'],
    ['', 'c'],
    ['1'.repeat(101), 'd'],
    [null, 'e'],
  ];
  for (const [input, field] of cases) refuses(t, input, { field, decimals: 2 });
});

// ---- values and formatting --------------------------------------------------------------------

test('"0.10" equals "0.1"', (t) => {
  const a = Amount.parse('0.10', USD);
  const b = Amount.parse('0.1', USD);
  t.true(a.eq(b));
  t.is(a.cmp(b), 0);
  t.is(a.toString(), '0.1');
  t.is(JSON.stringify({ a }), '{"a":"0.1"}');
});

test('output is normalised', (t) => {
  t.is(parse('1.500'), '1.5');
  t.is(parse('1.000'), '1');
  t.is(parse('10'), '10');
  t.is(parse('0.000000000000000001'), '0.000000000000000001');
  t.is(parse('1000000000000000000000000000000'), '1000000000000000000000000000000');
  t.is(parse('123456789012345678901234567890.123456789012345678'), '123456789012345678901234567890.123456789012345678');
  t.is(Amount.of('1000000000000000000000000000000').toString(), '1000000000000000000000000000000');
  t.is(Amount.fromBaseUnits(1n, 18).toString(), '0.000000000000000001');
  t.is(Amount.fromBaseUnits(10n ** 48n, 18).toString(), '1000000000000000000000000000000');
  t.is(Amount.of('0.000000001').times('0.000000001').toString(), '0.000000000000000001');
  t.is(Amount.of('-0').toString(), '0');
  t.is(Amount.of('1').minus(Amount.of('1')).toString(), '0');
  t.is(Amount.of('0').times('-5').toString(), '0');
  t.is(Amount.of('-1').div('3', 2, 'up').toString(), '-0.33');
  t.is(Amount.of('-0.001').round(2, 'up').toString(), '0');
  t.is(`${Amount.of('2.50')}`, '2.5');
  t.is(Amount.of('2.50').toJSON(), '2.5');
  t.is(Amount.zero().toString(), '0');
});

test('isDecimalString is a syntactic check', (t) => {
  for (const s of ['0', '-0', '1', '0.1', '0.10', '-12.5', '123456789012345678901234567890.1234567890123456789']) {
    t.true(isDecimalString(s), s);
  }
  for (const v of ['', ' 1', '1 ', '01', '+1', '1e5', '.5', '1.', 'abc', 1, null, undefined, {}, 1n]) {
    t.false(isDecimalString(v), String(v));
  }
});

test('Amount.of takes trusted strings, bigints, safe integers and Amounts', (t) => {
  t.is(Amount.of('12.3400').toString(), '12.34');
  t.is(Amount.of('007').toString(), '7');
  t.is(Amount.of(42n).toString(), '42');
  t.is(Amount.of(-5).toString(), '-5');
  const a = Amount.of('1.5');
  t.is(Amount.of(a), a);
  t.throws(() => Amount.of(0.1));
  t.throws(() => Amount.of(2 ** 53));
  t.throws(() => Amount.of('1e5'));
  t.throws(() => Amount.of(' 1'));
  t.throws(() => Amount.of(''));
  t.throws(() => Amount.of(null as unknown as string));
});

test('amounts are immutable and refuse to act as numbers', (t) => {
  const a = Amount.of('1.5');
  const b = a.plus(Amount.of('1'));
  t.is(a.toString(), '1.5');
  t.is(b.toString(), '2.5');
  t.true(Object.isFrozen(a));
  t.throws(() => {
    (a as unknown as { d: unknown }).d = null;
  });
  t.throws(() => +(a as unknown as number), { instanceOf: TypeError });
  t.throws(() => (a as unknown as number) < (b as unknown as number), { instanceOf: TypeError });
  t.is('x' + a, 'x1.5');
});

// ---- base units -------------------------------------------------------------------------------

test('base units round trip for 0, 6, 8 and 18 decimals', (t) => {
  const cases: Array<[number, string, bigint]> = [
    [0, '0', 0n],
    [0, '12345', 12345n],
    [6, '0', 0n],
    [6, '1.5', 1_500_000n],
    [6, '0.000001', 1n],
    [6, '123456.654321', 123456654321n],
    [8, '0', 0n],
    [8, '0.00000001', 1n],
    [8, '21000000', 2_100_000_000_000_000n],
    [8, '1.23456789', 123456789n],
    [18, '0', 0n],
    [18, '1', 10n ** 18n],
    [18, '0.000000000000000001', 1n],
    [18, '123456789012345678901234567890.123456789012345678', 123456789012345678901234567890123456789012345678n],
    [18, '-2.5', -2_500_000_000_000_000_000n],
  ];
  for (const [decimals, s, units] of cases) {
    const a = Amount.of(s);
    t.is(a.toBaseUnits(decimals), units, `${s} @${decimals}`);
    t.is(Amount.fromBaseUnits(units, decimals).toString(), s, `${units} @${decimals}`);
    t.true(Amount.fromBaseUnits(a.toBaseUnits(decimals), decimals).eq(a));
  }
  t.is(Amount.fromBaseUnits(150n, 2).toString(), '1.5');
  t.is(Amount.fromBaseUnits(5n, 0).toString(), '5');
  t.is(Amount.fromBaseUnits(-1n, 8).toString(), '-0.00000001');
});

test('toBaseUnits throws on more decimals than allowed', (t) => {
  t.throws(() => Amount.of('0.000000001').toBaseUnits(8));
  t.throws(() => Amount.of('1.5').toBaseUnits(0));
  t.is(Amount.of('1.50').toBaseUnits(1), 15n);
  t.throws(() => Amount.of('1').toBaseUnits(-1));
  t.throws(() => Amount.of('1').toBaseUnits(1.5));
});

// ---- arithmetic -------------------------------------------------------------------------------

test('plus, minus and times are exact', (t) => {
  const big = Amount.of('123456789012345678901234567890.123456789012345678');
  t.is(big.plus(Amount.of('0.000000000000000001')).toString(), '123456789012345678901234567890.123456789012345679');
  t.is(big.minus(big).toString(), '0');
  t.is(Amount.of('0.1').plus(Amount.of('0.2')).toString(), '0.3');
  t.is(Amount.of('1').minus(Amount.of('1.000000000000000001')).toString(), '-0.000000000000000001');
  t.is(big.times(big).toString(), '15241578753238836750495351562566681945008382873153482703427.831123554031397676527968299765279684');
  t.is(Amount.of('1.1').times(Amount.of('1.1')).toString(), '1.21');
  t.is(Amount.of('2').times('-0.5').toString(), '-1');
});

const table = (t: ExecutionContext, fn: (mode: RoundingMode) => Amount, expected: Record<RoundingMode, string>, label: string): void => {
  for (const mode of ['up', 'down', 'half_even'] as const) t.is(fn(mode).toString(), expected[mode], `${label} ${mode}`);
};

test('div rounds with the given mode to the given decimals', (t) => {
  table(t, (m) => Amount.of('1').div('3', 2, m), { up: '0.34', down: '0.33', half_even: '0.33' }, '1/3');
  table(t, (m) => Amount.of('2').div('3', 2, m), { up: '0.67', down: '0.66', half_even: '0.67' }, '2/3');
  // ties: half_even goes to the even neighbour
  table(t, (m) => Amount.of('0.125').div('1', 2, m), { up: '0.13', down: '0.12', half_even: '0.12' }, '0.125');
  table(t, (m) => Amount.of('0.135').div('1', 2, m), { up: '0.14', down: '0.13', half_even: '0.14' }, '0.135');
  table(t, (m) => Amount.of('5').div('2', 0, m), { up: '3', down: '2', half_even: '2' }, '5/2');
  table(t, (m) => Amount.of('7').div('2', 0, m), { up: '4', down: '3', half_even: '4' }, '7/2');
  // exact results are untouched
  table(t, (m) => Amount.of('10').div('4', 8, m), { up: '2.5', down: '2.5', half_even: '2.5' }, '10/4');
  // negatives: up = toward +infinity, down = toward -infinity
  table(t, (m) => Amount.of('-1').div('3', 2, m), { up: '-0.33', down: '-0.34', half_even: '-0.33' }, '-1/3');
  table(t, (m) => Amount.of('-5').div('2', 0, m), { up: '-2', down: '-3', half_even: '-2' }, '-5/2');
  table(t, (m) => Amount.of('5').div('-2', 0, m), { up: '-2', down: '-3', half_even: '-2' }, '5/-2');
  // fiat to coin: 100 USD at 65000.12 USD/BTC, 8 decimals (exact quotient 0.0015384586982...)
  table(t, (m) => Amount.of('100').div(Amount.of('65000.12'), 8, m), { up: '0.00153846', down: '0.00153845', half_even: '0.00153846' }, '100/65000.12');
  // no intermediate rounding: a remainder far beyond 60 significant digits still rounds up
  const n = Amount.of(`1${'0'.repeat(70)}1`);
  table(t, (m) => n.div('1', 0, m), { up: n.toString(), down: n.toString(), half_even: n.toString() }, 'big exact');
  table(t, (m) => n.div('10', 0, m), { up: `1${'0'.repeat(69)}1`, down: `1${'0'.repeat(70)}`, half_even: `1${'0'.repeat(70)}` }, 'big /10');
  t.throws(() => Amount.of('1').div('0', 2, 'up'));
  t.throws(() => Amount.of('1').div('3', 2, 'nearest' as RoundingMode));
});

test('round uses ceiling, floor and half-even', (t) => {
  table(t, (m) => Amount.of('1.231').round(2, m), { up: '1.24', down: '1.23', half_even: '1.23' }, '1.231');
  table(t, (m) => Amount.of('1.239').round(2, m), { up: '1.24', down: '1.23', half_even: '1.24' }, '1.239');
  table(t, (m) => Amount.of('1.225').round(2, m), { up: '1.23', down: '1.22', half_even: '1.22' }, '1.225');
  table(t, (m) => Amount.of('1.235').round(2, m), { up: '1.24', down: '1.23', half_even: '1.24' }, '1.235');
  table(t, (m) => Amount.of('-1.231').round(2, m), { up: '-1.23', down: '-1.24', half_even: '-1.23' }, '-1.231');
  table(t, (m) => Amount.of('-1.225').round(2, m), { up: '-1.22', down: '-1.23', half_even: '-1.22' }, '-1.225');
  table(t, (m) => Amount.of('2.5').round(0, m), { up: '3', down: '2', half_even: '2' }, '2.5');
  table(t, (m) => Amount.of('0.000000000000000001').round(8, m), { up: '0.00000001', down: '0', half_even: '0' }, '1 wei');
  table(t, (m) => Amount.of('1.5').round(8, m), { up: '1.5', down: '1.5', half_even: '1.5' }, 'no-op');
  t.is(Amount.of('1.239').round(2, 'up').decimalPlaces(), 2);
});

test('percent is this * p / 100, rounded', (t) => {
  table(t, (m) => Amount.of('100').percent('1.5', 2, m), { up: '1.5', down: '1.5', half_even: '1.5' }, '1.5% of 100');
  table(t, (m) => Amount.of('0.12345678').percent('1', 8, m), { up: '0.00123457', down: '0.00123456', half_even: '0.00123457' }, '1% of 0.12345678');
  table(t, (m) => Amount.of('10.05').percent('10', 2, m), { up: '1.01', down: '1', half_even: '1' }, '10% of 10.05');
  table(t, (m) => Amount.of('10.15').percent('10', 2, m), { up: '1.02', down: '1.01', half_even: '1.02' }, '10% of 10.15');
  table(t, (m) => Amount.of('33.33').percent(Amount.of('0.5'), 2, m), { up: '0.17', down: '0.16', half_even: '0.17' }, '0.5% of 33.33');
  table(t, (m) => Amount.of('1').percent('0.3', 18, m), { up: '0.003', down: '0.003', half_even: '0.003' }, 'exact');
});

test('comparisons and sign checks', (t) => {
  const one = Amount.of('1');
  const two = Amount.of('2.0');
  t.is(one.cmp(two), -1);
  t.is(two.cmp(one), 1);
  t.is(one.cmp(Amount.of('1.000')), 0);
  t.true(one.lt(two) && one.lte(two) && one.lte(Amount.of('1')));
  t.true(two.gt(one) && two.gte(one) && two.gte(Amount.of('2')));
  t.false(one.gt(two) || one.gte(two) || two.lt(one) || two.lte(one));
  t.false(one.eq(two));
  t.true(Amount.of('-0.1').isNegative());
  t.false(Amount.of('-0.1').isPositive());
  t.true(Amount.of('0.1').isPositive());
  t.false(Amount.zero().isPositive() || Amount.zero().isNegative());
  t.true(Amount.zero().isZero());
  t.is(Amount.of('1.2300').decimalPlaces(), 2);
  t.is(Amount.of('5').decimalPlaces(), 0);
  t.is(Amount.of('0.000000000000000001').decimalPlaces(), 18);
});
