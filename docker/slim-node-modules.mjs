#!/usr/bin/env node
// Trims a production node_modules (after `npm prune --omit=dev`) to what Node loads on this platform, for the image
// (Dockerfile, docker/local-images.sh). Runs on the platform the image is for, so "this platform" is the image's.
//   node docker/slim-node-modules.mjs <node_modules>
// Removes:
//   - native builds for other systems and CPUs, in the layouts the dependencies use: onnxruntime-node's
//     bin/napi-v*/<os>/<cpu>, node-gyp-build's prebuilds/<os>-<cpu>;
//   - onnxruntime-web: the browser build of ONNX Runtime. transformers.js's Node build runs models on
//     onnxruntime-node and carries (bundled) the little of the web package it uses; nothing requires the package;
//   - what no runtime reads: source maps, type declarations, TypeScript sources (Node will not strip types under
//     node_modules), C/C++ sources and headers of native addons (the image never compiles them);
//   - debug symbols of this platform's native binaries, with binutils' `strip` where it is installed.
// Prints what it removed; e2e/stack/compose-stack.stack-spec.ts reports the image's size against its budget.
import { execFileSync } from 'node:child_process';
import { closeSync, copyFileSync, lstatSync, openSync, readdirSync, readSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const ARCH = { x64: ['x64'], arm64: ['arm64'], ia32: ['ia32'], arm: ['arm'] }[process.arch] ?? [process.arch];
const UNUSED_PACKAGES = ['onnxruntime-web'];
const UNREAD_FILES = /\.(map|d\.ts|d\.mts|d\.cts|ts|mts|cts|c|cc|cpp|cxx|h|hh|hpp|hxx)$/;

/** Bytes under a path (not following links). */
function size(path) {
  const info = lstatSync(path);
  if (!info.isDirectory()) return info.size;
  return readdirSync(path).reduce((sum, name) => sum + size(join(path, name)), 0);
}

function walk(dir, visit) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (visit(path, entry) === 'skip') continue;
    if (entry.isDirectory()) walk(path, visit);
  }
}

/** A folder of native builds for another platform: bin/napi-v6/darwin, bin/napi-v6/linux/arm64, prebuilds/win32-x64. */
function otherPlatform(path, name) {
  const [grandparent, parent] = path.split('/').slice(-3, -1);
  if (/^napi-v\d+$/.test(parent)) return name !== process.platform;
  if (/^napi-v\d+$/.test(grandparent)) return !ARCH.includes(name);
  if (parent === 'prebuilds') {
    const [os, cpus = ''] = name.split('-');
    return os !== process.platform || !cpus.split('+').some((cpu) => ARCH.includes(cpu));
  }
  return false;
}

function isElf(path) {
  const head = Buffer.alloc(4);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, head, 0, 4, 0);
  } finally {
    closeSync(fd);
  }
  return head.toString('latin1') === '\x7fELF';
}

function hasStrip() {
  try {
    execFileSync('strip', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export function slim(root) {
  const removed = { platforms: 0, packages: 0, files: 0, symbols: 0 };
  const drop = (path, kind) => {
    removed[kind] += size(path);
    rmSync(path, { recursive: true, force: true });
  };
  const binaries = [];
  walk(root, (path, entry) => {
    const parent = path.split('/').at(-2);
    if (entry.isDirectory()) {
      if (parent === 'node_modules' && UNUSED_PACKAGES.includes(entry.name)) {
        drop(path, 'packages');
        return 'skip';
      }
      if (otherPlatform(path, entry.name)) {
        drop(path, 'platforms');
        return 'skip';
      }
      return undefined;
    }
    if (!entry.isFile()) return undefined;
    if (UNREAD_FILES.test(entry.name)) drop(path, 'files');
    else if (entry.name.endsWith('.node') || /\.so(\.\d+)*$/.test(entry.name)) binaries.push(path);
    return undefined;
  });
  const strip = hasStrip();
  for (const path of strip ? binaries.filter(isElf) : []) {
    const before = lstatSync(path).size;
    // On a copy: the tree may be hard links into a development node_modules (docker/local-images.sh), which strip
    // would otherwise change in place.
    const copy = `${path}.slim`;
    copyFileSync(path, copy);
    execFileSync('strip', ['--strip-unneeded', copy]);
    renameSync(copy, path);
    removed.symbols += before - lstatSync(path).size;
  }
  const mb = (n) => `${(n / 1024 / 1024).toFixed(0)} MB`;
  console.log(
    `slim-node-modules: removed ${mb(removed.platforms)} of other platforms' binaries, ${mb(removed.packages)} of ` +
      `${UNUSED_PACKAGES.join(', ')}, ${mb(removed.files)} of maps, types and sources, ` +
      (strip ? `${mb(removed.symbols)} of debug symbols` : 'no debug symbols (binutils `strip` is not installed)') +
      `; ${mb(size(root))} left`,
  );
  return removed;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = process.argv[2];
  if (!root) {
    console.error('usage: node docker/slim-node-modules.mjs <node_modules>');
    process.exit(2);
  }
  slim(root);
}
