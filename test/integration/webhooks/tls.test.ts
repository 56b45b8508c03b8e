import test from 'ava';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { TargetGuard } from '../../../src/shared/target-guard';
import { signedPost } from '../../../src/webhooks/delivery-signer';
import { HttpTransport } from '../../../src/webhooks/http-transport';

// An HTTPS receiver on 127.0.0.1 with a certificate made for this run (openssl, which install.sh
// provides): a delivery goes out over TLS with the certificate checked against the trusted roots.
const dir = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-tls-'));
const keyFile = path.join(dir, 'key.pem');
const certFile = path.join(dir, 'cert.pem');
execFileSync(
  'openssl',
  [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    keyFile,
    '-out',
    certFile,
    '-days',
    '1',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
  ],
  { stdio: 'ignore' },
);

const received: Array<{ path: string; signature: string | undefined }> = [];
const server = https.createServer({ key: readFileSync(keyFile), cert: readFileSync(certFile) }, (req, res) => {
  req.resume();
  req.on('end', () => {
    received.push({ path: req.url ?? '', signature: req.headers['x-signature'] as string | undefined });
    res.end('ok');
  });
});
let base = '';

test.before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

test.after.always(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

const event = { id: '00000000-0000-4000-8000-000000000001', type: 'ping', body: '{"id":"00000000-0000-4000-8000-000000000001"}' };

test.serial('a receiver whose certificate is not trusted gets nothing: the attempt fails as a TLS error', async (t) => {
  const sender = new HttpTransport(new TargetGuard({ allowPrivate: true }));
  try {
    const r = await sender.post(signedPost(`${base}/untrusted`, event, 'whsec_test', new Date()));
    t.like(r, { ok: false, responseStatus: null });
    t.regex(r.error!, /^TLS error \(/, r.error!);
    t.false(received.some((x) => x.path === '/untrusted'));
  } finally {
    sender.close();
  }
});

test.serial('with its certificate trusted, the signed delivery goes out over TLS and succeeds', async (t) => {
  // Trust is the process's (NODE_EXTRA_CA_CERTS is read at start): a child process sends it.
  const script = `
    const { HttpTransport } = require(${JSON.stringify(path.join(__dirname, '../../../src/webhooks/http-transport.js'))});
    const { signedPost } = require(${JSON.stringify(path.join(__dirname, '../../../src/webhooks/delivery-signer.js'))});
    const { TargetGuard } = require(${JSON.stringify(path.join(__dirname, '../../../src/shared/target-guard.js'))});
    const sender = new HttpTransport(new TargetGuard({ allowPrivate: true }));
    sender.post(signedPost(${JSON.stringify(`${base}/trusted`)}, ${JSON.stringify(event)}, 'whsec_test', new Date())).then((r) => {
      process.stdout.write(JSON.stringify(r));
      sender.close();
    });`;
  const out = await new Promise<string>((resolve, reject) =>
    execFile(process.execPath, ['-e', script], { env: { ...process.env, NODE_EXTRA_CA_CERTS: certFile } }, (err, stdout) =>
      err ? reject(err) : resolve(stdout),
    ),
  );
  t.like(JSON.parse(out), { ok: true, responseStatus: 200, error: null });
  const got = received.filter((x) => x.path === '/trusted');
  t.is(got.length, 1);
  t.regex(got[0]!.signature ?? '', /^sha256=[0-9a-f]{64}$/);
});
