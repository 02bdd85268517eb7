import {
  ErrorCode,
  manifestToJsonSchema,
  skillToolName,
  SkillManifest,
  type ExecutableSkillDetail,
  type ExecutableSkillInfo,
  type ExecutableSkillSource,
} from '#contracts';
import { AlfredError } from '#errors';
import { skillDigestOf, type SkillFileBytes } from '#sandbox';
import type { z } from 'zod';
import { checkSkillCode } from './skill-code.check.js';
import type { SkillFolder } from './executable-skill.store.js';

/** One skill folder as the catalog knows it: loaded with its manifest, or invalid with the reason. */
export interface CatalogEntry {
  readonly id: string;
  readonly source: ExecutableSkillSource;
  /** The tenant of a managed skill; undefined for bundled (shared, read-only) ones. */
  readonly owner?: string;
  readonly dir: string;
  readonly digest: string;
  readonly files: readonly SkillFileBytes[];
  readonly updatedAt: string;
  readonly manifest?: SkillManifest;
  readonly reason?: string;
  /** Installed from git: the version the tenant consented to run (none yet: it waits for consent). */
  readonly installed?: { readonly consentedDigest?: string };
}

export const MANIFEST = 'skill.json';
export const CODE = 'execute.ts';
const utf8 = new TextDecoder('utf-8', { fatal: true });

export function toEntry(folder: SkillFolder): CatalogEntry {
  const files = folder.files ?? [];
  const base = {
    id: folder.id,
    source: folder.source,
    dir: folder.dir,
    ...(folder.owner === undefined ? {} : { owner: folder.owner }),
    ...(folder.installed ? { installed: folder.installed } : {}),
    files,
    digest: skillDigestOf(files),
    updatedAt: folder.modifiedAt.toISOString(),
  };
  const invalid = (reason: string): CatalogEntry => ({ ...base, reason });
  if (folder.problem) return invalid(folder.problem);
  const manifestFile = files.find((f) => f.path === MANIFEST);
  const codeFile = files.find((f) => f.path === CODE);
  if (!manifestFile) return invalid(`${MANIFEST} is missing`);
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(manifestFile.bytes).toString('utf8'));
  } catch (err) {
    return invalid(`${MANIFEST} is not JSON: ${(err as Error).message}`);
  }
  const parsed = SkillManifest.safeParse(raw);
  if (!parsed.success) return invalid(`${MANIFEST}: ${summarize(parsed.error)}`);
  if (parsed.data.id !== folder.id)
    return invalid(`${MANIFEST}: id ${parsed.data.id} does not match the folder name ${folder.id}`);
  if (!codeFile) return invalid(`${CODE} is missing`);
  const problem = checkSkillCode(Buffer.from(codeFile.bytes).toString('utf8'));
  return problem ? invalid(problem) : { ...base, manifest: parsed.data };
}

/** A valid skill installed from git that the tenant has not consented to in this version: it does not run. */
export function awaitsConsent(e: CatalogEntry): boolean {
  return e.manifest !== undefined && e.installed !== undefined && e.installed.consentedDigest !== e.digest;
}

export function info(e: CatalogEntry): ExecutableSkillInfo {
  const status = !e.manifest
    ? ('invalid' as const)
    : awaitsConsent(e)
      ? ('awaiting_consent' as const)
      : ('loaded' as const);
  const consented = e.installed?.consentedDigest ? { consented_digest: e.installed.consentedDigest } : {};
  const common = { id: e.id, status, source: e.source, digest: e.digest, updated_at: e.updatedAt, ...consented };
  if (!e.manifest) return { ...common, reason: e.reason ?? 'invalid' };
  const m = e.manifest;
  return {
    ...common,
    version: m.version,
    name: m.name,
    description: m.description,
    tags: m.tags,
    created_by: m.createdBy,
    tool_name: skillToolName(m.id),
    input_schema: manifestToJsonSchema(m),
  };
}

export function detail(e: CatalogEntry): ExecutableSkillDetail {
  const code = e.files.find((f) => f.path === CODE);
  return {
    ...info(e),
    ...(e.manifest ? { manifest: e.manifest } : {}),
    ...(code ? { code: Buffer.from(code.bytes).toString('utf8') } : {}),
  };
}

export function rawManifest(e: CatalogEntry): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(
      Buffer.from(e.files.find((f) => f.path === MANIFEST)?.bytes ?? []).toString('utf8'),
    );
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export function validManifest(candidate: Record<string, unknown>): SkillManifest {
  const parsed = SkillManifest.safeParse(candidate);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => ({
    path: i.path.map(String).join('.'),
    message: i.message,
    code: i.code,
  }));
  throw new AlfredError(ErrorCode.ValidationFailed, `invalid skill manifest: ${summarize(parsed.error)}`, { issues });
}

export function validCode(code: string): void {
  const problem = checkSkillCode(code);
  if (problem)
    throw new AlfredError(ErrorCode.ValidationFailed, problem, {
      issues: [{ path: 'code', message: problem, code: 'custom' }],
    });
}

export function encodeFile(f: SkillFileBytes): { path: string; encoding: 'utf8' | 'base64'; content: string } {
  try {
    return { path: f.path, encoding: 'utf8', content: utf8.decode(f.bytes) };
  } catch {
    return { path: f.path, encoding: 'base64', content: Buffer.from(f.bytes).toString('base64') };
  }
}

export function summarize(err: z.ZodError): string {
  return err.issues
    .map((i) => (i.path.length ? `${i.path.map(String).join('.')}: ${i.message}` : i.message))
    .join('; ');
}
