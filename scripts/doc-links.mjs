// The links of the package's Markdown, followed as a reader of the installed package follows them: from
// README.md, every relative link (and each page it reaches, in turn) must name a file the package ships,
// and an anchor must name a heading of that page (GitHub's slugs); no page may cite a file that is not in
// the repository (the project's working notes). Used by check-package.mjs on the unpacked tarball and by
// test/docs.test.ts on the source tree.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens (and -1, -2 … for repeats). */
export function slug(heading) {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Every anchor a Markdown page offers: its headings' slugs (repeats numbered) and explicit `<a id>`/`name`. */
export function anchors(markdown) {
  const seen = new Map();
  const out = new Set();
  const text = markdown.replace(/```[\s\S]*?```/g, '');
  for (const m of text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  for (const m of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(m[1]);
  return out;
}

/** The Markdown links of a page (outside code blocks and code spans): [text](target). */
export function links(markdown) {
  const text = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map(m => m[1]);
}

/** Files of the working notes a page must not cite (they are not in the repository). */
const NOT_IN_REPOSITORY = /\b(real-account|incidents)\.md\b/;

/**
 * Follows every relative link from `start` (a path under `root`) through the Markdown pages it reaches.
 * Returns the problems (page: link: why) and the pages visited.
 */
export function checkLinks(root, start = 'README.md') {
  const problems = [];
  const visited = new Set();
  const queue = [start];
  while (queue.length) {
    const page = queue.shift();
    if (visited.has(page)) continue;
    visited.add(page);
    const markdown = readFileSync(join(root, page), 'utf8');
    if (NOT_IN_REPOSITORY.test(markdown)) problems.push(`${page}: cites ${NOT_IN_REPOSITORY.exec(markdown)[0]}, which is not in the repository`);
    for (const link of links(markdown)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto: …
      const [file, anchor] = link.split('#');
      const target = file ? normalize(join(dirname(page), decodeURIComponent(file))) : page;
      if (target.startsWith('..')) {
        problems.push(`${page}: ${link}: leaves the package`);
        continue;
      }
      if (!existsSync(join(root, target))) {
        problems.push(`${page}: ${link}: ${target} is not there`);
        continue;
      }
      if (target.endsWith('.md')) {
        if (anchor && !anchors(readFileSync(join(root, target), 'utf8')).has(anchor))
          problems.push(`${page}: ${link}: no heading #${anchor} in ${target}`);
        queue.push(relative(root, join(root, target)));
      }
    }
  }
  return { problems, visited: [...visited] };
}
