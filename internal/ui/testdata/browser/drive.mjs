// Drives `acolyte ui` in Debian's chromium through playwright-core, as a
// person would: open the printed URL, search, filter, edit (a secret first,
// which is refused), forget, review the distilled observations, look at the
// charts. browser_test.go starts the server, runs this, and then checks
// every change in .acolyte/memories.jsonl.
//
//	node drive.mjs URL SCREENSHOT_DIR
import { chromium } from 'playwright-core';
import path from 'node:path';

const [url, shots] = process.argv.slice(2);
const problems = [];
const check = (ok, what) => { if (!ok) problems.push(what); };

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('dialog', async (d) => { problems.push(`a dialog opened: ${d.message()}`); await d.dismiss(); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('request', (r) => { if (!r.url().startsWith(new URL(url).origin)) problems.push(`a request left the server: ${r.url()}`); });
  const shot = (name) => page.screenshot({ path: path.join(shots, name), fullPage: false });
  const card = (text) => page.locator('article.memory', { hasText: text });
  const actionsOf = (text) => card(text).locator('xpath=following-sibling::div[contains(@class,"actions")][1]');

  // Open the printed URL: the token becomes a cookie and leaves the address bar.
  await page.goto(url);
  check(!page.url().includes('token='), `the token stayed in the address bar: ${page.url()}`);
  check((await page.locator('#summary').textContent()).includes('memories'), 'the main view shows no summary');

  // The hostile memory is text: no script ran, no image was made, every escape is visible.
  const hostile = card('Deploy notes');
  const text = await hostile.locator('pre.content').textContent();
  check(text.includes('<script>alert(1)</script>'), `the hostile text is not shown whole: ${text}`);
  check(text.includes('<img src=x onerror=alert(2)>'), 'the <img> is not shown as text');
  check(text.includes('\\x1b]52;c;'), 'the OSC 52 escape is not shown as text');
  check(await page.evaluate(() => document.querySelectorAll('script, article img, iframe').length) === 0, 'the page holds a script, an image or a frame');
  await shot('main.png');

  // Search ranks as the CLI does and says why each result matched.
  await page.fill('input[name=q]', 'how do I reach the staging db');
  await Promise.all([page.waitForURL(/q=/), page.click('#filters button[type=submit]')]);
  const first = page.locator('article.memory').first();
  check((await first.locator('pre.content').textContent()).includes('bastion-2'), 'the search does not put the bastion memory first');
  check((await first.locator('.score').textContent()).startsWith('score '), 'the first result shows no score');
  check((await first.locator('.why').textContent()).includes('staging'), 'the first result does not say which words matched');
  await shot('search.png');

  // Filters: rules only, then one topic of the tree.
  await page.goto(new URL('/', url).href);
  await page.selectOption('select[name=kind]', 'rule');
  await Promise.all([page.waitForURL(/kind=rule/), page.click('#filters button[type=submit]')]);
  const kinds = await page.locator('article.memory').evaluateAll((as) => as.map((a) => a.dataset.kind));
  check(kinds.length === 3 && kinds.every((k) => k === 'rule'), `kind=rule shows ${kinds}`);
  check((await page.locator('.actions .derived').first().textContent()).includes('AGENTS.md'), 'a rule does not point to its file');
  await page.goto(new URL('/', url).href);
  await Promise.all([page.waitForURL(/topic=ops/), page.click('.topics a:text-is("ops")')]);
  const topics = await page.locator('article.memory .topic').allTextContents();
  check(topics.length > 0 && topics.every((t) => t === 'ops' || t.startsWith('ops / ')), `topic=ops shows ${topics}`);
  await shot('filter.png');

  // Edit: a credential is refused and not sent back; then a real edit.
  await page.goto(new URL('/', url).href);
  await actionsOf('two approvals').locator('a.edit').click();
  await page.fill('textarea[name=content]', 'Deploys need two approvals; token gh' + 'p_kJGcW3ALRUn542ysZySZeuFiEXpVdE58zHYp');
  await page.click('button.save');
  const refusal = await page.locator('.error').textContent();
  check(refusal.includes('secret'), `the secret edit was not refused: ${refusal}`);
  check(!(await page.content()).includes('kJGcW3ALRUn542'), 'the refusal page holds the credential');
  await shot('edit-refused.png');
  await page.fill('textarea[name=content]', 'Production deploys need three approvals');
  await Promise.all([page.waitForURL((u) => !u.pathname.startsWith('/edit/')), page.click('button.save')]);
  check(await card('three approvals').count() === 1, 'the edit is not in the list');

  // Forget, after a confirmation.
  await actionsOf('Espresso').locator('a.forget').click();
  check((await page.locator('h1').textContent()).includes('Forget'), 'forget asks no confirmation');
  await shot('forget.png');
  await Promise.all([page.waitForURL((u) => !u.pathname.startsWith('/forget/')), page.click('button.confirm')]);
  check(await card('Espresso').count() === 0, 'the forgotten memory is still listed');

  // Review what distill added: keep one, forget the other.
  await page.click('#nav-review');
  const queued = await page.locator('article.memory').count();
  check(queued === 2, `the review queue holds ${queued} observations, want 2`);
  check((await page.locator('article.memory .from').first().textContent()).includes('distilled'), 'the queue does not say the observations were distilled');
  await shot('review.png');
  await Promise.all([page.waitForLoadState('load'), actionsOf('integration tests locally').locator('button.keep').click()]);
  await page.waitForURL(/\/review$/);
  await actionsOf('CI caches').locator('a.forget').click();
  await Promise.all([page.waitForURL(/\/review$/), page.click('button.confirm')]);
  check((await page.locator('#summary').textContent()).includes('Nothing to review'), 'the queue is not empty after the review');

  // Add a memory for some files; its card says where it applies, and
  // the path filter finds it by the folder (issue 36).
  await page.click('#nav-add');
  await page.fill('textarea[name=content]', 'Every migration has a down step');
  await page.fill('textarea[name=globs]', 'db/migrations/**');
  await Promise.all([page.waitForURL((u) => !u.pathname.startsWith('/add')), page.click('button.save')]);
  await page.goto(new URL('/?path=' + encodeURIComponent('db/**'), url).href);
  const added = card('down step');
  check(await added.count() === 1, 'the added memory is not found by the path filter db/**');
  check((await added.locator('dd.globs').textContent()).includes('db/migrations/**'), 'the added memory\'s card does not show its globs');
  check((await added.locator('.from').textContent()).includes('acolyte ui'), 'the added memory does not say it came from the page');
  await shot('add.png');

  // At 420 px wide nothing is cut off: the page does not scroll sideways
  // and every card fits the window.
  await page.setViewportSize({ width: 420, height: 900 });
  await page.goto(new URL('/', url).href);
  const widths = await page.evaluate(() => ({
    page: document.documentElement.scrollWidth,
    cards: [...document.querySelectorAll('article.memory')].map((a) => a.getBoundingClientRect().right),
  }));
  check(widths.page <= 420, `at 420 px the page is ${widths.page} px wide`);
  check(widths.cards.length > 0 && widths.cards.every((r) => r <= 420), `at 420 px a card reaches ${Math.max(...widths.cards)} px`);
  await shot('narrow.png');
  await page.setViewportSize({ width: 1280, height: 900 });

  // Charts are server-drawn SVG.
  await page.goto(new URL('/charts', url).href);
  check(await page.locator('svg.chart').count() === 3, 'the charts page does not hold three charts');
  const froms = await page.locator('article.memory .from').allTextContents();
  check(froms.length > 0 && froms.every((f) => f.trim() !== ''), 'a card on the charts has an empty from row');
  await shot('charts.png');
} finally {
  await browser.close();
}
if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log('ok');
