import test from 'ava';
import { approxForPeople } from '../../../src/checkout/approx';

test('an approximate amount has 4 significant digits from the first non-zero one, trailing zeros dropped', (t) => {
  t.is(approxForPeople('0.007352941176470589'), '0.007353');
  t.is(approxForPeople('0.00036766'), '0.0003677');
  t.is(approxForPeople('0.5'), '0.5');
  t.is(approxForPeople('0.10004'), '0.1');
  t.is(approxForPeople('1.23456'), '1.235');
  t.is(approxForPeople('24.9975'), '25');
  t.is(approxForPeople('25'), '25');
  t.is(approxForPeople('123.456789'), '123.5');
  t.is(approxForPeople('0.000000000000000001'), '0.000000000000000001');
});

test('the whole part of an approximate amount is never rounded away', (t) => {
  t.is(approxForPeople('1234.5678'), '1235');
  t.is(approxForPeople('12345.678901'), '12346');
  t.is(approxForPeople('1000000'), '1000000');
});

test('an approximate amount rounds half to even and carries into the next digit', (t) => {
  t.is(approxForPeople('0.99996'), '1');
  t.is(approxForPeople('9999.5'), '10000');
  t.is(approxForPeople('1.00050'), '1');
  t.is(approxForPeople('1.00150'), '1.002');
  // A tie goes to the even digit.
  t.is(approxForPeople('0.00036765'), '0.0003676');
  t.is(approxForPeople('0'), '0');
  t.is(approxForPeople('0.0000'), '0');
});

test('the significant digits can be asked for', (t) => {
  t.is(approxForPeople('0.007352941176470589', 2), '0.0074');
  t.is(approxForPeople('3.14159', 6), '3.14159');
});
