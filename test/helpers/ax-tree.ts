// Chrome's own accessibility-tree role and name for each element of a Verity tab snapshot, read on the
// test's independent CDP connection: the same DOM nodes Verity listed (taken from its page agent's list in
// every frame's isolated world, cross-origin frames included), each asked of Accessibility.getPartialAXTree.
import type { CDPSession, Page } from 'puppeteer-core';

export interface ChromeNode {
  /** Chrome's computed role ("none" when the node is ignored in the tree) and name. */
  role: string;
  name: string;
  ignored: boolean;
  nodeName: string;
  backendNodeId: number;
  /** For an <iframe>: the frame it holds. */
  childFrameId?: string;
  /** Where it sits, for messages: frame id and index in that frame's list. */
  frameId: string;
  local: number;
}

const WORLD = 'verity'; // the page agent's isolated world (server/cdp/tab/tab.ts)
const MAX = 5000;

/**
 * Chrome's node for each element of snapshot `snapshotId`, in Verity's global order (a frame's elements
 * right after the <iframe> that holds them). Every session (the tab and each out-of-process frame) is a
 * fresh one of the test's own, detached at the end.
 */
export async function chromeNodesOf(page: Page, snapshotId: string): Promise<ChromeNode[]> {
  const sessions: CDPSession[] = [await page.createCDPSession()];
  // The page's own browser context: in a shared Chromium the other contexts' frames are other files' pages.
  for (const t of page.browserContext().targets()) {
    const info = (t as unknown as { _getTargetInfo(): { type: string } })._getTargetInfo();
    if (info.type === 'iframe') sessions.push(await t.createCDPSession());
  }
  const lists = new Map<string, ChromeNode[]>();
  let mainFrameId = '';
  try {
    for (const session of sessions) {
      const contexts: Array<{ id: number; name: string; auxData?: { frameId?: string } }> = [];
      session.on('Runtime.executionContextCreated', (e: any) => contexts.push(e.context));
      await session.send('Runtime.enable'); // existing contexts are reported before this returns
      const { frameTree } = await session.send('Page.getFrameTree');
      if (session === sessions[0]) mainFrameId = frameTree.frame.id;
      for (const ctx of contexts.filter((c) => c.name === WORLD && c.auxData?.frameId)) {
        const frameId = ctx.auxData!.frameId!;
        const list = await nodesInWorld(session, ctx.id, frameId, snapshotId).catch(() => []);
        if (list.length) lists.set(frameId, list);
      }
    }
  } finally {
    await Promise.all(sessions.map((s) => s.detach().catch(() => undefined)));
  }
  const ordered: ChromeNode[] = [];
  const emit = (frameId: string) => {
    for (const node of lists.get(frameId) ?? []) {
      ordered.push(node);
      if (node.childFrameId) emit(node.childFrameId);
    }
  };
  emit(mainFrameId);
  return ordered;
}

async function nodesInWorld(
  session: CDPSession,
  contextId: number,
  frameId: string,
  snapshotId: string,
): Promise<ChromeNode[]> {
  const indices = JSON.stringify(Array.from({ length: MAX }, (_, i) => i));
  const { result } = await session.send('Runtime.evaluate', {
    expression: `globalThis.__verity.elementsAt(${JSON.stringify(snapshotId)}, ${indices})`,
    contextId,
  });
  if (!result.objectId) return [];
  const { result: props } = await session.send('Runtime.getProperties', {
    objectId: result.objectId,
    ownProperties: true,
  });
  const handles = props
    .filter((p) => /^\d+$/.test(p.name) && p.value?.objectId)
    .sort((a, b) => Number(a.name) - Number(b.name))
    .map((p) => p.value!.objectId!);
  return Promise.all(
    handles.map(async (objectId, local) => {
      const { node } = await session.send('DOM.describeNode', { objectId });
      const { nodes } = await session.send('Accessibility.getPartialAXTree', { objectId, fetchRelatives: false });
      const ax = (nodes as any[]).find((n) => n.backendDOMNodeId === node.backendNodeId) ?? nodes[0];
      return {
        role: ax?.ignored ? 'none' : String(ax?.role?.value ?? ''),
        name: String(ax?.name?.value ?? ''),
        ignored: !!ax?.ignored,
        nodeName: node.nodeName.toLowerCase(),
        backendNodeId: node.backendNodeId,
        childFrameId: node.frameId && node.frameId !== frameId ? node.frameId : undefined,
        frameId,
        local,
      };
    }),
  );
}
