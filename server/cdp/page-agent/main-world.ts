// The one part of the page agent that runs in the page's own world (scripts/build-page-agent.mjs bundles it
// apart, dist/server/cdp/main-world.bundle.js; cdp/tab/tab.ts has it evaluated at every document's start, and
// at once in documents already loaded): it answers the page agent's questions that only that world can,
// a code editor's model (code-editors.ts). Nothing is left on the page's globals; once per document.
import { answerCodeModelQuestions } from './code-editors.js';

const mark = Symbol.for('verity.main-world');
const doc = document as Document & { [mark]?: true };
if (!doc[mark]) {
  Object.defineProperty(doc, mark, { value: true });
  answerCodeModelQuestions();
}
