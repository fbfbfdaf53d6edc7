// GTK 4 drop-downs as AT-SPI shows them: labels under a node, and the value a drop-down shows. Shared by
// the tree (a drop-down's value in a snapshot) and typing (set_value on one), below both.
import { IFACE, type Atspi } from './model.js';
import { ROLE } from './roles.js';

/** Labels under `ref` in document order (bounded walk). */
export async function labelsUnder(
  atspi: Atspi,
  ref: { bus: string; path: string },
  limit = 200,
): Promise<Array<{ ref: { bus: string; path: string }; role: number; name: string }>> {
  const out: Array<{ ref: { bus: string; path: string }; role: number; name: string }> = [];
  const visit = async (r: { bus: string; path: string }, depth: number): Promise<void> => {
    if (out.length >= limit || depth > 12) return;
    for (const child of await atspi.children(r).catch(() => [])) {
      const [[role]] = [await atspi.call(child, IFACE.accessible, 'GetRole').catch(() => [0])];
      out.push({
        ref: child,
        role: Number(role),
        name: String(await atspi.prop(child, IFACE.accessible, 'Name').catch(() => '')),
      });
      await visit(child, depth + 1);
    }
  };
  await visit(ref, 0);
  return out;
}

/** What a GTK 4 drop-down shows: the last label of its button (the first is its "(None)" placeholder). */
export async function dropDownValue(atspi: Atspi, el: { bus: string; path: string }): Promise<string | null> {
  const [button] = await atspi.children(el);
  if (!button) return null;
  const labels = (await labelsUnder(atspi, button)).filter((n) => n.role === ROLE.label);
  return labels.length ? labels[labels.length - 1].name : null;
}
