// The consumer test: `npm pack` the package, install the tarball into fresh `"type": "module"`
// projects, compile test/consumer/*.ts (and the README's frontend recipes, once extracted) with
// --strict under moduleResolution nodenext and bundler with TypeScript 5 and 7 (both pinned in
// package-lock.json), then run the compiled fixture validation with node.
// Usage: node scripts/consumer.mjs   (after `npm run build`)
import { execFileSync } from "node:child_process";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const pkgDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const root = path.resolve(pkgDir, "../..");
const COMPILERS = { "typescript 5": "node_modules/typescript/bin/tsc", "typescript 7": "node_modules/typescript7/bin/tsc" };
const RESOLUTIONS = {
  nodenext: { module: "NodeNext", moduleResolution: "NodeNext" },
  bundler: { module: "ESNext", moduleResolution: "Bundler" },
};

const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], timeout: 300_000 });

const work = await mkdtemp(path.join(os.tmpdir(), "chatwire-consumer-"));
try {
  const packed = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", work], pkgDir));
  const tarball = path.join(work, packed[0].filename);
  console.log(`consumer: packed ${packed[0].filename} (${packed[0].entryCount} files)`);
  const sources = (await readdir(path.join(pkgDir, "test/consumer"))).filter((f) => f.endsWith(".ts"));
  for (const [resolution, options] of Object.entries(RESOLUTIONS)) {
    const project = path.join(work, resolution);
    await mkdir(path.join(project, "src"), { recursive: true });
    await writeFile(path.join(project, "package.json"), JSON.stringify({ name: `consumer-${resolution}`, private: true, type: "module" }, null, 2));
    // The package has no dependencies, so installing its tarball needs no registry.
    run("npm", ["install", "--no-audit", "--no-fund", "--offline", "--loglevel=error", tarball], project);
    // Node's types come from this package's lock file rather than a second registry install.
    await mkdir(path.join(project, "node_modules/@types"), { recursive: true });
    await symlink(path.join(pkgDir, "node_modules/@types/node"), path.join(project, "node_modules/@types/node"));
    await symlink(path.join(pkgDir, "node_modules/undici-types"), path.join(project, "node_modules/undici-types"));
    for (const file of sources) await cp(path.join(pkgDir, "test/consumer", file), path.join(project, "src", file));
    for (const [compiler, bin] of Object.entries(COMPILERS)) {
      const tsconfig = {
        compilerOptions: {
          ...options,
          strict: true,
          target: "ES2022",
          lib: ["ES2022"],
          types: ["node"],
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
  }
} finally {
  await rm(work, { recursive: true, force: true });
}
