// Jest runs tests in a vm context whose typed-array constructors differ from Node's main realm.
// onnxruntime-node's native addon returns main-realm typed arrays, and onnxruntime-common checks
// them with `instanceof` against the vm's constructors, so every inference fails under jest only
// (microsoft/onnxruntime#16622). This environment gives the test context the main realm's typed arrays.
const { TestEnvironment } = require('jest-environment-node');

const TYPED = [
  'Float32Array',
  'Float64Array',
  'Int8Array',
  'Uint8Array',
  'Int16Array',
  'Uint16Array',
  'Int32Array',
  'Uint32Array',
  'BigInt64Array',
  'BigUint64Array',
  'ArrayBuffer',
];

class OnnxEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    for (const name of TYPED) this.global[name] = globalThis[name];
  }
}

module.exports = OnnxEnvironment;
