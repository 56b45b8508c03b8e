import ExcelJS from 'exceljs';
import type { ParsedUrlQuery } from 'node:querystring';
import { PassThrough, Readable } from 'node:stream';
import type { Logger } from '../shared/logger';
import type { AppContext } from './context';
import { parsePageRequest, type PageKey, type PageRequest } from './pagination';
import { queryEnum } from './query';

/**
 * Exports of a list (SPEC "What the service does": `?format=csv|xlsx`): the same rows and filters
 * as the JSON list, streamed from keyset batches so memory holds one batch, never the list.
 *
 * - Every cell is text: amounts keep their exact decimals (XLSX cells are typed strings; CSV fields
 *   are what the JSON says). null is an empty cell.
 * - CSV is RFC 4180: CRLF lines, a field with a comma, quote, CR or LF is quoted, quotes doubled.
 * - Formula injection: a CSV field starting with = + - @ TAB or CR is prefixed with `'` so a
 *   spreadsheet never evaluates it, except a plain decimal number (`-0.5`), which is no formula and
 *   must keep its value. XLSX cells are typed strings, never evaluated, so they stay as they are.
 * - An XLSX of more than XLSX_MAX_ROWS rows is answered as CSV: the rows are counted first (a count
 *   that stops at XLSX_MAX_ROWS + 1) with the same filters; rows committed between the count and
 *   the stream may still join the file.
 */
export type ExportFormat = 'csv' | 'xlsx';
export const EXPORT_FORMATS: readonly ExportFormat[] = ['csv', 'xlsx'];
export const XLSX_MAX_ROWS = 100_000;

export const CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

export type CellValue = string | number | boolean | null | undefined | object;

export interface ExportColumn<R> {
  header: string;
  value: (row: R) => CellValue;
}

export interface ExportRequest<R> {
  /** The list's name: the file name's start and the sheet name (`transactions`). */
  name: string;
  format: ExportFormat;
  columns: readonly ExportColumn<R>[];
  /** The rows in list order, a batch at a time. */
  batches: () => AsyncIterable<R[]>;
  /** How many rows the export has, counting no further than `cap`. */
  count: (cap: number) => Promise<number>;
  logger: Logger;
  now: Date;
}

/** `?format=`: undefined for the JSON list; anything but csv or xlsx is a validation_error on `format`. */
export const exportFormatOf = (q: ParsedUrlQuery): ExportFormat | undefined => queryEnum(q, 'format', EXPORT_FORMATS);

/** A list of an account's rows that answers as JSON pages or, with `?format=`, as a file. */
export interface ExportableList<F extends object, R> {
  name: string;
  columns: readonly ExportColumn<R>[];
  parseFilters: (q: ParsedUrlQuery) => F;
  /** The JSON answer: one page. */
  page: (accountId: string, filters: F, page: PageRequest) => Promise<unknown>;
  batches: (accountId: string, filters: F, after: PageKey | null) => AsyncIterable<R[]>;
  count: (accountId: string, filters: F, after: PageKey | null, cap: number) => Promise<number>;
}

/**
 * The list's answer for one account: the filters and page checked first (a bad one is a
 * validation_error before anything is read), then a JSON page, or the whole list from the cursor
 * on (when one is given) as a file: `limit` pages JSON only.
 */
export async function sendList<F extends object, R>(
  ctx: AppContext,
  accountId: string,
  list: ExportableList<F, R>,
  deps: { logger: Logger; now: Date },
): Promise<void> {
  const filters = list.parseFilters(ctx.query);
  const format = exportFormatOf(ctx.query);
  const page = parsePageRequest(ctx.query, { ...filters } as Record<string, unknown>);
  if (format === undefined) {
    ctx.body = await list.page(accountId, filters, page);
    return;
  }
  await sendExport(ctx, {
    name: list.name,
    format,
    columns: list.columns,
    batches: () => list.batches(accountId, filters, page.after),
    count: (cap) => list.count(accountId, filters, page.after, cap),
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
const PLAIN_NUMBER = /^-?\d+(\.\d+)?$/;
const NEEDS_QUOTES = /[",\r\n]/;

/** One CSV field: the formula guard, then RFC 4180 quoting. */
export function csvField(text: string): string {
  const safe = FORMULA_START.test(text) && !PLAIN_NUMBER.test(text) ? `'${text}` : text;
  return NEEDS_QUOTES.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

const csvLine = (cells: readonly string[]): string => cells.map(csvField).join(',') + '\r\n';

/** `transactions-20261122T213000Z.csv` */
export function exportFileName(name: string, now: Date, format: ExportFormat): string {
  const stamp = now.toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/[-:]/g, '');
  return `${name}-${stamp}.${format}`;
}

/** Answers ctx with the export as a stream; an XLSX over the row limit becomes CSV. */
export async function sendExport<R>(ctx: AppContext, req: ExportRequest<R>): Promise<void> {
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

/** CSV, one chunk per batch. A failure mid-stream aborts the response (never a silently short file). */
function csvStream<R>(req: ExportRequest<R>, onError: (e: unknown) => void): Readable {
  async function* chunks(): AsyncGenerator<Buffer> {
    try {
      yield Buffer.from(csvLine(req.columns.map((c) => c.header)), 'utf8');
      for await (const batch of req.batches()) {
        let text = '';
        for (const row of batch) text += csvLine(req.columns.map((c) => cellText(c.value(row))));
        yield Buffer.from(text, 'utf8');
      }
    } catch (err) {
      onError(err);
      throw err;
    }
  }
  return Readable.from(chunks(), { objectMode: false });
}

/**
 * XLSX through exceljs's streaming writer (no shared strings: nothing grows with the row count).
 * Between batches it waits while the response is backed up, and stops if the client went away.
 */
function xlsxStream<R>(req: ExportRequest<R>, onError: (e: unknown) => void): Readable {
  const out = new PassThrough();
  // No styles (a text number format per cell doubled the time) and no shared strings (a table that
  // grows with the rows): plain typed string cells.
  const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useStyles: false, useSharedStrings: false });
  const ws = wb.addWorksheet(req.name);
  const backedUp = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        out.off('drain', done);
        out.off('close', done);
        resolve();
      };
      out.on('drain', done);
      out.on('close', done);
    });
  void (async () => {
    try {
      ws.addRow(req.columns.map((c) => c.header)).commit();
      for await (const batch of req.batches()) {
        for (const row of batch) ws.addRow(req.columns.map((c) => cellText(c.value(row)))).commit();
        if (out.destroyed) return;
        if (out.writableNeedDrain) await backedUp();
      }
      ws.commit();
      await wb.commit();
    } catch (err) {
      onError(err);
      out.destroy(err instanceof Error ? err : new Error(String(err)));
    }
  })();
  return out;
}
