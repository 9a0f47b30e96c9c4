// tests/metrics/status_page.mjs — the status page in headless Chromium
// (called by status_page.sh with playwright-core on NODE_PATH's parent):
//   node status_page.mjs PLAYWRIGHT_DIR URL TOPIC GROUP HOSTILE_GROUP PNG PRODUCE_CMD
// Loads URL, checks the page shows TOPIC and both groups (the hostile name
// as text, no script of it run), notes partition 0's high watermark, runs
// PRODUCE_CMD (a shell command), waits (bounded) for the page's own
// refresh to show a higher one, and saves a full-page PNG screenshot.
import { createRequire } from 'node:module';
import { execSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [pwDir, url, topic, group, hostile, png, produce] = process.argv.slice(2);
const require = createRequire(join(pwDir, 'node_modules', 'x.js'));
const { chromium } = require('playwright-core');

function fail(msg) {
	console.error('FAIL: ' + msg);
	process.exitCode = 1;
	throw new Error(msg);
}

const profile = mkdtempSync(join(tmpdir(), 'kaas-chromium-'));
// a new, empty profile (Playwright passes it as --user-data-dir)
const browser = await chromium.launchPersistentContext(profile, {
	executablePath: '/usr/bin/chromium',
	headless: true,
	timeout: 60000,
	viewport: { width: 1200, height: 900 },
	args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
	       '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
let scriptRan = false;
try {
	const page = await browser.newPage();
	page.on('dialog', async d => { scriptRan = true; await d.dismiss(); });
	const resp = await page.goto(url, { timeout: 20000 });
	if (!resp || resp.status() !== 200)
		fail(`GET ${url}: ${resp ? resp.status() : 'no response'}`);
	const title = await page.title();
	if (!/^kaas broker \d+$/.test(title))
		fail(`title '${title}'`);
	const body = await page.innerText('body');
	for (const want of [topic, group, hostile])
		if (!body.includes(want))
			fail(`the page does not show '${want}'`);
	if (await page.locator('h3 script, h3 b').count() !== 0)
		fail('the hostile group name became markup');
	// partition 0 of TOPIC: the first row after the topic's name cell
	const hw = async () => {
		const row = page.locator('tr', { has: page.locator('td b', { hasText: topic }) }).first();
		return Number((await row.locator('td[data-hw]').innerText()).trim());
	};
	const before = await hw();
	if (!(before >= 0))
		fail(`no high watermark for ${topic}/0 (${before})`);
	execSync(produce, { stdio: 'inherit', timeout: 30000 });
	// the page refreshes itself (meta refresh, 5 s): wait for the new number
	let after = before;
	const end = Date.now() + 20000;
	while (after <= before && Date.now() < end) {
		await page.waitForEvent('load', { timeout: 8000 }).catch(() => {});
		after = await hw().catch(() => before);
	}
	if (after <= before)
		fail(`the high watermark of ${topic}/0 stayed ${before} after the produce`);
	if (scriptRan)
		fail('a script from a group name ran');
	await page.screenshot({ path: png, fullPage: true });
	console.log(`status page: ${topic}/0 high watermark ${before} -> ${after}; screenshot ${png}`);
} finally {
	await browser.close();
	rmSync(profile, { recursive: true, force: true });
}
