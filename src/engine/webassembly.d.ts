// The few WebAssembly globals the engine uses (Node has them; the "DOM" lib that declares them is not loaded).
declare namespace WebAssembly {
  class Module {
    constructor(bytes: Uint8Array);
  }
}
