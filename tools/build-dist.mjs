// Compiles src/ to dist/ (tsc -p tsconfig.json) and copies beside the compiled modules the files they load that tsc
// does not emit (the gRPC protos), so that dist/ holds everything the built CLI loads from src/. The Makefile, the
// test set-up (test/support/build-dist.ts), `npm run build` and the image build all compile through this script.
import { execFileSync } from "node:child_process";
import { cpSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const ASSETS = ["service/grpc/protos"];

execFileSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, "-p", `${root}tsconfig.json`], {
  stdio: "inherit",
});
for (const asset of ASSETS) {
  rmSync(`${root}dist/${asset}`, { recursive: true, force: true });
  cpSync(`${root}src/${asset}`, `${root}dist/${asset}`, { recursive: true });
}
