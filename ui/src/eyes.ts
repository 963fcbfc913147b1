// "Done looking": taking `needs_eyes` off an entry, from the main window
// (the detail, Needs eyes) or the quick box (a reply to a flagged note).

import { EngineError } from "./api";
import { entries } from "./services";

/** Takes the `needs_eyes` tag off an entry, as it is now (an agent may
 *  have changed it since it was drawn). */
export async function doneLooking(id: string): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const { entry } = await entries.get({ id });
    if (!entry.tags.includes("needs_eyes")) return;
    try {
      await entries.update({ id, tags: entry.tags.filter((t) => t !== "needs_eyes"), if_version: entry.version });
      return;
    } catch (err) {
      if (!(err instanceof EngineError && err.code === -32002)) throw err;
    }
  }
}
