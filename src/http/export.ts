import type { ParsedUrlQuery } from 'node:querystring';
import { PassThrough, Readable, Writable } from 'node:stream';
import type { Logger } from '../shared/logger';
import { authOf } from '../auth/auth.middleware';
import type { Clock } from '../shared/clock';
import type { AppContext, AppMiddleware } from './context';
import { parsePageRequest, type PageKey, type PageRequest } from '../shared/pagination';
import { queryEnum } from '../shared/query';

/**
 * Exports of a list (SPEC "What the service does": `?format=csv|xlsx`): the same rows and filters
 * as the JSON list, streamed from keyset batches so memory holds one batch, never the list.
 *
 * - Every cell is text: amounts keep their exact decimals (XLSX cells are typed strings; CSV fields
 *   are what the JSON says). null is an empty cell.
 * - CSV is RFC 4180: CRLF lines, a field with a comma, quote, CR or LF is quoted, quotes doubled.
 * - Formula injection: a CSV field starting with = + - @ TAB or CR is prefixed with `'` so a
 *   spreadsheet never evaluates it, except a plain decimal number (`-0.5`), which is no formula and
 *   must keep its value. A spreadsheet whose list separator is `;` (German Excel) splits lines at
 *   every `;`, quoted or not (and so starts a row at a line break inside a quoted field), so a
 *   formula start after a `;`, TAB, CR or LF inside a field (spaces or quotes between) gets the same `'`. XLSX cells are typed strings, never evaluated, so they stay as they are.
 * - An XLSX of more than XLSX_MAX_ROWS rows is answered as CSV: the rows are counted first (a count
 *   that stops at XLSX_MAX_ROWS + 1) with the same filters; rows committed between the count and
 *   the stream may still join the file.
 */
export type ExportFormat = 'csv' | 'xlsx';
export const EXPORT_FORMATS: readonly ExportFormat[] = ['csv', 'xlsx'];
export const XLSX_MAX_ROWS = 100_000;

/**
 * Rows read per query. A CSV batch is encoded in a few milliseconds; exceljs allocates some 20 KiB
 * a row, so 2000 rows would see several young-generation collections and be promoted whole (with
 * the sheet's XML in front of the zip), while 250 are garbage before the next one.
 */
export const EXPORT_BATCH_ROWS: Record<ExportFormat, number> = { csv: 2000, xlsx: 250 };

export const CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

export type CellValue = string | number | boolean | null | undefined | object;

export interface ExportColumn<R> {
  header: string;
  value: (row: R) => CellValue;
}

export interface ExportRequest<R, S = R> {
  /** The list's name: the file name's start and the sheet name (`transactions`). */
  name: string;
  format: ExportFormat;
  columns: readonly ExportColumn<R>[];
  /** The rows as read, in list order, `size` at a time. */
  batches: (size: number) => AsyncIterable<S[]>;
  /**
   * The row the columns read, made from a row as read just before it is written, so it is garbage
   * at once. A batch presented whole (objects of one object literal, all alive together) got that
   * literal pretenured by V8 now and then: a young-generation collection found all the objects
   * made since the last one alive (1990 of 1990, traced), so every later row was allocated in the
   * old generation (docs/benchmarks.md, exports).
   */
  present: (row: S) => R;
  /** How many rows the export has, counting no further than `cap`. */
  count: (cap: number) => Promise<number>;
  logger: Logger;
  now: Date;
}

/** `?format=`: undefined for the JSON list; anything but csv or xlsx is a validation_error on `format`. */
export const exportFormatOf = (q: ParsedUrlQuery): ExportFormat | undefined => queryEnum(q, 'format', EXPORT_FORMATS);

/** What a service offers for one of its lists of an account's rows. */
export interface ListSource<F extends object, R, S = R> {
  /** The JSON answer: one page. */
  page(accountId: string, filters: F, page: PageRequest): Promise<unknown>;
  /** The rows as read (see ExportRequest), and how one becomes the row the columns read. */
  batches(accountId: string, filters: F, after: PageKey | null, size: number): AsyncIterable<S[]>;
  present(row: S): R;
  count(accountId: string, filters: F, after: PageKey | null, cap: number): Promise<number>;
}

/** A list of an account's rows that answers as JSON pages or, with `?format=`, as a file. */
export interface ExportableList<F extends object, R, S = R> {
  name: string;
  columns: readonly ExportColumn<R>[];
  parseFilters: (q: ParsedUrlQuery) => F;
  source: ListSource<F, R, S>;
}

/** One column a field, headed by its name, in the order given: an export reads as the JSON does. */
export function fieldColumns<R>(fields: readonly (keyof R & string)[]): ExportColumn<R>[] {
  return fields.map((k) => ({ header: k, value: (row: R) => row[k] as CellValue }));
}

/** The GET handler of a list: the authenticated caller's account's rows (see sendList). */
export function listHandler<F extends object, R, S>(list: ExportableList<F, R, S>, deps: { logger: Logger; clock: Clock }): AppMiddleware {
  return async (ctx) => {
    await sendList(ctx, authOf(ctx).accountId, list, { logger: deps.logger, now: deps.clock.now() });
  };
}

/**
 * The list's answer for one account: the filters and page checked first (a bad one is a
 * validation_error before anything is read), then a JSON page, or the whole list from the cursor
 * on (when one is given) as a file: `limit` pages JSON only.
 */
export async function sendList<F extends object, R, S>(
  ctx: AppContext,
  accountId: string,
  list: ExportableList<F, R, S>,
  deps: { logger: Logger; now: Date },
): Promise<void> {
  const filters = list.parseFilters(ctx.query);
  const format = exportFormatOf(ctx.query);
  const page = parsePageRequest(ctx.query, { ...filters } as Record<string, unknown>);
  if (format === undefined) {
    ctx.body = await list.source.page(accountId, filters, page);
    return;
  }
  await sendExport(ctx, {
    name: list.name,
    format,
    columns: list.columns,
    batches: (size) => list.source.batches(accountId, filters, page.after, size),
    present: (row) => list.source.present(row),
    count: (cap) => list.source.count(accountId, filters, page.after, cap),
    logger: deps.logger,
    now: deps.now,
  });
}

/** The text of a cell: null → empty, objects (metadata) → their JSON. */
export function cellText(v: CellValue): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

const FORMULA_START = /^[=+\-@\t\r]/;
/** A cell a `;`-separating spreadsheet would start inside the field: after `;`, TAB, CR or LF, and any spaces or quotes. */
const INNER_FORMULA_START = /([;\t\r\n][ "]*)(?=[=+\-@\t\r])/g;
const PLAIN_NUMBER = /^-?\d+(\.\d+)?$/;
const NEEDS_QUOTES = /[",;\t\r\n]/;

/** One CSV field: the formula guard (at its start and after every inner separator), then RFC 4180 quoting. */
export function csvField(text: string): string {
  const inner = text.replace(INNER_FORMULA_START, "$1'");
  const safe = FORMULA_START.test(inner) && !PLAIN_NUMBER.test(inner) ? `'${inner}` : inner;
  return NEEDS_QUOTES.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

const csvLine = (cells: readonly string[]): string => cells.map(csvField).join(',') + '\r\n';

/**
 * One event-loop turn, taken between two batches: while the socket takes every chunk at once (a
 * fast client), an export would otherwise run in microtasks alone (SQLite reads are synchronous)
 * and hold up every other request, timer and I/O callback until its last row.
 */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The size of a CSV chunk: one socket read's worth, small enough for the young generation. */
const CSV_CHUNK_BYTES = 64 * 1024;

/**
 * CSV lines encoded into chunks of CSV_CHUNK_BYTES as they are made, so a line's string is garbage
 * at once and a batch is never one long string (a cons string keeps every line alive until it is
 * flattened into an old-space copy).
 */
class CsvChunks {
  private buf: Buffer | null = null;
  private used = 0;
  private ready: Buffer[] = [];

  line(cells: readonly string[]): void {
    const line = csvLine(cells);
    // UTF-8 takes at most 3 bytes per UTF-16 unit: a line that may not fit starts a new chunk.
    if (this.buf !== null && line.length * 3 > this.buf.length - this.used) this.close();
    if (line.length * 3 > CSV_CHUNK_BYTES) {
      this.ready.push(Buffer.from(line, 'utf8'));
      return;
    }
    this.buf ??= Buffer.allocUnsafe(CSV_CHUNK_BYTES);
    this.used += this.buf.write(line, this.used, 'utf8');
  }

  /** Every chunk so far, the last one partly filled. */
  take(): Buffer[] {
    this.close();
    const out = this.ready;
    this.ready = [];
    return out;
  }

  private close(): void {
    if (this.buf !== null && this.used > 0) this.ready.push(this.buf.subarray(0, this.used));
    this.buf = null;
    this.used = 0;
  }
}

/** `transactions-20261122T213000Z.csv` */
export function exportFileName(name: string, now: Date, format: ExportFormat): string {
  const stamp = now
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '');
  return `${name}-${stamp}.${format}`;
}

/** Answers ctx with the export as a stream; an XLSX over the row limit becomes CSV. */
export async function sendExport<R, S>(ctx: AppContext, req: ExportRequest<R, S>): Promise<void> {
  let format = req.format;
  if (format === 'xlsx' && (await req.count(XLSX_MAX_ROWS + 1)) > XLSX_MAX_ROWS) format = 'csv';
  const file = exportFileName(req.name, req.now, format);
  ctx.status = 200;
  ctx.set('Content-Type', CONTENT_TYPES[format]);
  ctx.set('Content-Disposition', `attachment; filename="${file}"`);
  ctx.set('Cache-Control', 'no-store');
  ctx.set('X-Content-Type-Options', 'nosniff');
  const onError = (err: unknown) =>
    req.logger.error('export failed while streaming', {
      request_id: ctx.state.requestId,
      export: file,
      error: err instanceof Error ? err.message : String(err),
    });
  ctx.body = format === 'csv' ? csvStream(req, onError) : xlsxStream(req, onError);
}

/**
 * CSV, a batch at a time: a batch is encoded whole as soon as it is read, then its chunks go out
 * one by one as the response drains, and the next batch is read only after its last chunk. So a
 * batch's rows live only while they are encoded (they die in the young generation instead of being
 * promoted while the client is slow), and memory holds one batch's bytes. A failure mid-stream
 * aborts the response (never a silently short file).
 */
function csvStream<R, S>(req: ExportRequest<R, S>, onError: (e: unknown) => void): Readable {
  const batches = req.batches(EXPORT_BATCH_ROWS.csv)[Symbol.asyncIterator]();
  const csv = new CsvChunks();
  /** The next batch as chunks (null after the last); the rows are garbage once it returns. */
  const nextChunks = async (): Promise<Buffer[] | null> => {
    await nextTurn();
    const next = await batches.next();
    if (next.done === true) return null;
    for (const raw of next.value) {
      const row = req.present(raw);
      csv.line(req.columns.map((c) => cellText(c.value(row))));
    }
    return csv.take();
  };
  async function* chunks(): AsyncGenerator<Buffer> {
    try {
      csv.line(req.columns.map((c) => c.header));
      for (let ready = await nextChunks(); ready !== null; ready = await nextChunks()) {
        for (let chunk = ready.shift(); chunk !== undefined; chunk = ready.shift()) yield chunk;
      }
      for (const chunk of csv.take()) yield chunk;
    } catch (err) {
      onError(err);
      throw err;
    } finally {
      // The client went away (the stream was destroyed): the batches stop too.
      await batches.return?.();
    }
  }
  return Readable.from(chunks(), { objectMode: false });
}

/** The sheet's XML let wait in front of the zip before the next batch is added (a batch makes some 330 KiB). */
const XLSX_BACKLOG_BYTES = 256 * 1024;

interface StreamState {
  length?: unknown;
}

/**
 * The sheet's XML waiting in front of exceljs's zip: exceljs writes it, in 64 KiB pieces, into the
 * zip entry's input stream without ever waiting (its StreamBuf ignores back-pressure), and deflate
 * takes a piece per event-loop turn; without a bound that queue held most of the file
 * (docs/benchmarks.md, exports). The input is found through exceljs's and archiver's inner streams
 * (`stream.pipes[0]`, a readable-stream PassThrough), duck-typed; null if the shape is not the
 * expected one. test/unit/http/export.test.ts checks the shape and pins the exceljs, archiver and
 * readable-stream versions it was checked against, so an upgrade fails there first.
 */
export function sheetBacklog(ws: unknown): { bytes: number; input: Writable } | null {
  const pipes = (ws as { stream?: { pipes?: unknown } }).stream?.pipes;
  const input = (Array.isArray(pipes) ? pipes[0] : undefined) as { _writableState?: StreamState; _readableState?: StreamState; once?: unknown } | undefined;
  const queued = input?._writableState?.length;
  const ready = input?._readableState?.length;
  if (typeof queued !== 'number' || typeof ready !== 'number' || typeof input?.once !== 'function') return null;
  return { bytes: queued + ready, input: input as unknown as Writable };
}

/**
 * XLSX through exceljs's streaming writer (no shared strings: nothing grows with the row count).
 * After each batch it gives the event loop a turn, then waits while the XML is backed up in front
 * of the zip (see sheetBacklog) or the response is, and stops if the client went away.
 * As for CSV, a batch's rows are not held across those waits.
 */
function xlsxStream<R, S>(req: ExportRequest<R, S>, onError: (e: unknown) => void): Readable {
  const out = new PassThrough();
  // No styles (a text number format per cell doubled the time) and no shared strings (a table that
  // grows with the rows): plain typed string cells.
  // Loaded on the first XLSX export: exceljs takes some 0.4 s of CPU to load, paid by every start of the daemon otherwise.
  const ExcelJS = require('exceljs') as typeof import('exceljs');
  const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useStyles: false, useSharedStrings: false });
  const ws = wb.addWorksheet(req.name);
  const batches = req.batches(EXPORT_BATCH_ROWS.xlsx)[Symbol.asyncIterator]();
  /** Adds the next batch's rows; false after the last. */
  const addBatch = async (): Promise<boolean> => {
    const next = await batches.next();
    if (next.done === true) return false;
    for (const raw of next.value) {
      const row = req.present(raw);
      ws.addRow(req.columns.map((c) => cellText(c.value(row)))).commit();
    }
    return true;
  };
  /** Resolves when `stream` drains or the response is gone. */
  const drained = (stream: Writable) =>
    new Promise<void>((resolve) => {
      const done = () => {
        stream.off('drain', done);
        out.off('close', done);
        resolve();
      };
      stream.on('drain', done);
      out.on('close', done);
    });
  const backedUp = async (): Promise<void> => {
    await nextTurn();
    for (;;) {
      if (out.destroyed) return;
      const backlog = sheetBacklog(ws);
      if (backlog !== null && backlog.bytes > XLSX_BACKLOG_BYTES) await drained(backlog.input);
      else if (out.writableNeedDrain) await drained(out);
      else return;
    }
  };
  void (async () => {
    try {
      ws.addRow(req.columns.map((c) => c.header)).commit();
      while (await addBatch()) {
        await backedUp();
        if (out.destroyed) return;
      }
      ws.commit();
      await wb.commit();
    } catch (err) {
      onError(err);
      out.destroy(err instanceof Error ? err : new Error(String(err)));
    } finally {
      await batches.return?.();
    }
  })();
  return out;
}
