import { promises as dns, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, isIPv4, isIPv6 } from 'node:net';
import { ApiError, unavailable, validationError } from './errors';

/**
 * The outbound target guard (PRODUCT §10, "outbound URLs guarded against SSRF"): webhook endpoints
 * and invoice webhook_urls must be `https://` on a host that resolves only to public addresses.
 * It is checked twice: when the URL is given (`checkUrl`, a validation_error on the field) and at
 * every connection (`lookup` and `assertConnectable`), so a name that re-resolves to a private
 * address later (DNS rebinding) is refused at the moment of connecting. `allowPrivate`
 * (`webhooks.allow_private_targets`, development and tests only) lifts the address rule and
 * also allows http; a name must still resolve.
 *
 * Names are resolved by DNS queries of the daemon's own (`webhooks.dns`), never by `dns.lookup`:
 * that runs on libuv's four-thread pool without a timeout, so a few names on a nameserver that
 * never answers would stall every file, zlib and lookup task of the daemon behind them.
 */

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to every address it has (A and AAAA). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** `webhooks.dns` of the config: where and how long host names of webhook targets are looked up. */
export interface DnsOptions {
  /** Nameservers (`1.1.1.1`, `127.0.0.1:5353`, `[::1]:53`); none: those of /etc/resolv.conf. */
  servers: string[];
  /** A name with no answer within this long does not resolve. */
  timeout_ms: number;
}

export const DEFAULT_DNS: DnsOptions = { servers: [], timeout_ms: 3000 };

/**
 * Queries A and AAAA at once with c-ares, which sends them on its own sockets (no thread pool).
 * Each server gets two tries (the second waits twice as long: about `timeout_ms` in all for one
 * server); the deadline holds the bound with several servers. A name answers with the addresses
 * of whichever query answered; it does not resolve when neither did.
 */
export function dnsResolver(opts: DnsOptions): Resolver {
  const resolver = new dns.Resolver({ timeout: Math.max(1, Math.floor(opts.timeout_ms / 3)), tries: 2 });
  if (opts.servers.length > 0) resolver.setServers(opts.servers);
  return async (hostname) => {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error('the host name does not resolve'), { code: 'ETIMEOUT' })), opts.timeout_ms);
    });
    try {
      const [v4, v6] = await Promise.race([Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]), deadline]);
      const found = [
        ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
        ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
      ];
      if (found.length === 0 && v4.status === 'rejected') throw v4.reason;
      return found;
    } finally {
      clearTimeout(timer);
    }
  };
}

/** `localhost` and names under it are the loopback addresses without asking anyone (RFC 6761 §6.3). */
const isLocalhost = (hostname: string): boolean => hostname === 'localhost' || hostname.endsWith('.localhost');
const LOOPBACK: ResolvedAddress[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
];

/** Distinct host names one account may have resolving at once for the URLs it gives. */
export const RESOLUTIONS_PER_ACCOUNT = 4;

/** The lookup signature Node's net/http/https accept as the `lookup` option. */
export type ConnectLookup = (
  hostname: string,
  options: LookupOptions,
  callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void;

export const MAX_URL_LENGTH = 2048;

/** A connection the guard refused; `message` names the class of address, never the address. */
export class TargetRefusedError extends Error {
  readonly code = 'ETARGETREFUSED';
  constructor(message: string) {
    super(message);
    this.name = 'TargetRefusedError';
  }
}

// ---- address classification -------------------------------------------------------------------

interface Range {
  base: bigint;
  bits: number;
  width: 32 | 128;
  what: string;
}

const v4 = (cidr: string, what: string): Range => {
  const [addr, bits] = cidr.split('/');
  return { base: BigInt(parseIPv4(addr!)!), bits: Number(bits), width: 32, what };
};
const v6 = (cidr: string, what: string): Range => {
  const [addr, bits] = cidr.split('/');
  return { base: parseIPv6(addr!)!, bits: Number(bits), width: 128, what };
};
const contains = (r: Range, value: bigint): boolean => value >> BigInt(r.width - r.bits) === r.base >> BigInt(r.width - r.bits);

/** Metadata services answer on these; named first so the refusal says so. */
const METADATA_V4 = [
  v4('169.254.169.254/32', 'a cloud metadata address'),
  v4('169.254.170.2/32', 'a cloud metadata address'),
  v4('100.100.100.200/32', 'a cloud metadata address'),
  v4('192.0.0.192/32', 'a cloud metadata address'),
  v4('168.63.129.16/32', 'a cloud metadata address'),
];

/** IPv4 ranges that are not public unicast (IANA special-purpose registry). */
const SPECIAL_V4 = [
  v4('0.0.0.0/8', 'an unspecified address'),
  v4('10.0.0.0/8', 'a private address'),
  v4('100.64.0.0/10', 'a carrier-grade NAT address'),
  v4('127.0.0.0/8', 'a loopback address'),
  v4('169.254.0.0/16', 'a link-local address'),
  v4('172.16.0.0/12', 'a private address'),
  v4('192.0.0.0/24', 'an IETF protocol address'),
  v4('192.0.2.0/24', 'a documentation address'),
  v4('192.88.99.0/24', 'a 6to4 relay address'),
  v4('192.168.0.0/16', 'a private address'),
  v4('198.18.0.0/15', 'a benchmarking address'),
  v4('198.51.100.0/24', 'a documentation address'),
  v4('203.0.113.0/24', 'a documentation address'),
  v4('224.0.0.0/4', 'a multicast address'),
  v4('240.0.0.0/4', 'a reserved address'),
];

const METADATA_V6 = [v6('fd00:ec2::254/128', 'a cloud metadata address')];

/** IPv6 forms that carry an IPv4 address; they are judged by the address they carry. */
const EMBEDDING_V6: Array<{ range: Range; shift: bigint; form: string }> = [
  { range: v6('::ffff:0:0/96', ''), shift: 0n, form: 'IPv4-mapped' },
  { range: v6('64:ff9b::/96', ''), shift: 0n, form: 'NAT64' },
  { range: v6('2002::/16', ''), shift: 80n, form: '6to4' },
];

const SPECIAL_V6 = [
  v6('::/128', 'an unspecified address'),
  v6('::1/128', 'a loopback address'),
  v6('64:ff9b:1::/48', 'a local NAT64 address'),
  v6('2001::/23', 'an IETF protocol address'),
  v6('2001:db8::/32', 'a documentation address'),
  v6('3fff::/20', 'a documentation address'),
  v6('fc00::/7', 'a unique-local address'),
  v6('fe80::/10', 'a link-local address'),
  v6('fec0::/10', 'a site-local address'),
  v6('ff00::/8', 'a multicast address'),
];
const IPV4_COMPATIBLE = v6('::/96', '');
const GLOBAL_UNICAST_V6 = v6('2000::/3', '');

/**
 * Why an IP address is not a public target ("a loopback address", "a private address (IPv4-mapped)"),
 * or null when it is public. Anything that does not parse as an address is refused.
 */
export function nonPublicReason(address: string): string | null {
  const ip = address.replace(/^\[|\]$/g, '');
  if (isIPv4(ip)) return v4Reason(BigInt(parseIPv4(ip)!));
  if (!isIPv6(ip) || ip.includes('%')) return 'not an IP address';
  const value = parseIPv6(ip)!;
  for (const r of [...METADATA_V6, ...SPECIAL_V6]) if (contains(r, value)) return r.what;
  for (const e of EMBEDDING_V6) {
    if (contains(e.range, value)) return embedded(value >> e.shift, e.form);
  }
  if (contains(IPV4_COMPATIBLE, value)) return embedded(value, 'IPv4-compatible');
  if (!contains(GLOBAL_UNICAST_V6, value)) return 'a reserved address';
  return null;
}

function embedded(value: bigint, form: string): string | null {
  const reason = v4Reason(value & 0xffffffffn);
  return reason === null ? null : `${reason} (${form})`;
}

function v4Reason(value: bigint): string | null {
  for (const r of [...METADATA_V4, ...SPECIAL_V4]) if (contains(r, value)) return r.what;
  return null;
}

/** Dotted-quad IPv4 to its 32-bit value (only the canonical form URL parsing produces). */
function parseIPv4(s: string): number | null {
  const parts = s.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return null;
  return parts.reduce((acc, p) => acc * 256 + Number(p), 0);
}

/** IPv6 text (with `::` and a trailing dotted quad allowed) to its 128-bit value. */
function parseIPv6(s: string): bigint | null {
  let text = s;
  const quad = /(\d{1,3}(?:\.\d{1,3}){3})$/.exec(text);
  if (quad) {
    const n = parseIPv4(quad[1]!);
    if (n === null) return null;
    text = `${text.slice(0, quad.index)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groups = (h: string) => (h === '' ? [] : h.split(':'));
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  let value = 0n;
  for (const g of all) {
    if (!/^[0-9a-f]{1,4}$/i.test(g)) return null;
    value = (value << 16n) | BigInt(parseInt(g, 16));
  }
  return value;
}

// ---- the guard ---------------------------------------------------------------------------------

export interface TargetGuardOptions {
  /** `webhooks.allow_private_targets`: development and tests only. */
  allowPrivate: boolean;
  /** Tests: a stand-in for DNS. Default: `dnsResolver(DEFAULT_DNS)`. */
  resolve?: Resolver;
}

export class TargetGuard {
  readonly allowPrivate: boolean;
  private readonly resolver: Resolver;
  /** Per account, the names being resolved for the URLs it gave; a second check of a name joins the first. */
  private readonly resolving = new Map<string, Map<string, Promise<ResolvedAddress[]>>>();

  constructor(opts: TargetGuardOptions) {
    this.allowPrivate = opts.allowPrivate;
    this.resolver = opts.resolve ?? dnsResolver(DEFAULT_DNS);
  }

  /**
   * The check when an account gives a URL (endpoint create/update, an invoice's webhook_url):
   * returns the URL in its normalised form, or throws validation_error on `field`; 503
   * unavailable when the account already has RESOLUTIONS_PER_ACCOUNT names resolving.
   */
  async checkUrl(value: unknown, field: string, accountId: string): Promise<string> {
    if (typeof value !== 'string' || value.length === 0 || value.length > MAX_URL_LENGTH) {
      throw validationError(field, `${field} must be a URL of at most ${MAX_URL_LENGTH} characters`);
    }
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw validationError(field, `${field} is not a valid URL`);
    }
    const schemes = this.allowPrivate ? ['https:', 'http:'] : ['https:'];
    if (!schemes.includes(url.protocol)) throw validationError(field, `${field} must be an https:// URL`);
    if (url.username !== '' || url.password !== '') throw validationError(field, `${field} must not carry a user name or password`);
    if (url.hostname === '') throw validationError(field, `${field} must name a host`);
    const reason = await this.hostRefusal(url.hostname, field, accountId);
    if (reason !== null) throw validationError(field, `${field} must be on a public host: ${reason}`);
    return url.href;
  }

  /**
   * Why a host (name or literal) is not a target, or null: a name must resolve, and without
   * allowPrivate every address of it must be public.
   */
  private async hostRefusal(hostname: string, field: string, accountId: string): Promise<string | null> {
    const literal = hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal)) {
      const reason = this.allowPrivate ? null : nonPublicReason(literal);
      return reason === null ? null : `the host is ${reason}`;
    }
    let addresses: ResolvedAddress[];
    try {
      addresses = await this.resolveFor(accountId, hostname, field);
    } catch (err) {
      if (err instanceof ApiError) throw err;
      return 'the host name does not resolve';
    }
    if (addresses.length === 0) return 'the host name does not resolve';
    if (this.allowPrivate) return null;
    for (const a of addresses) {
      const reason = nonPublicReason(a.address);
      if (reason !== null) return `the host resolves to ${reason}`;
    }
    return null;
  }

  /** A name resolved for an account, within its bound on names resolving at once. */
  private resolveFor(accountId: string, hostname: string, field: string): Promise<ResolvedAddress[]> {
    let names = this.resolving.get(accountId);
    const joined = names?.get(hostname);
    if (joined) return joined;
    if (!names) this.resolving.set(accountId, (names = new Map()));
    if (names.size >= RESOLUTIONS_PER_ACCOUNT) {
      throw unavailable(`${field}'s host name cannot be checked now: this account has ${RESOLUTIONS_PER_ACCOUNT} host names resolving; retry later`, { field });
    }
    const resolution = this.resolve(hostname).finally(() => {
      names.delete(hostname);
      if (names.size === 0) this.resolving.delete(accountId);
    });
    names.set(hostname, resolution);
    return resolution;
  }

  private resolve(hostname: string): Promise<ResolvedAddress[]> {
    return isLocalhost(hostname.toLowerCase()) ? Promise.resolve(LOOPBACK) : this.resolver(hostname);
  }

  /**
   * Connect time, for a host given as an IP literal (Node connects to those without calling
   * `lookup`): throws TargetRefusedError for a non-public one.
   */
  assertConnectable(hostname: string): void {
    if (this.allowPrivate) return;
    const literal = hostname.replace(/^\[|\]$/g, '');
    if (!isIP(literal)) return;
    const reason = nonPublicReason(literal);
    if (reason !== null) throw new TargetRefusedError(`target refused: the host is ${reason}`);
  }

  /**
   * Connect time, for a host name: the `lookup` of the HTTP client. It resolves the name itself
   * and hands the connection only public addresses, so the address checked is the address
   * connected to. A name with any non-public address is refused whole. An account's attempts
   * (and so its lookups) in flight are bounded by the webhook dispatcher.
   */
  readonly lookup: ConnectLookup = (hostname, options, callback) => {
    this.resolve(hostname).then(
      (found) => {
        if (!this.allowPrivate) {
          for (const a of found) {
            const reason = nonPublicReason(a.address);
            if (reason !== null) return callback(new TargetRefusedError(`target refused: the host resolves to ${reason}`), '');
          }
        }
        const family = typeof options.family === 'number' ? options.family : 0;
        const usable = found.filter((a) => family === 0 || a.family === family);
        if (usable.length === 0) return callback(notResolved(), '');
        if (options.all)
          return callback(
            null,
            usable.map((a) => ({ address: a.address, family: a.family })),
          );
        return callback(null, usable[0]!.address, usable[0]!.family);
      },
      // Whatever the resolver said (no such name, no answer in time, a server failure): one code.
      () => callback(notResolved(), ''),
    );
  };
}

function notResolved(): NodeJS.ErrnoException {
  return Object.assign(new Error('the host name does not resolve'), { code: 'ENOTFOUND' });
}
