/**
 * The dependency graph of src/ that docs/development.md's "Layout" draws, checked by dependency-cruiser (`make lint`).
 * One entry per top-level folder of src/: the folders it may import (besides itself). A subfolder belongs to its
 * top-level folder (src/service/decide/ is service), so a new subfolder needs no new rule; a new top-level folder
 * fails until it is added here and to docs/development.md. Every folder may also import the SHARED ones, which import nothing
 * of Portier but `errors`.
 */
const SHARED = ["errors", "text", "files"];
const ALLOWED = {
  errors: [],
  text: [],
  files: ["errors"],
  catalog: ["errors"],
  engine: ["errors"],
  reload: ["errors"],
  toolchain: ["catalog", "engine", "errors"],
  directory: ["catalog", "reload", "errors"],
  auth: ["reload", "errors"],
  review: ["catalog", "directory", "engine", "toolchain", "errors"],
  service: ["engine", "auth", "directory", "catalog", "reload", "errors"],
  issuer: ["auth", "errors"],
  cli: ["service", "engine", "auth", "catalog", "toolchain", "review", "issuer", "directory", "errors"],
};

const FOLDERS = Object.keys(ALLOWED);
const oneOf = (names) => `^src/(${names.join("|")})/`;

module.exports = {
  forbidden: [
    ...FOLDERS.map((from) => ({
      name: `${from}-imports-only-${ALLOWED[from].join("-") || "nothing"}`,
      comment: `src/${from} may import ${ALLOWED[from].length ? ALLOWED[from].map((f) => `src/${f}`).join(", ") : "nothing else of Portier"} (docs/development.md "Layout")`,
      severity: "error",
      from: { path: `^src/${from}/` },
      to: { path: "^src/", pathNot: oneOf([from, ...ALLOWED[from], ...(SHARED.includes(from) ? [] : SHARED)]) },
    })),
    {
      name: "folder-not-in-the-graph",
      comment: "a top-level folder of src/ that the graph does not list: add it here and to docs/development.md \"Layout\"",
      severity: "error",
      from: { path: "^src/", pathNot: oneOf(FOLDERS) },
      to: {},
    },
    {
      name: "adapters-apart",
      comment:
        "the HTTP and gRPC adapters share what every adapter shares through src/service/gateway/, never each other",
      severity: "error",
      from: { path: "^src/service/(http|grpc)/" },
      to: { path: "^src/service/(http|grpc)/", pathNot: "^src/service/$1/" },
    },
    {
      name: "no-cycles",
      comment: "modules import one another one way",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "src-not-on-tests-or-tools",
      comment: "the product never imports test/ or tools/",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^(test|tools)/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
  },
};
