// Debian's firefox-esr driven over WebDriver BiDi by npm puppeteer-core, for the browser tests
// (tests/support/firefox.py starts it; nothing here is downloaded: no browser build of its own).
//
//     node tests/support/firefox.mjs '{"executablePath": "/usr/bin/firefox-esr", "prefs": {...}}'
//
// Reads one JSON command a line on stdin and answers each with one JSON line on stdout,
// {"id": n, "ok": true, "value": ...} or {"id": n, "ok": false, "error": "..."}:
//   open {url?, width, height, init: [js], beside?, background?}  -> a page id (each page has its
//        own browser context; `beside: id` opens a tab in that page's context instead, the same
//        window as a learner's second tab, and `background: true` leaves it behind the others)
//   front {page}  brings a page's tab to the front (as the learner switching to it)
//   goto {page, url, waitUntil} · reload {page} · close {page}
//   eval {page, fn, arg}   fn is a JS function as text (called with arg; a promise is awaited)
//                          or an expression, as Playwright's page.evaluate takes them
//   click {page, selector} · focus {page, selector} · press {page, key} · type {page, text}
//   screenshot {page, path, fullPage} · log {page} -> what the page did (below) · quit
// log: every request's URL, every response's URL and status, failed requests, page errors
// (uncaught exceptions), layout reports and console messages, of the page and its frames.
import puppeteer from 'puppeteer-core';
import readline from 'node:readline';

const options = JSON.parse(process.argv[2] || '{}');
const browser = await puppeteer.launch({
  browser: 'firefox',
  executablePath: options.executablePath || '/usr/bin/firefox-esr',
  headless: true,
  protocolTimeout: 120_000,
  extraPrefsFirefox: options.prefs || {},
});
const pages = new Map();
let nextPage = 1;

// Firefox reports a MathML element laid out with the wrong number of children ("Invalid markup:
// Incorrect number of children for <msub/> tag.") as a page error. On a busy machine it lays out a
// formula the parser has half appended (seen once: lesson 1, 3 reports, its formulas whole after);
// the build proves every formula it ships whole (site/hooks/tex_mathml.py), so these are layout
// reports, kept apart from script errors (the tests check the formulas in the page themselves).
const LAYOUT_REPORT = /^Invalid markup: /;

function record(page) {
  const log = { requests: [], responses: [], failed: [], errors: [], layout: [], console: [] };
  page.on('request', (r) => log.requests.push(r.url()));
  page.on('response', (r) => log.responses.push({ url: r.url(), status: r.status() }));
  page.on('requestfailed', (r) => log.failed.push({ url: r.url(), error: r.failure()?.errorText || '' }));
  page.on('pageerror', (e) => {
    const message = String(e && e.message ? e.message : e);
    (LAYOUT_REPORT.test(message) ? log.layout : log.errors).push(message);
  });
  page.on('console', (m) => log.console.push({ type: m.type(), text: m.text() }));
  return log;
}

// puppeteer-core 24.43 sets the screen orientation with the viewport; Firefox ESR 140 (Debian
// bookworm's firefox-esr 140.12) has no emulation.setScreenOrientationOverride and the whole call
// fails: then the viewport alone, through the same BiDi command puppeteer sends first
async function setViewport(page, width, height) {
  try {
    await page.setViewport({ width, height });
  } catch (error) {
    if (!String(error && error.message).includes('setScreenOrientationOverride')) throw error;
    await page.mainFrame().browsingContext.setViewport({ viewport: { width, height }, devicePixelRatio: null });
  }
}

const commands = {
  async open({ url, width = 1440, height = 900, init = [], beside = null, background = false }) {
    const other = beside !== null ? pages.get(beside) : null;
    if (beside !== null && !other) throw new Error(`no page ${beside}`);
    const context = other ? other.context : await browser.createBrowserContext();
    const page = await context.newPage({ background });
    await setViewport(page, width, height);
    for (const script of init) await page.evaluateOnNewDocument(script);
    const id = nextPage++;
    pages.set(id, { page, context, ownsContext: !other, log: record(page) });
    if (url) await page.goto(url, { waitUntil: 'load' });
    return id;
  },
  async front({ page }) { await page.bringToFront(); return true; },
  async goto({ page, url, waitUntil = 'load' }) { await page.goto(url, { waitUntil }); return page.url(); },
  async reload({ page }) { await page.reload({ waitUntil: 'load' }); return page.url(); },
  async close({ id }) {
    const { page, context, ownsContext } = pages.get(id);
    pages.delete(id);
    if (!ownsContext) { await page.close(); return true; }
    for (const [other, entry] of pages) if (entry.context === context) pages.delete(other);   // its tabs go with it
    await context.close();
    return true;
  },
  async eval({ page, fn, arg = null }) {
    const source = `(async () => { const f = (${fn}); return typeof f === 'function' ? await f(${JSON.stringify(arg)}) : f; })()`;
    const value = await page.evaluate(source);
    return value === undefined ? null : value;
  },
  async click({ page, selector }) { await page.click(selector); return true; },
  async focus({ page, selector }) { await page.focus(selector); return true; },
  async press({ page, key }) { await page.keyboard.press(key); return true; },
  async type({ page, text }) { await page.keyboard.type(text); return true; },
  async screenshot({ page, path, fullPage = false }) { await page.screenshot({ path, fullPage }); return path; },
  async log({ id }) { return pages.get(id).log; },
  async url({ page }) { return page.url(); },
  async quit() { await browser.close(); return true; },
};

const reply = (message) => process.stdout.write(JSON.stringify(message) + '\n');
const lines = readline.createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  const command = JSON.parse(line);
  const run = commands[command.op];
  try {
    if (!run) throw new Error(`unknown command ${command.op}`);
    const entry = command.page !== undefined ? pages.get(command.page) : null;
    if (command.page !== undefined && !entry) throw new Error(`no page ${command.page}`);
    const args = { ...command, page: entry && entry.page, id: command.page };
    reply({ id: command.id, ok: true, value: await run(args) });
  } catch (err) {
    reply({ id: command.id, ok: false, error: String(err && err.stack ? err.stack : err) });
  }
  if (command.op === 'quit') break;
}
process.exit(0);
