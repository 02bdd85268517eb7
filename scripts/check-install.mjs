// `npm install`'s last step (postinstall): the project's own Node 24 is in place, and what npm's engine warnings mean.
// Plain JavaScript: it runs on whatever Node npm's scripts get.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The lowest Node the project runs on (package.json `engines`), as [major, minor]. */
function requiredNode(root) {
  const { engines } = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
  const [, major, minor] = /(\d+)\.(\d+)/.exec(engines.node);
  return [Number(major), Number(minor)];
}

const atLeast = ([major, minor], [wantMajor, wantMinor]) =>
  major > wantMajor || (major === wantMajor && minor >= wantMinor);
const parse = (version) => /v?(\d+)\.(\d+)/.exec(version)?.slice(1, 3).map(Number);

/**
 * What to tell the person installing: an error when npm's scripts do not run on the project's Node (the `node`
 * package's install script did not run, so `npm start` would use an older Node), and a note when npm itself runs on
 * a Node older than 22, where it lists every dependency that declares Node >= 22 as EBADENGINE although they run on
 * the project's Node.
 */
export function installMessages({ scriptsNode, userAgent, required }) {
  const ours = parse(scriptsNode);
  if (!ours || !atLeast(ours, required)) {
    return {
      error:
        `Alfred runs on Node >= ${required.join('.')}, but npm's scripts run on ${scriptsNode}: the \`node\` package ` +
        'did not install its Node binary (npm skipped its install script). Run `npm install-scripts approve node` ' +
        'and `npm rebuild node`, then `npm install` again.',
    };
  }
  const npmNode = /\bnode\/(v[\d.]+)/.exec(userAgent ?? '')?.[1];
  const npmOn = npmNode ? parse(npmNode) : undefined;
  if (!npmOn || atLeast(npmOn, [22, 0])) return {};
  return {
    note:
      `npm ran on Node ${npmNode}, older than the Node 22 that several dependencies declare, so it listed them as ` +
      `EBADENGINE above. They run on Alfred's own Node ${scriptsNode} (node_modules/.bin/node, from the \`node\` ` +
      'package), so nothing is wrong; npm running on Node >= 22 does not list them.',
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = new URL('..', import.meta.url);
  const said = installMessages({
    scriptsNode: process.version,
    userAgent: process.env.npm_config_user_agent,
    required: requiredNode(root),
  });
  if (said.note) console.log(said.note);
  if (said.error) {
    console.error(said.error);
    process.exit(1);
  }
}
