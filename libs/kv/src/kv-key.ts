import { KvKeyError } from './kv-store.js';

const TOKEN = /^[-/_=a-zA-Z0-9]+$/;

/** Throws KvKeyError unless `key` is dot-separated tokens of the port's alphabet. */
export function checkKey(key: string): void {
  if (key.length === 0) throw new KvKeyError(key, 'empty');
  for (const token of key.split('.')) {
    if (!TOKEN.test(token)) throw new KvKeyError(key, 'each dot-separated token must be letters, digits, -, _, = or /');
  }
}

/** Throws KvKeyError unless `prefix` is empty or whole tokens ending with a dot. */
export function checkPrefix(prefix: string): void {
  if (prefix === '') return;
  if (!prefix.endsWith('.')) throw new KvKeyError(prefix, 'a prefix is whole tokens ending with a dot');
  checkKey(prefix.slice(0, -1));
}

/** A key token for any string (base64url; `_` for the empty string): tenants, names and ids of any spelling fit. */
export function keyToken(value: string): string {
  return Buffer.from(value, 'utf8').toString('base64url') || '_';
}

/** The string a {@link keyToken} was made from. */
export function fromKeyToken(token: string): string {
  return token === '_' ? '' : Buffer.from(token, 'base64url').toString('utf8');
}

/** A key of free-form segments, each made a token. */
export function kvKey(...segments: string[]): string {
  return segments.map(keyToken).join('.');
}

/**
 * Revisions handed out by this process's embedded stores: above every earlier one and at least the clock in
 * microseconds, so a key deleted and written again (even after a restart) never reuses a revision it had.
 */
let lastIssued = 0;
export function nextRevision(previous: number): number {
  lastIssued = Math.max(previous + 1, lastIssued + 1, Date.now() * 1000);
  return lastIssued;
}
