import test from 'ava';
import ExcelJS from 'exceljs';
import { createRequire } from 'node:module';
import { PassThrough, type Readable } from 'node:stream';
import type { AppContext } from '../../../src/http/context';
import { csvField, sendExport, sheetBacklog, type ExportColumn, type ExportFormat } from '../../../src/http/export';
import { silentLogger } from '../../../src/shared/logger';

/** The export streams without a server: a context that keeps what sendExport sets. */
function exportOf<R>(format: ExportFormat, columns: readonly ExportColumn<R>[], batches: R[][]) {
  const ctx = { status: 0, state: { requestId: 'r' }, body: null as unknown, set: () => undefined };
  let asked = 0;
  let stopped = false;
  const source: AsyncIterableIterator<R[]> = {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      const value = batches[asked++];
      return value === undefined ? { done: true, value: undefined } : { done: false, value };
    },
    async return() {
      stopped = true;
      return { done: true, value: undefined };
    },
  };
  const started = sendExport(ctx as unknown as AppContext, {
    name: 'things',
    format,
    columns,
    batches: () => source,
    present: (r) => r,
    count: async () => batches.flat().length,
    logger: silentLogger,
    now: new Date('2026-11-22T21:30:00Z'),
  });
  return { started, body: () => ctx.body as Readable, asked: () => asked, stopped: () => stopped };
}

const COLUMNS: readonly ExportColumn<{ id: number; text: string }>[] = [
  { header: 'id', value: (r) => r.id },
  { header: 'text', value: (r) => r.text },
];

test('CSV chunks: many rows, multi-byte text across chunk edges and a line longer than a chunk come out exactly', async (t) => {
  const texts = ['plain', 'ünïcödé €', '𝄞 clef', 'a,b', 'say "hi"', '=1+1'];
  const long = ['x'.repeat(70_000), '€'.repeat(30_000)];
  const textOf = (n: number) => (n % 1000 === 999 ? long[n % 2]! : texts[n % texts.length]!);
  const batches = Array.from({ length: 3 }, (_, b) => Array.from({ length: 2000 }, (_, i) => ({ id: b * 2000 + i, text: textOf(b * 2000 + i) })));
  const e = exportOf('csv', COLUMNS, batches);
  await e.started;
  const chunks: Buffer[] = [];
  for await (const c of e.body()) chunks.push(c as Buffer);
  const expected = ['id,text\r\n', ...batches.flat().map((r) => `${r.id},${csvField(r.text)}\r\n`)].join('');
  t.is(Buffer.concat(chunks).toString('utf8'), expected);
  t.true(chunks.length > 5, 'a batch goes out in several chunks');
  t.true(
    chunks.every((c) => c.length <= 64 * 1024 || c.length >= 70_000),
    'only an over-long line makes a chunk of its own size',
  );
});

test('CSV of an empty list is the header line', async (t) => {
  const e = exportOf('csv', COLUMNS, []);
  await e.started;
  const chunks: Buffer[] = [];
  for await (const c of e.body()) chunks.push(c as Buffer);
  t.is(Buffer.concat(chunks).toString('utf8'), 'id,text\r\n');
});

test('a CSV export whose client goes away stops reading batches', async (t) => {
  const batches = Array.from({ length: 50 }, (_, b) => Array.from({ length: 2000 }, (_, i) => ({ id: b * 2000 + i, text: 'row' })));
  const e = exportOf('csv', COLUMNS, batches);
  await e.started;
  const body = e.body();
  await new Promise<void>((resolve) => body.once('data', () => resolve()));
  body.destroy();
  const deadline = Date.now() + 5000;
  while (!e.stopped() && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
  t.true(e.stopped(), 'the batches were closed');
  t.true(e.asked() < 5, `read ${e.asked()} batches`);
});

/**
 * The versions sheetBacklog was checked against. The XLSX export's memory bound reads exceljs's
 * internals (a sheet's StreamBuf `stream.pipes[0]`: archiver's entry input, a readable-stream
 * PassThrough, and its `_writableState`/`_readableState`): after an upgrade of any of them, run
 * `npm run bench exports` (XLSX growth stays in MiB) and the test below, then move this pin.
 */
const CHECKED_WITH = { exceljs: '4.4.0', archiver: '5.3.2', 'readable-stream': '3.6.2' };

test('the XLSX memory bound is pinned to the exceljs, archiver and readable-stream it was checked against', (t) => {
  const fromExceljs = createRequire(require.resolve('exceljs'));
  const fromArchiver = createRequire(fromExceljs.resolve('archiver'));
  const installed = {
    exceljs: (fromExceljs('exceljs/package.json') as { version: string }).version,
    archiver: (fromExceljs('archiver/package.json') as { version: string }).version,
    'readable-stream': (fromArchiver('readable-stream/package.json') as { version: string }).version,
  };
  t.deepEqual(installed, CHECKED_WITH, "the export relies on these packages' internals: check sheetBacklog against the new versions, then update CHECKED_WITH");
});

test("sheetBacklog finds the XML queued in front of exceljs's zip (the XLSX export waits on it)", async (t) => {
  const out = new PassThrough();
  out.resume();
  const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useStyles: false, useSharedStrings: false });
  const ws = wb.addWorksheet('things');
  for (let i = 0; i < 5000; i++) ws.addRow([String(i), `text ${i} ${'x'.repeat(200)}`]).commit();
  const backlog = sheetBacklog(ws);
  t.not(backlog, null, 'exceljs or archiver changed how a sheet reaches the zip: update sheetBacklog');
  t.true(backlog!.bytes > 64 * 1024);
  await new Promise<void>((resolve) => backlog!.input.once('drain', () => resolve()));
  t.true(sheetBacklog(ws)!.bytes <= 64 * 1024, `${sheetBacklog(ws)!.bytes} bytes after drain`);
  ws.commit();
  await wb.commit();
});

test('an XLSX export reads every batch into a workbook of every row', async (t) => {
  const batches = Array.from({ length: 4 }, (_, b) => Array.from({ length: 2000 }, (_, i) => ({ id: b * 2000 + i, text: `t${i}` })));
  const e = exportOf('xlsx', COLUMNS, batches);
  await e.started;
  const chunks: Buffer[] = [];
  for await (const c of e.body()) chunks.push(c as Buffer);
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.load(Buffer.concat(chunks) as unknown as ArrayBuffer);
  const ws = wb.worksheets[0]!;
  t.is(ws.rowCount, 1 + 8000);
  t.is(ws.getRow(8001).getCell(1).value, '7999');
  t.true(e.stopped());
});

test('a CSV field never starts a formula: at its start, or after a ; TAB or line break where a ;-separating spreadsheet starts a cell', (t) => {
  t.is(csvField('=1+1'), "'=1+1");
  t.is(csvField('-0.5'), '-0.5');
  t.is(csvField('-1+1'), "'-1+1");
  t.is(csvField('ok;=1+1'), `"ok;'=1+1"`);
  t.is(csvField('ok; @SUM(1);x'), `"ok; '@SUM(1);x"`);
  t.is(csvField('a\r\n+1'), `"a\r\n'+1"`);
  t.is(csvField('a;"=1'), `"a;""'=1"`);
  t.is(csvField('a;b-c'), '"a;b-c"');
  t.is(csvField('a-b'), 'a-b');
});
