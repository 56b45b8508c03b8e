import { redact, type Logger, type LogLevel } from './logger';

/** One line of the daemon's log as the dashboard's Log screen shows it (fields already redacted). */
export interface LogLine {
  time: string;
  level: LogLevel;
  msg: string;
  fields: Record<string, unknown>;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/**
 * The newest lines the daemon logged, kept in memory for `coinkeep dashboard` (the admin socket
 * serves them): a fixed ring, so a busy daemon's memory does not grow. It records what reaches
 * its level whatever the wrapped logger prints.
 */
export class LogTail {
  private readonly lines: LogLine[] = [];
  private next = 0;

  constructor(
    private readonly capacity = 500,
    private readonly min: LogLevel = 'info',
  ) {}

  /** The logger to hand the daemon: it writes through `inner` and records here. */
  wrap(inner: Logger, base: Record<string, unknown> = {}): Logger {
    const at = (level: LogLevel) => (msg: string, fields?: Record<string, unknown>) => {
      inner[level](msg, fields);
      this.record(level, msg, { ...base, ...fields });
    };
    return {
      debug: at('debug'),
      info: at('info'),
      warn: at('warn'),
      error: at('error'),
      child: (fields) => this.wrap(inner.child(fields), { ...base, ...fields }),
    };
  }

  private record(level: LogLevel, msg: string, fields: Record<string, unknown>): void {
    if (ORDER[level] < ORDER[this.min]) return;
    const line = { time: new Date().toISOString(), level, msg, fields: redact(fields) };
    if (this.lines.length < this.capacity) this.lines.push(line);
    else this.lines[this.next] = line;
    this.next = (this.next + 1) % this.capacity;
  }

  /** The newest `limit` lines at `level` or above, oldest first. */
  tail(level: LogLevel, limit: number): LogLine[] {
    const ordered = this.lines.length < this.capacity ? this.lines : [...this.lines.slice(this.next), ...this.lines.slice(0, this.next)];
    return ordered.filter((l) => ORDER[l.level] >= ORDER[level]).slice(-limit);
  }
}

export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];
