import { chromium } from "playwright-core";
const [,, file, out, sel, idx] = process.argv;
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox", "--headless", "--disable-gpu"] });
const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
await page.goto("file://" + file);
await page.locator(sel).nth(Number(idx ?? 0)).screenshot({ path: out });
await browser.close();
