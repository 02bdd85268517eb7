import { readFileSync } from 'node:fs';

/** The API version is the package version, read once at start-up. */
export const API_VERSION: string = (() => {
  for (const rel of ['../../../package.json', '../../../../package.json']) {
    try {
      return (JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { version: string }).version;
    } catch {
      // try the next layout (source vs dist)
    }
  }
  return '0.0.0';
})();

/** What `GET /` lists: every endpoint family of the API. */
export const API_ENDPOINTS: ReadonlyArray<{ path: string; methods: string[]; description: string }> = [
  { path: '/health', methods: ['GET'], description: 'Health check' },
  { path: '/metrics', methods: ['GET'], description: 'Prometheus metrics of this gateway process (API key required)' },
  {
    path: '/metrics/history',
    methods: ['GET'],
    description:
      "This gateway's last hour of request rate, errors and latency, from the same counters (API key required)",
  },
  {
    path: '/openapi.json',
    methods: ['GET'],
    description: 'OpenAPI 3.1 document of this API, generated from its zod contracts',
  },
  { path: '/memories', methods: ['GET', 'POST', 'DELETE'], description: 'Memory management' },
  { path: '/memories/batch', methods: ['POST'], description: 'Create many memories' },
  {
    path: '/conversations',
    methods: ['POST'],
    description: 'Store a conversation: each message a memory, searchable with its neighbours and date as context',
  },
  { path: '/memories/{id}', methods: ['GET', 'PUT', 'DELETE'], description: 'One memory' },
  { path: '/memories/{id}/history', methods: ['GET'], description: 'Every change of one memory' },
  { path: '/search', methods: ['GET'], description: 'Semantic search' },
  {
    path: '/memories/{id}/feedback',
    methods: ['POST'],
    description: 'Report whether a memory helped; it moves the memory in later searches',
  },
  {
    path: '/checkpoints',
    methods: ['GET', 'POST'],
    description: 'Checkpoints of work in progress: save, list newest first',
  },
  { path: '/checkpoints/{id}', methods: ['GET'], description: 'One checkpoint' },
  {
    path: '/checkpoints/{id}/resume',
    methods: ['POST'],
    description: 'Start a new session from a checkpoint (level summary|context|full)',
  },
  { path: '/remediations', methods: ['POST'], description: 'Record an error and its fix' },
  {
    path: '/remediations/search',
    methods: ['GET'],
    description: 'Find fixes for an error text (normalised signature, hybrid search)',
  },
  { path: '/remediations/{id}', methods: ['GET'], description: 'One remediation' },
  { path: '/remediations/{id}/feedback', methods: ['POST'], description: 'Report whether a fix helped' },
  {
    path: '/recall',
    methods: ['GET'],
    description: 'One ranked list from memories, remediations and skills within a token budget',
  },
  {
    path: '/mcp',
    methods: ['POST'],
    description:
      'MCP (Streamable HTTP, stateless): skills, memory, checkpoint, remediation and recall tools; skills as resources',
  },
  { path: '/distill', methods: ['POST'], description: 'Extract insights to MEMORY.md' },
  { path: '/learn', methods: ['POST'], description: 'Update agent files' },
  { path: '/compact', methods: ['POST'], description: 'Summarize context' },
  { path: '/sessions', methods: ['GET', 'POST'], description: 'Sessions of the agent' },
  { path: '/sessions/{id}', methods: ['GET', 'DELETE'], description: 'One session with its messages' },
  { path: '/sessions/{id}/messages', methods: ['POST'], description: 'Append messages to a session' },
  {
    path: '/skills',
    methods: ['GET', 'POST'],
    description: 'Skills index (?format=json|markdown|xml, ?budget=) and create a project skill',
  },
  { path: '/skills/search', methods: ['GET'], description: 'Hybrid search over skill names, descriptions and bodies' },
  { path: '/skills/reload', methods: ['POST'], description: 'Re-discover skills on disk' },
  {
    path: '/skills/install',
    methods: ['POST'],
    description:
      'Install the skills of a git repository (https://, git://; ssh:// and local when configured), pinned to a commit',
  },
  {
    path: '/skills/update',
    methods: ['POST'],
    description: "Move every skill installed from a source (or from all) to its ref's newest commit",
  },
  {
    path: '/skills/{name}',
    methods: ['GET', 'DELETE'],
    description:
      'A skill body and metadata (level 2), with its outcome counts, success estimate and installed_from; ' +
      'DELETE (own skills) needs ?confirm=true',
  },
  {
    path: '/skills/{name}/update',
    methods: ['POST'],
    description: "Move an installed skill to its ref's newest commit; reports what changed in its SKILL.md",
  },
  {
    path: '/skills/{name}/feedback',
    methods: ['POST'],
    description: 'Record one outcome of a use of the skill (success true/false)',
  },
  { path: '/skills/{name}/resources', methods: ['GET'], description: 'Files of a skill folder (level 3)' },
  { path: '/skills/{name}/resources/{path}', methods: ['GET'], description: 'One file of a skill folder' },
  {
    path: '/executable-skills',
    methods: ['GET', 'POST'],
    description: 'Executable skills (skill.json + execute.ts): list with status, create',
  },
  { path: '/executable-skills/reload', methods: ['POST'], description: 'Re-read executable skill folders' },
  {
    path: '/executable-skills/{id}',
    methods: ['GET', 'PATCH', 'DELETE'],
    description: 'One executable skill; DELETE needs ?confirm=true',
  },
  {
    path: '/executable-skills/{id}/consent',
    methods: ['POST'],
    description: 'Let this version ({"digest"}) of a skill installed from git run',
  },
  {
    path: '/executable-skills/{id}/execute',
    methods: ['POST'],
    description: 'Run a skill in the sandbox (alias /skills/{id}/execute)',
  },
  {
    path: '/executable-skills/{id}/executions',
    methods: ['GET'],
    description: "The tenant's executions of a skill, newest first (alias /skills/{id}/executions)",
  },
  { path: '/jobs/{id}', methods: ['GET'], description: 'Status and result of async work' },
  {
    path: '/sessions/{id}/turns',
    methods: ['POST'],
    description: 'Run one agent turn: SSE events, or JSON with Accept: application/json / "stream": false',
  },
  { path: '/sessions/{id}/turns/current', methods: ['DELETE'], description: 'Cancel the running turn of a session' },
  { path: '/sessions/{id}/confirm', methods: ['POST'], description: 'Answer a confirmation request of a running turn' },
  {
    path: '/usage',
    methods: ['GET'],
    description: "The tenant's disk use against its quotas: agent workspaces and skill data",
  },
  { path: '/agents', methods: ['GET', 'POST'], description: 'Named agents (alfred always exists)' },
  {
    path: '/agents/{name}',
    methods: ['GET', 'PATCH', 'DELETE'],
    description: 'One agent; DELETE needs ?confirm={name} and removes its data',
  },
  {
    path: '/agents/{agent}/files/{file}',
    methods: ['GET', 'PUT'],
    description:
      'An agent file (user, soul, memory); PUT edits USER.md or SOUL.md from expected_version (409 with the ' +
      'newer text when it moved)',
  },
  { path: '/agents/{agent}/files/{file}/history', methods: ['GET'], description: 'Every version of an agent file' },
  {
    path: '/agents/{agent}/files/{file}/history/{version}',
    methods: ['GET'],
    description: 'One kept version of an agent file, with its text',
  },
  {
    path: '/agents/{agent}/files/{file}/restore',
    methods: ['POST'],
    description: 'Restore an earlier version (optionally only from expected_version)',
  },
  {
    path: '/channels/telegram/{tenant}/webhook',
    methods: ['POST'],
    description:
      "Telegram's webhook (set by the channels service when ALFRED_TELEGRAM_WEBHOOK_URL is set; " +
      'authenticated by the webhook secret, not an API key)',
  },
];
