// Run pytest inside Pyodide (CPython compiled to WebAssembly, the browser edition's Python) on Node.
//
//   node --experimental-wasm-jspi tests/pyodide_run.mjs PYODIDE_DIR WHEELS_DIR CHECKOUT SPEC_DIR [DIR...] -- PYTEST_ARGS...
//
// PYODIDE_DIR holds the runtime from the npm tarball, WHEELS_DIR the pure wheels the lock names
// (mcplab's own code comes from CHECKOUT, first on sys.path). CHECKOUT, SPEC_DIR (the official
// schemas) and any other DIR are mounted at their own paths, so the tests read the very files they
// read on the machine.
// JSPI (stack switching) lets asyncio's run_until_complete wait inside the page's loop, as anyio's
// pytest plugin needs. The exit code is pytest's.
import fs from "node:fs";
import path from "node:path";

const args = process.argv.slice(2);
const end = args.indexOf("--");
if (end < 4) {
  console.error("usage: pyodide_run.mjs PYODIDE_DIR WHEELS_DIR CHECKOUT SPEC_DIR [DIR...] -- PYTEST_ARGS...");
  process.exit(2);
}
const [pyodideDir, wheelsDir, checkout, specDir, ...others] = args.slice(0, end);
const pytestArgs = args.slice(end + 1);
const { loadPyodide } = await import(path.join(pyodideDir, "pyodide.mjs"));
const py = await loadPyodide({ indexURL: pyodideDir + "/", stdout: (line) => console.log(line),
                               stderr: (line) => console.error(line) });
const sitePackages = py.runPython("import site; site.getsitepackages()[0]");
for (const name of fs.readdirSync(wheelsDir).filter((file) => file.endsWith(".whl")).sort()) {
  py.unpackArchive(new Uint8Array(fs.readFileSync(path.join(wheelsDir, name))), "wheel", { extractDir: sitePackages });
}
for (const dir of [checkout, specDir, ...others].filter((dir) => fs.existsSync(dir))) {
  py.FS.mkdirTree(dir);
  py.FS.mount(py.FS.filesystems.NODEFS, { root: dir }, dir);
}
py.globals.set("CHECKOUT", checkout);
py.globals.set("ENV", py.toPy({ MCPLAB_SPEC_DIR: specDir, ...(process.env.CI ? { CI: process.env.CI } : {}) }));
py.globals.set("ARGS", py.toPy(pytestArgs));
const code = await py.runPythonAsync(`
import os, sys
os.chdir(CHECKOUT)
sys.path.insert(0, CHECKOUT)
os.environ.update(ENV)  # where the schemas are, and CI=true: a missing tool fails there too
import pytest
int(pytest.main(["-p", "no:cacheprovider", *ARGS]))
`);
process.exit(code);
