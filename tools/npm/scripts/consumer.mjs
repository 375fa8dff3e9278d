// The consumer test: `npm pack` the package, install the tarball into fresh `"type": "module"`
// projects, and compile test/consumer/*.ts plus the recipes of the repository README's frontend
// section (each fenced block after a `<!-- recipe: NAME -->` line) under the README's own
// tsconfig for moduleResolution nodenext and bundler, made stricter still, with TypeScript 5 and 7
// (both pinned in package-lock.json). Then it runs what was compiled: the fixture validation, the
// README's Node ESM recipe, and its client recipe against the reference backend.
// Usage: node scripts/consumer.mjs   (after `npm run build`; needs the release reference binary)
import { execFileSync } from "node:child_process";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startReference } from "../test/helpers.mjs";

const pkgDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const root = path.resolve(pkgDir, "../..");
const COMPILERS = { "typescript 5": "node_modules/typescript/bin/tsc", "typescript 7": "node_modules/typescript7/bin/tsc" };
const RESOLUTIONS = ["nodenext", "bundler"];

/** The README's recipes by name: `<!-- recipe: NAME -->` followed by a fenced code block. */
async function recipes() {
  const readme = await readFile(path.join(root, "README.md"), "utf8");
  const found = new Map();
  for (const m of readme.matchAll(/<!-- recipe: ([\w.-]+) -->\n```\w*\n([\s\S]*?)\n```/g)) found.set(m[1], `${m[2]}\n`);
  for (const name of ["tsconfig.nodenext.json", "tsconfig.bundler.json", "validate.mjs", "client.ts"]) {
    if (!found.has(name)) throw new Error(`README.md has no recipe ${name}`);
  }
  return found;
}

const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], timeout: 300_000 });

const work = await mkdtemp(path.join(os.tmpdir(), "chatwire-consumer-"));
try {
  const packed = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", work], pkgDir));
  const tarball = path.join(work, packed[0].filename);
  console.log(`consumer: packed ${packed[0].filename} (${packed[0].entryCount} files)`);
  const sources = (await readdir(path.join(pkgDir, "test/consumer"))).filter((f) => f.endsWith(".ts"));
  const readme = await recipes();
  for (const resolution of RESOLUTIONS) {
    const project = path.join(work, resolution);
    await mkdir(path.join(project, "src"), { recursive: true });
    await writeFile(path.join(project, "package.json"), JSON.stringify({ name: `consumer-${resolution}`, private: true, type: "module" }, null, 2));
    // The package has no dependencies, so installing its tarball needs no registry.
    run("npm", ["install", "--no-audit", "--no-fund", "--offline", "--loglevel=error", tarball], project);
    // Node's types come from this package's lock file rather than a second registry install.
    await mkdir(path.join(project, "node_modules/@types"), { recursive: true });
    await symlink(path.join(pkgDir, "node_modules/@types/node"), path.join(project, "node_modules/@types/node"));
    for (const dep of ["undici-types", "ws", "@types/ws"]) await symlink(path.join(pkgDir, "node_modules", dep), path.join(project, "node_modules", dep));
    for (const file of sources) await cp(path.join(pkgDir, "test/consumer", file), path.join(project, "src", file));
    await mkdir(path.join(project, "src/recipes"));
    for (const [name, text] of readme) {
      if (name.endsWith(".ts") || name.endsWith(".mjs")) await writeFile(path.join(project, "src/recipes", name), text);
    }
    const base = JSON.parse(readme.get(`tsconfig.${resolution}.json`));
    for (const [compiler, bin] of Object.entries(COMPILERS)) {
      const tsconfig = {
        compilerOptions: {
          ...base.compilerOptions,
          skipLibCheck: false,
          noUncheckedIndexedAccess: true,
          exactOptionalPropertyTypes: true,
          rootDir: "src",
          outDir: "out",
        },
        include: ["src/**/*.ts"],
      };
      await writeFile(path.join(project, "tsconfig.json"), JSON.stringify(tsconfig, null, 2));
      await rm(path.join(project, "out"), { recursive: true, force: true });
      run(process.execPath, [path.join(pkgDir, bin), "-p", "tsconfig.json"], project);
      const out = run(process.execPath, [path.join(project, "out/validate-fixtures.js"), path.join(root, "fixtures/messages")], project);
      console.log(`consumer: ${resolution}, ${compiler}: compiled --strict; ${out.trim()}`);
    }
    const esm = run(process.execPath, [path.join(project, "src/recipes/validate.mjs")], project);
    console.log(`consumer: ${resolution}: README recipe validate.mjs ran: ${esm.trim().replace(/\n/g, " | ")}`);
    const server = await startReference([]);
    try {
      const out = execFileSync(process.execPath, [path.join(project, "out/recipes/client.js")], {
        cwd: project,
        encoding: "utf8",
        env: { ...process.env, CHATWIRE_URL: server.url },
        timeout: 30_000,
      });
      console.log(`consumer: ${resolution}: README recipe client.ts ran against the reference: ${out.trim().split("\n").at(-1)}`);
    } finally {
      await server.stop();
    }
  }
} finally {
  await rm(work, { recursive: true, force: true });
}
