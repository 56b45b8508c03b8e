import type { Command } from 'commander';
import { createInterface } from 'node:readline/promises';
import { defaultConfigPath, loadConfig } from '../config/load';
import type { Config } from '../config/schema';
import { ConfigError } from '../config/schema';
import { UserError } from '../shared/errors';

export interface GlobalOptions {
  config?: string;
  json?: boolean;
}

export const globals = (cmd: Command): GlobalOptions => cmd.optsWithGlobals<GlobalOptions>();

export const configPath = (cmd: Command): string => globals(cmd).config ?? defaultConfigPath();

export function cliConfig(cmd: Command): Config {
  try {
    return loadConfig(configPath(cmd));
  } catch (e) {
    if (e instanceof ConfigError) throw new UserError(`config: ${e.message}`);
    throw e;
  }
}

/** Prints a result: one JSON object with --json, else a short human form. */
export function output(cmd: Command, result: unknown, human?: (r: any) => string): void {
  if (globals(cmd).json || !human) process.stdout.write(JSON.stringify(result, null, globals(cmd).json ? 0 : 2) + '\n');
  else process.stdout.write(human(result) + '\n');
}

/** The OTP for actions SPEC guards with two factors: --otp, or a prompt on a TTY. */
export async function otpFrom(cmd: Command, given: string | undefined): Promise<string | undefined> {
  if (given !== undefined) return given;
  if (!process.stdin.isTTY || globals(cmd).json) return undefined;
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return (await rl.question('Two-factor code: ')).trim();
  } finally {
    rl.close();
  }
}

/** Shows a new member's TOTP enrolment: a QR code on a terminal, the secret and URL always. */
export function showEnrolment(member: { email: string; totp_secret: string; otpauth_url: string }): string {
  let out = `member ${member.email}\nTOTP secret: ${member.totp_secret}\notpauth URL: ${member.otpauth_url}`;
  if (process.stdout.isTTY) {
    // Loaded only to draw one: every other CLI call goes without it.
    const qrcode = require('qrcode-terminal') as typeof import('qrcode-terminal');
    qrcode.generate(member.otpauth_url, { small: true }, (qr: string) => {
      out += `\nScan with an authenticator app:\n${qr}`;
    });
  }
  return out;
}

/** A whole-number option (`--rate-limit 100`); anything else is a one-line usage error. */
export function wholeNumber(flag: string, value: unknown): number {
  const s = String(value).trim();
  if (!/^\d{1,9}$/.test(s)) throw new UserError(`${flag} must be a whole number`);
  return Number(s);
}
