import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

/** axe-core's browser build, from the pinned npm package. */
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly targets: string[];
}

/**
 * Runs axe (WCAG 2.0/2.1/2.2 A and AA, and best practices) on the page as it is now. It is injected through the
 * DevTools protocol, which the page's strict CSP does not govern, so the console's own CSP stays as served.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.evaluate(AXE);
  return page.evaluate(`axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] },
      resultTypes: ['violations'],
    })
    .then((r) => r.violations.map((v) => ({
      id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => String(n.target)),
    })))`);
}

/** How far the page reaches past the viewport's right edge (0 when nothing sticks out). */
export async function overflowPx(page: Page): Promise<number> {
  return page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
}

/** The elements whose right edge is past the viewport, for a readable failure. */
export async function overflowing(page: Page): Promise<string[]> {
  return page.evaluate(`[...document.querySelectorAll('main *')]
    .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
    .slice(0, 5).map((e) => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))`);
}

/** The focused element: tag, role-ish text, and the accessible label when set. */
export async function focused(
  page: Page,
): Promise<{ tag: string; text: string; label: string | null; inside: string | null }> {
  return page.evaluate(`(() => {
    const e = document.activeElement;
    return { tag: e.tagName, text: (e.textContent || '').trim().slice(0, 80), label: e.getAttribute('aria-label'),
      inside: e.closest('[aria-label]') ? e.closest('[aria-label]').getAttribute('aria-label') : null };
  })()`);
}
