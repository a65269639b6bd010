// The activity ledger's catalogue (libs/events/src/catalogue/event-catalogue.ts), type-checked on its own: its
// list of kinds is derived from an object that must name every kind of `EventDetailsByType` and no other, so a
// kind missing on either side is a compiler error, and `npm run lint` (whose ESLint reports no compiler errors)
// fails on it here. The file imports nothing: the check is one file's program, about a second.
// Usage: node scripts/check-event-catalogue.mjs [file]; exit 1 on an error.
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';
import ts from 'typescript';

const CATALOGUE = 'libs/events/src/catalogue/event-catalogue.ts';

/** The compiler's errors for the catalogue file (the repository's compiler options), as text. */
export function catalogueErrors(file = CATALOGUE, repo = process.cwd()) {
  const { config } = ts.readConfigFile(resolve(repo, 'tsconfig.json'), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, repo);
  const program = ts.createProgram([resolve(repo, file)], { ...options, noEmit: true, types: [] });
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    if (diagnostic.file === undefined || diagnostic.start === undefined) return text;
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    return `${diagnostic.file.fileName}:${line + 1}: ${text}`;
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const errors = catalogueErrors(process.argv[2]);
  for (const error of errors) console.error(error);
  if (errors.length > 0) {
    console.error('the event catalogue does not compile: every kind must be in EventDetailsByType and EVENT_KINDS');
    process.exit(1);
  }
}
