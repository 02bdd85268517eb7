#!/usr/bin/env node
// Alfred's CLI launcher: plain ESM so it runs before anything is compiled. It makes sure it runs on the
// project's Node 24 (re-executing itself when started by an older system node), then dispatches a
// command from the table below to its compiled module in dist/ (built by `npm run build`).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const MIN_NODE = 24;

/** words → compiled module and exported `(args, io) => Promise<exitCode>`; add later commands here. */
const COMMANDS = [
  {
    words: ['skills', 'validate'],
    module: 'dist/libs/skills/src/validate.command.js',
    run: 'runValidateCommand',
    summary: 'validate SKILL.md skills strictly: alfred skills validate <dir|SKILL.md>... [--json]',
  },
  {
    words: ['skills', 'add'],
    module: 'dist/libs/skills/src/skills-remote.command.js',
    run: 'runSkillsAddCommand',
    summary:
      'install the skills of a git repository into the running Alfred: alfred skills add <source> [--ref] ' +
      '[--path] [--skill]...',
  },
  {
    words: ['skills', 'update'],
    module: 'dist/libs/skills/src/skills-remote.command.js',
    run: 'runSkillsUpdateCommand',
    summary: "move installed skills to their ref's newest commit: alfred skills update [<name>...] [--source <source>]",
  },
  {
    words: ['skills', 'remove'],
    module: 'dist/libs/skills/src/skills-remote.command.js',
    run: 'runSkillsRemoveCommand',
    summary:
      'remove installed skills: alfred skills remove <name>... [--yes] (ALFRED_URL, ALFRED_API_KEY, ALFRED_AGENT)',
  },
  {
    words: ['reindex'],
    module: 'dist/services/memory/src/reindex.command.js',
    run: 'runReindexCommand',
    summary: 're-embed every stored memory with the configured embedder (memory service stopped)',
  },
  {
    words: ['models'],
    module: 'dist/services/memory/src/models.command.js',
    run: 'runModelsCommand',
    summary: 'models pull: fetch the default local sentence-embedding model into the data dir',
  },
];

function ensureNode() {
  if (Number(process.versions.node.split('.')[0]) >= MIN_NODE) return;
  const local = join(repo, 'node_modules', 'node', 'bin', 'node');
  if (existsSync(local) && process.env.ALFRED_CLI_REEXEC !== '1') {
    const child = spawnSync(local, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
      stdio: 'inherit',
      env: { ...process.env, ALFRED_CLI_REEXEC: '1' },
    });
    process.exit(child.status ?? 1);
  }
  process.stderr.write(
    `alfred needs Node ${MIN_NODE}+ (this is ${process.version}); run \`npm install\` in ${repo} or use nvm.\n`,
  );
  process.exit(2);
}

function usage(stream) {
  const commands = COMMANDS.map((c) => `  ${c.words.join(' ')}  ${c.summary}`).join('\n');
  stream.write(`usage: alfred <command> [args]\n\ncommands:\n${commands}\n`);
}

async function main(argv) {
  ensureNode();
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h') {
    usage(argv.length === 0 ? process.stderr : process.stdout);
    return argv.length === 0 ? 2 : 0;
  }
  const command = COMMANDS.find((c) => c.words.every((w, i) => argv[i] === w));
  if (!command) {
    process.stderr.write(`alfred: unknown command "${argv.join(' ')}"\n`);
    usage(process.stderr);
    return 2;
  }
  const modulePath = join(repo, command.module);
  if (!existsSync(modulePath)) {
    process.stderr.write(`alfred: ${command.module} is missing; run \`npm run build\` in ${repo} first.\n`);
    return 2;
  }
  const mod = await import(pathToFileURL(modulePath).href);
  // The environment is handed to the command, which reads what it needs through its own schema.
  const io = {
    cwd: process.cwd(),
    env: process.env,
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  };
  return mod[command.run](argv.slice(command.words.length), io);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`alfred: ${err?.stack ?? err}\n`);
    process.exitCode = 1;
  },
);
