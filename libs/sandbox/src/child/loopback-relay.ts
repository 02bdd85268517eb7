// Runs inside the bash sandbox (Node's type stripping: erasable TypeScript only, no relative imports). The
// sandbox has its own network namespace with only a loopback interface; this relay listens on that loopback at
// the API's port and forwards each connection to the unix socket bound into the sandbox, whose other end is the
// host's API proxy. Then it runs the command and exits with its status. It holds nothing the command lacks.
import { spawn } from 'node:child_process';
import net from 'node:net';

const [port, socketPath, separator, ...command] = process.argv.slice(2);
if (!port || !socketPath || separator !== '--' || command.length === 0) {
  process.stderr.write('usage: loopback-relay PORT SOCKET -- COMMAND...\n');
  process.exit(64);
}

const server = net.createServer((inside) => {
  const outside = net.connect(socketPath);
  inside.pipe(outside);
  outside.pipe(inside);
  inside.on('error', () => outside.destroy());
  outside.on('error', () => inside.destroy());
});

server.listen(Number(port), '127.0.0.1', () => {
  const child = spawn(command[0]!, command.slice(1), { stdio: 'inherit' });
  child.on('error', (err) => {
    process.stderr.write(`could not start ${command[0]}: ${err.message}\n`);
    process.exit(127);
  });
  child.on('exit', (code, signal) =>
    process.exit(
      code ??
        128 +
          (signal
            ? (({ SIGKILL: 9, SIGTERM: 15, SIGXCPU: 24, SIGXFSZ: 25 } as Record<string, number>)[signal] ?? 1)
            : 1),
    ),
  );
});
server.on('error', (err) => {
  process.stderr.write(`the API relay could not listen on 127.0.0.1:${port}: ${err.message}\n`);
  process.exit(70);
});
